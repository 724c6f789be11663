#include "server/content.hpp"

#include <stdexcept>

#include "protocol/json_writer.hpp"
#include "protocol/raw_json.hpp"

namespace toolport {

namespace content {

namespace {
// Built key by key, not from an initializer list (a temporary array of pairs, checked to look
// like an object and copied over: ~2 % of a call's CPU), in key order with the end as hint,
// so that each member goes in after one comparison.
Json text_block(std::string text) {
    Json block = Json::object();
    auto& members = block.get_ref<Json::object_t&>();
    members.emplace_hint(members.end(), "text", std::move(text));
    members.emplace_hint(members.end(), "type", "text");
    return block;
}
}  // namespace

Json text(std::string_view text) { return text_block(std::string(text)); }

Json image(std::string_view base64_data, std::string_view mime_type) {
    return {{"type", "image"}, {"data", std::string(base64_data)}, {"mimeType", std::string(mime_type)}};
}

Json audio(std::string_view base64_data, std::string_view mime_type) {
    return {{"type", "audio"}, {"data", std::string(base64_data)}, {"mimeType", std::string(mime_type)}};
}

Json resource_link(std::string_view uri, std::string_view name, std::string_view mime_type,
                   std::string_view description) {
    Json j = {{"type", "resource_link"}, {"uri", std::string(uri)}, {"name", std::string(name)}};
    if (!mime_type.empty()) j["mimeType"] = std::string(mime_type);
    if (!description.empty()) j["description"] = std::string(description);
    return j;
}

Json embedded_text_resource(std::string_view uri, std::string_view text, std::string_view mime_type) {
    return {{"type", "resource"},
            {"resource", {{"uri", std::string(uri)}, {"mimeType", std::string(mime_type)}, {"text", std::string(text)}}}};
}

Json embedded_blob_resource(std::string_view uri, std::string_view base64_blob, std::string_view mime_type) {
    return {{"type", "resource"},
            {"resource",
             {{"uri", std::string(uri)}, {"mimeType", std::string(mime_type)}, {"blob", std::string(base64_blob)}}}};
}

}  // namespace content

ToolResult ToolResult::text(std::string_view text) {
    ToolResult r;
    r.add(content::text(text));
    return r;
}

ToolResult ToolResult::error(std::string_view message) {
    ToolResult r = text(message);
    r.is_error = true;
    return r;
}

ToolResult ToolResult::structured(Json value) {
    ToolResult r;
    r.add(content::text_block(value.dump(-1, ' ', false, Json::error_handler_t::replace)));  // the text moved in
    r.structured_content = std::move(value);
    return r;
}

Json ToolResult::to_json() const& {
    Json j = Json::object();
    j["content"] = content;
    if (!structured_content.is_null()) j["structuredContent"] = structured_content;
    if (is_error) j["isError"] = true;
    if (!meta.is_null()) j["_meta"] = meta;
    return j;
}

Json ToolResult::to_json() && {
    // In key order ("_meta" < "content" < "isError" < "structuredContent") with the end as
    // hint: no lookups, no key strings built for them (every call's reply).
    Json j = Json::object();
    auto& members = j.get_ref<Json::object_t&>();
    if (!meta.is_null()) members.emplace_hint(members.end(), "_meta", std::move(meta));
    members.emplace_hint(members.end(), "content", std::move(content));
    if (is_error) members.emplace_hint(members.end(), "isError", true);
    if (!structured_content.is_null())
        members.emplace_hint(members.end(), "structuredContent", std::move(structured_content));
    return j;
}

void ToolResult::expand_raw_parts() {
    protocol::expand_raw_json(content);
    protocol::expand_raw_json(structured_content);
}

std::string ToolResult::dump() const {
    // The members in the order of to_json()'s (sorted) object keys, so the text is the
    // same as to_json().dump() without copying the content into a new object first.
    // Written by protocol::write_json (nlohmann's text, byte for byte), which also writes
    // raw JSON parts as the text they hold.
    std::string out;
    out += '{';
    if (!meta.is_null()) {
        out += "\"_meta\":";
        protocol::write_json(meta, out);
        out += ',';
    }
    out += "\"content\":";
    protocol::write_json(content, out);
    if (is_error) out += ",\"isError\":true";
    if (!structured_content.is_null()) {
        out += ",\"structuredContent\":";
        protocol::write_json(structured_content, out);
    }
    out += '}';
    return out;
}

namespace {
// Both from_json: `Value` is const Json (copies the parts) or Json (moves them).
template <typename Value>
ToolResult result_from(Value& value) {
    if (!value.is_object()) throw std::invalid_argument("a tool result must be an object");
    ToolResult r;
    if (auto it = value.find(std::string_view("content")); it != value.end()) {
        // Raw JSON (a gateway's, passed on unread) is an array when its text opens one.
        const bool array = it->is_array() || protocol::raw_json_text(*it).starts_with('[');
        if (!array) throw std::invalid_argument("a tool result's content must be an array");
        r.content = std::move(*it);
    }
    if (auto it = value.find(std::string_view("structuredContent")); it != value.end())
        r.structured_content = std::move(*it);
    if (auto it = value.find(std::string_view("isError")); it != value.end())
        r.is_error = it->is_boolean() && it->template get<bool>();
    if (auto it = value.find(std::string_view("_meta")); it != value.end() && it->is_object()) r.meta = std::move(*it);
    return r;
}
}  // namespace

ToolResult ToolResult::from_json(const Json& value) { return result_from(value); }

ToolResult ToolResult::from_json(Json&& value) { return result_from(value); }

}  // namespace toolport
