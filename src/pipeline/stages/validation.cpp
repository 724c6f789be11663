#include "pipeline/stages/validation.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "schema/argument_names.hpp"
#include "util/sanitize.hpp"

namespace toolport::pipeline {

namespace {

// JSON Pointer segments of an instance location ("/a/0/b~1c" → a, 0, b/c).
std::vector<std::string> pointer_segments(const std::string& pointer) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < pointer.size()) {
        if (pointer[i] != '/') break;
        auto end = pointer.find('/', i + 1);
        std::string seg = pointer.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1);
        std::string unescaped;
        for (std::size_t k = 0; k < seg.size(); ++k) {
            if (seg[k] == '~' && k + 1 < seg.size()) {
                unescaped += seg[k + 1] == '1' ? '/' : '~';
                ++k;
            } else {
                unescaped += seg[k];
            }
        }
        out.push_back(std::move(unescaped));
        if (end == std::string::npos) break;
        i = end;
    }
    return out;
}

bool is_index(const std::string& s) {
    return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "filters.date", "items[2].name": how a model would name the parameter.
std::string parameter_name(const std::vector<std::string>& path) {
    std::string name;
    for (const auto& seg : path) {
        if (is_index(seg) && !name.empty()) name += "[" + seg + "]";
        else name += (name.empty() ? "" : ".") + seg;
    }
    return name;
}

// The subschema that describes the value at `path`, following properties / items /
// prefixItems / additionalProperties (not $ref: the description, not the proof).
const Json* subschema_at(const Json& root, const std::vector<std::string>& path) {
    const Json* s = &root;
    for (const auto& seg : path) {
        if (!s->is_object()) return nullptr;
        const Json* next = nullptr;
        if (auto p = s->find("properties"); p != s->end() && p->is_object() && p->contains(seg)) {
            next = &(*p)[seg];
        } else if (is_index(seg)) {
            std::size_t index = std::stoul(seg);
            if (auto pi = s->find("prefixItems"); pi != s->end() && pi->is_array() && index < pi->size())
                next = &(*pi)[index];
            else if (auto it = s->find("items"); it != s->end() && it->is_object()) next = &*it;
        } else if (auto ap = s->find("additionalProperties"); ap != s->end() && ap->is_object()) {
            next = &*ap;
        }
        if (!next) return nullptr;
        s = next;
    }
    return s;
}

std::string first_type(const Json& schema) {
    auto t = schema.find("type");
    if (t == schema.end()) return "";
    if (t->is_string()) return t->get<std::string>();
    if (t->is_array()) {
        for (const auto& x : *t)
            if (x.is_string() && x != "null") return x.get<std::string>();
    }
    return "";
}

// A value the model can copy: the schema's own example, default, const or first enum
// value, else a plausible value of the right type and format.
Json example_for(const Json& schema) {
    if (!schema.is_object()) return nullptr;
    if (auto e = schema.find("examples"); e != schema.end() && e->is_array() && !e->empty()) return (*e)[0];
    if (auto d = schema.find("default"); d != schema.end()) return *d;
    if (auto c = schema.find("const"); c != schema.end()) return *c;
    if (auto e = schema.find("enum"); e != schema.end() && e->is_array() && !e->empty()) return (*e)[0];
    const std::string type = first_type(schema);
    const std::string format = schema.value("format", "");
    if (type == "string") {
        if (format == "date") return "2024-01-01";
        if (format == "date-time") return "2024-01-01T00:00:00Z";
        if (format == "time") return "12:00:00Z";
        if (format == "email") return "name@example.com";
        if (format == "uri" || format == "url") return "https://example.com/";
        if (format == "uuid") return "123e4567-e89b-12d3-a456-426614174000";
        return nullptr;  // no honest example for a free-form or patterned string
    }
    if (type == "integer") {
        auto min = schema.find("minimum");
        return (min != schema.end() && min->is_number()) ? Json(static_cast<long long>(std::ceil(min->get<double>())))
                                                         : Json(1);
    }
    if (type == "number") {
        auto min = schema.find("minimum");
        return (min != schema.end() && min->is_number()) ? *min : Json(1.5);
    }
    if (type == "boolean") return true;
    if (type == "array") {
        if (auto items = schema.find("items"); items != schema.end() && items->is_object()) {
            Json item = example_for(*items);
            if (!item.is_null()) return Json::array({item});
        }
        return Json::array();
    }
    return nullptr;
}

std::string dump_short(const Json& v) {
    return util::sanitize_for_message(v.dump(-1, ' ', false, Json::error_handler_t::replace), 200);
}

// "string (format: date)", "one of [\"a\", \"b\"]", "integer, minimum 1, maximum 100".
std::string describe(const Json& schema, const schema::ValidationError& error) {
    if (!schema.is_object()) return error.message;
    std::vector<std::string> parts;
    if (auto e = schema.find("enum"); e != schema.end()) parts.push_back("one of " + dump_short(*e));
    else if (auto c = schema.find("const"); c != schema.end()) parts.push_back("exactly " + dump_short(*c));
    else if (auto t = schema.find("type"); t != schema.end())
        parts.push_back(t->is_string() ? t->get<std::string>() : dump_short(*t));
    if (auto f = schema.find("format"); f != schema.end() && f->is_string())
        parts.push_back("format " + f->get<std::string>());
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string())
        parts.push_back("matching " + p->get<std::string>());
    for (const char* k : {"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "minLength", "maxLength",
                          "minItems", "maxItems"}) {
        if (auto v = schema.find(k); v != schema.end() && v->is_number())
            parts.push_back(fmt::format("{} {}", k, v->dump()));
    }
    if (parts.empty()) return error.message;
    std::string out;
    for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
    return util::sanitize_for_message(out, 400);
}

ToolError to_tool_error(const Json& input_schema, const schema::ValidationResult& result) {
    const auto& first = result.errors.front();
    auto path = pointer_segments(first.instance_location);
    const bool missing = first.keyword == "required" && first.expected.is_string();
    if (missing) path.push_back(first.expected.get<std::string>());
    const std::string parameter = parameter_name(path);
    const Json* sub = subschema_at(input_schema, path);

    std::string message;
    if (missing) {
        message = fmt::format("Missing required parameter: {}", parameter);
    } else if (parameter.empty()) {
        message = fmt::format("Invalid arguments: {}", first.message);
    } else {
        message = fmt::format("Invalid value for parameter {}: {}", parameter, first.message);
    }
    const std::size_t more = result.errors.size() - 1;
    if (more > 0) {
        message += fmt::format(" ({}{} more problem{}:", more, result.truncated ? "+" : "", more == 1 ? "" : "s");
        for (std::size_t i = 1; i < result.errors.size() && i < 4; ++i) {
            const auto& e = result.errors[i];
            auto name = parameter_name(pointer_segments(e.instance_location));
            if (e.keyword == "required" && e.expected.is_string()) {
                auto p = pointer_segments(e.instance_location);
                p.push_back(e.expected.get<std::string>());
                message += fmt::format(" {} is required;", parameter_name(p));
            } else {
                message += fmt::format(" {}: {};", name.empty() ? "arguments" : name, e.message);
            }
        }
        if (message.back() == ';') message.pop_back();
        message += ")";
    }

    ToolError error(missing ? ToolErrorCode::missing_parameter : ToolErrorCode::invalid_argument, message);
    if (!parameter.empty()) error.parameter(parameter);
    if (!missing) error.provided(first.actual);
    if (sub) {
        error.expected(describe(*sub, first));
        if (Json ex = example_for(*sub); !ex.is_null()) error.example(std::move(ex));
    } else {
        error.expected(first.message);
    }
    if (missing) {
        error.suggest(fmt::format("Add \"{}\" to the arguments and call again.", parameter));
    } else if (first.keyword == "additionalProperties" || first.keyword == "unevaluatedProperties") {
        error.suggest("Remove the parameters the tool does not define (see its inputSchema) and call again.");
    } else {
        error.suggest(fmt::format("Send {} as the tool's inputSchema describes and call again.",
                                  parameter.empty() ? "the arguments" : parameter));
    }
    return error;
}

std::string quoted_list(const std::vector<std::string>& names, std::size_t max = 40) {
    std::string out;
    for (std::size_t i = 0; i < names.size() && i < max; ++i) out += (i ? ", " : "") + names[i];
    if (names.size() > max) out += fmt::format(", … ({} in all)", names.size());
    return out;
}

// The refusal of argument names the tool does not define: each named, with the closest
// accepted name, and every accepted name listed. `parent`: where they are (empty: the
// arguments themselves; ["filters"]: inside the filters object).
ToolError unknown_arguments_error(const std::vector<std::string>& parent, const std::vector<std::string>& unknown,
                                  const Json& arguments, const std::vector<std::string>& accepted) {
    auto qualified = [&](const std::string& name) {
        auto path = parent;
        path.push_back(name);
        return parameter_name(path);
    };
    Json did_you_mean = Json::object();
    std::vector<std::string> hints;  // "award_date_start (for start_date)"
    std::string renames;
    for (const auto& name : unknown) {
        auto closest = schema::closest_names(name, accepted);
        if (closest.empty()) continue;
        did_you_mean[name] = closest.size() == 1 ? Json(closest.front()) : Json(closest);
        std::string options;
        for (std::size_t i = 0; i < closest.size(); ++i) {
            options += (i == 0 ? "" : (i + 1 == closest.size() ? " or " : ", ")) + ("\"" + closest[i] + "\"");
        }
        hints.push_back(unknown.size() == 1 ? options : fmt::format("{} for \"{}\"", options, name));
        renames += fmt::format("{}rename \"{}\" to {}", renames.empty() ? "" : "; ", qualified(name), options);
    }

    std::string names_text;
    for (const auto& name : unknown) names_text += (names_text.empty() ? "" : ", ") + ("\"" + qualified(name) + "\"");
    std::string message = fmt::format(
        "Unknown argument{} {}: the tool does not define {} (arguments it does not define are refused, not ignored)",
        unknown.size() == 1 ? "" : "s", util::sanitize_for_message(names_text, 400),
        unknown.size() == 1 ? "it" : "them");
    if (!hints.empty()) {
        std::string joined;
        for (const auto& h : hints) joined += (joined.empty() ? "" : "; ") + h;
        message += fmt::format(". Did you mean {}?", joined);
    }
    const char* stop = hints.empty() ? ". " : " ";
    message += accepted.empty() ? fmt::format("{}It accepts no arguments.", stop)
                                : fmt::format("{}Accepted: {}.", stop, quoted_list(accepted));

    ToolError error(ToolErrorCode::invalid_argument, message);
    error.parameter(qualified(unknown.front()));
    if (arguments.is_object()) {
        if (auto it = arguments.find(unknown.front()); it != arguments.end()) error.provided(*it);
    }
    error.expected(accepted.empty() ? std::string("no arguments") : "one of the names " + quoted_list(accepted));
    if (!renames.empty()) {
        renames[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(renames[0])));
        error.suggest(renames + ", then call again.");
    } else {
        error.suggest(accepted.empty() ? std::string("Call the tool with no arguments.")
                                       : fmt::format("Use only the accepted argument names ({}) and call again.",
                                                     quoted_list(accepted, 12)));
    }
    Json unknown_json = Json::array();
    for (const auto& name : unknown) unknown_json.push_back(qualified(name));
    error.detail("unknown_arguments", std::move(unknown_json));
    error.detail("accepted_arguments", accepted);
    if (!did_you_mean.empty()) error.detail("did_you_mean", std::move(did_you_mean));
    return error;
}

// The schema's own refusals of names (additionalProperties: false, unevaluatedProperties:
// false) as the unknown-arguments error, for the first object that has them.
std::optional<ToolError> unknown_from_schema(const Json& input_schema, const Json& arguments,
                                             const schema::ValidationResult& result) {
    std::optional<std::vector<std::string>> parent;
    std::vector<std::string> unknown;
    std::vector<std::string> accepted;
    for (const auto& e : result.errors) {
        if (e.keyword != "additionalProperties" && e.keyword != "unevaluatedProperties") continue;
        auto path = pointer_segments(e.instance_location);
        if (path.empty()) continue;
        std::string name = path.back();
        path.pop_back();
        if (!parent) {
            parent = path;
            if (e.expected.is_array()) {
                for (const auto& n : e.expected)
                    if (n.is_string()) accepted.push_back(n.get<std::string>());
            } else if (const Json* sub = subschema_at(input_schema, path)) {
                if (auto names = schema::accepted_argument_names(*sub)) accepted = *names;
            }
        }
        if (path != *parent) continue;
        if (std::find(unknown.begin(), unknown.end(), name) == unknown.end()) unknown.push_back(std::move(name));
    }
    if (!parent) return std::nullopt;
    const Json* where = &arguments;
    for (const auto& seg : *parent) {
        if (where->is_object() && where->contains(seg)) where = &(*where)[seg];
        else if (where->is_array() && is_index(seg) && std::stoul(seg) < where->size())
            where = &(*where)[std::stoul(seg)];
        else break;
    }
    return unknown_arguments_error(*parent, unknown, *where, accepted);
}

}  // namespace

std::shared_ptr<const schema::CompiledSchema> ValidationStage::schema_for(const std::shared_ptr<const ToolSpec>& tool) {
    if (tool->compiled_input_schema) return tool->compiled_input_schema;
    auto it = compiled_.find(tool.get());
    if (it != compiled_.end()) {
        if (auto alive = it->second.tool.lock(); alive && alive.get() == tool.get()) return it->second.schema;
    }
    // Forget definitions that were replaced or removed, so the map stays bounded.
    std::erase_if(compiled_, [](const auto& kv) { return kv.second.tool.expired(); });

    std::shared_ptr<const schema::CompiledSchema> compiled;
    try {
        compiled = std::make_shared<schema::CompiledSchema>(schema::compile(tool->input_schema));
    } catch (const schema::SchemaError& strict_error) {
        // Third-party servers send odd $schema values: retry leniently before giving up.
        try {
            schema::Options lenient;
            lenient.reject_unknown_dialect = false;
            compiled = std::make_shared<schema::CompiledSchema>(schema::compile(tool->input_schema, lenient));
        } catch (const schema::SchemaError& e) {
            // A schema we cannot compile must not make the tool unusable: its calls go on
            // unvalidated, and the operator hears about it once.
            spdlog::warn("tool {}: inputSchema cannot be compiled ({}); its arguments are not validated", tool->name,
                         util::sanitize_for_message(e.what(), 300));
        }
    }
    compiled_[tool.get()] = Entry{tool, compiled};
    return compiled;
}

std::optional<ToolError> ValidationStage::check(const std::shared_ptr<const ToolSpec>& tool, const Json& arguments) {
    // A name the tool does not define is refused before anything else: silently ignoring
    // it would answer a different question than the one asked (a filter dropped).
    if (tool->strict_arguments && arguments.is_object() && !arguments.empty()) {
        if (auto accepted = schema::accepted_argument_names(tool->input_schema)) {
            std::vector<std::string> unknown;
            for (auto it = arguments.begin(); it != arguments.end(); ++it) {
                if (std::find(accepted->begin(), accepted->end(), it.key()) == accepted->end())
                    unknown.push_back(it.key());
            }
            if (!unknown.empty()) return unknown_arguments_error({}, unknown, arguments, *accepted);
        }
    }
    auto schema = schema_for(tool);
    if (!schema || schema->is_valid(arguments)) return std::nullopt;
    auto result = schema->validate(arguments);
    if (auto unknown = unknown_from_schema(tool->input_schema, arguments, result)) return unknown;
    return to_tool_error(tool->input_schema, result);
}

Task<ToolResult> ValidationStage::handle(Call& call, const Next& next) {
    if (auto error = check(call.tool, call.arguments)) {
        if (auto& span = call.ctx.span(); span.recording()) {
            span.add_event("validation.failed", {{"toolport.error.code", std::string(code_name(error->code()))},
                                                 {"message", std::string(error->what())}});
        }
        throw *error;
    }
    co_return co_await next(call);
}

}  // namespace toolport::pipeline
