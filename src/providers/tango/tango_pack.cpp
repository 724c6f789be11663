#include "providers/tango/tango_pack.hpp"

#include <algorithm>
#include <vector>

#include "providers/secret_redaction.hpp"
#include "providers/tango/validation.hpp"
#include "server/content.hpp"
#include "server/request_context.hpp"

namespace toolport::tango {

namespace {

using Clock = std::chrono::steady_clock;

// `schema` (an object schema, or an anyOf of them) with every one of its properties
// required: the normalizers always write each field (null when Tango had no value), so a
// client may rely on the keys being there.
Json all_required(Json schema) {
    if (schema.contains("anyOf")) {
        for (auto& branch : schema["anyOf"]) branch = all_required(std::move(branch));
        return schema;
    }
    if (!schema.contains("properties")) return schema;
    Json required = Json::array();
    for (const auto& [name, property] : schema["properties"].items()) required.push_back(name);
    schema["required"] = std::move(required);
    return schema;
}

// The envelope around `record_schema` (the structuredContent of every tango tool).
Json envelope_schema(Json record_schema) {
    return all_required(object_schema({
        {"data", {{"type", "array"}, {"items", all_required(std::move(record_schema))}}},
        {"total", {{"type", "integer"}, {"description", "Every match the API counted, not only this page"}}},
        {"returned", {{"type", "integer"}}},
        {"filters", {{"type", "object"}, {"description", "The filters as applied (after validation and mapping)"}}},
        {"pagination", all_required(object_schema({{"limit", {{"type", "integer"}}},
                                                   {"has_more", {{"type", "boolean"}}},
                                                   {"next_cursor", nullable("string")}}))},
        {"execution", all_required(object_schema({{"duration_ms", {{"type", "integer"}}},
                                                  {"cached", {{"type", "boolean"}}},
                                                  {"api_calls", {{"type", "integer"}}}}))},
    }));
}

// An object schema with every property required, or null (a part Tango may leave out).
Json nullable_object(Json properties) {
    Json schema = all_required(object_schema(std::move(properties)));
    schema["type"] = Json::array({"object", "null"});
    return schema;
}

}  // namespace

Json portable_schema(Json schema) {
    if (schema.is_array()) {
        for (auto& item : schema) item = portable_schema(std::move(item));
        return schema;
    }
    if (!schema.is_object()) return schema;
    // [X, "null"] → X.
    if (auto type = schema.find("type"); type != schema.end() && type->is_array()) {
        Json types = Json::array();
        for (const auto& t : *type) {
            if (t != "null") types.push_back(t);
        }
        *type = types.size() == 1 ? types[0] : types;
    }
    // A property that may have been null is left out instead: no longer required.
    if (auto properties = schema.find("properties"); properties != schema.end() && properties->is_object()) {
        std::vector<std::string> optional;
        for (const auto& [name, property] : properties->items()) {
            auto type = property.find("type");
            if (type != property.end() && type->is_array() &&
                std::find(type->begin(), type->end(), Json("null")) != type->end()) {
                optional.push_back(name);
            }
        }
        if (auto required = schema.find("required"); required != schema.end() && required->is_array()) {
            Json kept = Json::array();
            for (const auto& name : *required) {
                if (std::find(optional.begin(), optional.end(), name.get<std::string>()) == optional.end())
                    kept.push_back(name);
            }
            *required = std::move(kept);
        }
    }
    for (auto& [key, child] : schema.items()) {
        if (key == "properties" && child.is_object()) {
            for (auto& [name, property] : child.items()) property = portable_schema(std::move(property));
        } else if (key == "items" || key == "anyOf" || key == "oneOf" || key == "allOf" ||
                   key == "additionalProperties") {
            child = portable_schema(std::move(child));
        }
    }
    return schema;
}

Json part_error(const ToolError& error) {
    const Json fields = error.to_json();
    Json out = Json::object();
    for (const char* key : {"error_code", "error", "suggestion", "transient", "retry_after_ms"}) {
        if (auto it = fields.find(key); it != fields.end()) out[key] = *it;
    }
    return out;
}

Json part_error_schema(const std::string& description) {
    Json schema = object_schema(
        {{"error_code", {{"type", "string"}, {"description", "e.g. NOT_FOUND, UPSTREAM_ERROR"}}},
         {"error", {{"type", "string"}, {"description", "What Tango answered"}}},
         {"suggestion", {{"type", "string"}}},
         {"transient", {{"type", "boolean"}, {"description", "May succeed if asked again later"}}},
         {"retry_after_ms", {{"type", "integer"}}}});
    schema["required"] = {"error_code", "error", "suggestion", "transient"};
    schema["description"] = description;
    return schema;
}

Json nullable(const char* type) { return Json{{"type", Json::array({type, "null"})}}; }

Json coded_schema() { return nullable_object({{"code", nullable("string")}, {"description", nullable("string")}}); }

Json place_schema() {
    return nullable_object({{"city", nullable("string")},
                            {"state", nullable("string")},
                            {"country", nullable("string")},
                            {"zip", nullable("string")}});
}

Json agency_schema() {
    return nullable_object({{"name", nullable("string")},
                            {"code", nullable("string")},
                            {"department", nullable("string")},
                            {"office", required_object({{"name", nullable("string")}, {"code", nullable("string")}})}});
}

Json required_object(Json properties) { return all_required(object_schema(std::move(properties))); }

Json string_property(const std::string& description) { return {{"type", "string"}, {"description", description}}; }

Json api_key_property() {
    return string_property(
        "Tango API key. Optional when the server has TANGO_API_KEY or the client sends the "
        "X-Tango-Api-Key header. Never echoed back or logged.");
}

Json limit_property(int fallback, int max) {
    return {{"type", "integer"},
            {"minimum", 1},
            {"maximum", max},
            {"default", fallback},
            {"description", "How many records to return (1-" + std::to_string(max) + ", default " +
                                std::to_string(fallback) + "). Use smaller values for faster answers."}};
}

Json fiscal_year_property(const std::string& description) {
    return {{"type", "integer"},
            {"minimum", 1990},
            {"maximum", 2100},
            {"examples", {kExampleFiscalYear}},
            {"description", description + ". Example: " + std::to_string(kExampleFiscalYear)}};
}

Json with_example(Json property, Json example) {
    property["examples"] = Json::array({std::move(example)});
    return property;
}

Json cursor_property(const std::string& how) {
    return string_property(
        "Continue a previous search: the pagination.next_cursor of its answer, with the same filters. " + how);
}

Json object_schema(Json properties) { return {{"type", "object"}, {"properties", std::move(properties)}}; }

providers::ToolDeclaration tango_tool(TangoPack& pack, std::string name, std::string title, std::string description,
                                      Json input_schema, Json record_schema, ToolBody body) {
    providers::ToolDeclaration d;
    d.name = std::move(name);
    d.title = std::move(title);
    d.description = std::move(description);
    d.input_schema = std::move(input_schema);
    d.output_schema = portable_schema(envelope_schema(std::move(record_schema)));
    d.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = true};
    d.service = kService;
    d.paces_downstream = true;  // TangoCall paces every request
    d.handler = [&pack, body = std::move(body), output_schema = d.output_schema](RequestContext& ctx,
                                                                                 const Json& args) -> Task<ToolResult> {
        const auto started = Clock::now();
        if (!pack.http) {
            throw ToolError(ToolErrorCode::internal_error, "The tango pack has no HTTP client in this process");
        }
        TangoCall call(*pack.http, pack.settings, ctx, args);
        Json env = co_await body(call, args);
        env["execution"] = {{"duration_ms",
                             std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count()},
                            {"cached", false},
                            {"api_calls", call.requests()}};
        drop_nulls(env);  // as the output schema declares: a field without a value is left out
        // The server's own key never reaches a client, even where Tango echoes it.
        const bool redacted = providers::redact_json(env, {pack.settings.server_api_key});
        ToolResult result = ToolResult::structured(std::move(env));
        if (redacted) providers::check_redacted_output(result, output_schema, "the tool");
        result.meta = {{"downstream_api_calls", call.requests()}};
        co_return result;
    };
    d.on_cache_hit = [](ToolResult& result) {
        mark_cached(result.structured_content, std::chrono::milliseconds(0));
        result.content = Json::array();
        result.add(content::text(result.structured_content.dump(-1, ' ', false, Json::error_handler_t::replace)));
    };
    return d;
}

}  // namespace toolport::tango
