#include "client/tool_output.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/base64.hpp"
#include "util/json.hpp"

namespace toolport::client {

namespace {

std::string one_line(std::string_view text) {
    std::string line(text.substr(0, text.find('\n')));
    for (char& c : line) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    return line;
}

std::string string_field(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string pretty(const Json& value) { return value.dump(2, ' ', false, Json::error_handler_t::replace); }

// "67 bytes" of a base64 payload, or "invalid base64".
std::string decoded_size(const Json& data) {
    if (!data.is_string()) return "no data";
    auto bytes = util::base64_decode(data.get<std::string>());
    if (!bytes) return "invalid base64";
    return fmt::format("{} bytes", bytes->size());
}

}  // namespace

std::string tool_signature(const Json& tool) {
    std::string name = one_line(string_field(tool, "name"));
    const Json schema = tool.value("inputSchema", Json::object());
    if (!schema.is_object() || !schema.contains("properties") || !schema["properties"].is_object() ||
        schema["properties"].empty()) {
        return name;
    }
    const Json& properties = schema["properties"];
    std::vector<std::string> parameters;
    std::vector<std::string> required;
    if (auto r = schema.find("required"); r != schema.end() && r->is_array()) {
        for (const auto& item : *r) {
            if (item.is_string() && properties.contains(item.get<std::string>()))
                required.push_back(item.get<std::string>());
        }
    }
    // The required ones first, in the order the schema requires them; then the others.
    for (const auto& key : required) parameters.push_back(one_line(key));
    for (const auto& [key, value] : properties.items()) {
        if (std::find(required.begin(), required.end(), key) == required.end())
            parameters.push_back(one_line(key) + "?");
    }
    std::string out = name + "(";
    for (std::size_t i = 0; i < parameters.size(); ++i) out += (i ? ", " : "") + parameters[i];
    return out + ")";
}

std::string render_tool_list(const std::vector<Json>& tools) {
    std::vector<std::string> signatures;
    std::size_t width = 0;
    for (const auto& tool : tools) {
        signatures.push_back(tool_signature(tool));
        width = std::max(width, signatures.back().size());
    }
    width = std::min<std::size_t>(width, 40);
    std::string out;
    for (std::size_t i = 0; i < tools.size(); ++i) {
        std::string description = one_line(string_field(tools[i], "description"));
        if (description.empty()) {
            out += signatures[i] + "\n";
        } else {
            out += fmt::format("{:<{}}  {}\n", signatures[i], width, description);
        }
    }
    out += fmt::format("{} tool{}\n", tools.size(), tools.size() == 1 ? "" : "s");
    return out;
}

std::string render_content_block(const Json& block) {
    if (!block.is_object()) return "[malformed content block]";
    const std::string type = string_field(block, "type");
    if (type == "text") return string_field(block, "text");
    if (type == "image" || type == "audio") {
        std::string mime = string_field(block, "mimeType");
        return fmt::format("[{} {}, {}]", type, mime.empty() ? "of unknown type" : one_line(mime),
                           decoded_size(block.value("data", Json())));
    }
    if (type == "resource") {
        const Json resource = block.value("resource", Json::object());
        if (!resource.is_object()) return "[resource]";
        std::string uri = one_line(string_field(resource, "uri"));
        std::string mime = one_line(string_field(resource, "mimeType"));
        std::string size = resource.contains("text")
                               ? fmt::format("{} bytes of text", string_field(resource, "text").size())
                           : resource.contains("blob") ? decoded_size(resource["blob"])
                                                       : "no contents";
        return fmt::format("[resource {}{}, {}]", uri, mime.empty() ? "" : " " + mime, size);
    }
    if (type == "resource_link") {
        std::string mime = one_line(string_field(block, "mimeType"));
        return fmt::format("[resource link {} \"{}\"{}]", one_line(string_field(block, "uri")),
                           one_line(string_field(block, "name")), mime.empty() ? "" : " " + mime);
    }
    return fmt::format("[{} content]", type.empty() ? "untyped" : one_line(type));
}

RenderedCallResult render_call_result(const std::string& tool_name, const Json& result) {
    RenderedCallResult out;
    if (!result.is_object()) {
        out.text = pretty(result) + "\n";
        return out;
    }
    auto flag = result.find("isError");
    out.is_error = flag != result.end() && flag->is_boolean() && flag->get<bool>();
    const Json content = result.value("content", Json::array());
    const Json structured = result.value("structuredContent", Json());

    if (out.is_error) {
        std::string code = structured.is_object() ? string_field(structured, "error_code") : std::string();
        out.text = fmt::format("tool {} failed{}:\n", one_line(tool_name),
                               code.empty() ? "" : " [" + one_line(code) + "]");
    }
    // A tool that returns structuredContent usually repeats it as JSON in a text block (as
    // the specification suggests); it is printed once, pretty.
    bool repeated = false;
    if (content.is_array()) {
        for (const auto& block : content) {
            if (!structured.is_null() && block.is_object() && string_field(block, "type") == "text") {
                Json parsed = Json::parse(string_field(block, "text"), nullptr, false);
                if (!parsed.is_discarded() && parsed == structured) {
                    repeated = true;
                    continue;
                }
            }
            std::string line = render_content_block(block);
            out.text += line;
            if (line.empty() || line.back() != '\n') out.text += '\n';
        }
    }
    // An error's structuredContent repeats its text block's fields; show it only when the
    // text said nothing.
    if (!structured.is_null() && (!out.is_error || content.empty() || repeated)) out.text += pretty(structured) + "\n";
    return out;
}

}  // namespace toolport::client
