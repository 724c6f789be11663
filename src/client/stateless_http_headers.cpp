#include "client/stateless_http_headers.hpp"

#include <cctype>
#include <optional>
#include <set>

#include <spdlog/spdlog.h>

#include "util/base64.hpp"
#include "util/http_text.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

constexpr std::string_view kSentinelStart = "=?base64?";
constexpr std::string_view kSentinelEnd = "?=";

bool looks_encoded(std::string_view value) {
    return value.size() >= kSentinelStart.size() + kSentinelEnd.size() &&
           util::starts_with_ascii_nocase(value, kSentinelStart) &&
           value.substr(value.size() - kSentinelEnd.size()) == kSentinelEnd;
}

// The text of an argument as the server compares it: strings as they are, other
// primitives in their JSON spelling. Null (and structures, which cannot be marked) send
// no header.
std::optional<std::string> argument_text(const Json& value) {
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return std::string(value.get<bool>() ? "true" : "false");
    if (value.is_number()) return value.dump();
    return std::nullopt;
}

// The name a request addresses (what Mcp-Name mirrors), if it addresses one.
const Json* addressed_name(const std::string& method, const Json& params) {
    const char* key = nullptr;
    if (method == "tools/call" || method == "prompts/get") key = "name";
    else if (method == "resources/read") key = "uri";
    // The tasks extension routes its methods by task (SEP-2663).
    else if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") key = "taskId";
    if (!key || !params.is_object()) return nullptr;
    auto it = params.find(key);
    return it != params.end() && it->is_string() ? &*it : nullptr;
}

}  // namespace

std::optional<std::string> x_mcp_header_problem(const Json& tool) {
    if (!tool.is_object()) return std::nullopt;
    auto schema = tool.find("inputSchema");
    if (schema == tool.end() || !schema->is_object()) return std::nullopt;
    auto properties = schema->find("properties");
    if (properties == schema->end() || !properties->is_object()) return std::nullopt;
    std::set<std::string> taken;  // lower-cased
    for (const auto& [property, definition] : properties->items()) {
        if (!definition.is_object()) continue;
        auto marked = definition.find("x-mcp-header");
        if (marked == definition.end()) continue;
        const std::string shown = util::sanitize_for_message(property, 100);
        if (!marked->is_string()) return "property " + shown + " has an x-mcp-header that is not a string";
        const std::string header = marked->get<std::string>();
        if (header.empty()) return "property " + shown + " has an empty x-mcp-header";
        if (!util::is_http_token(header)) {
            return "property " + shown + " has x-mcp-header \"" + util::sanitize_for_message(header, 100) +
                   "\", which is not an HTTP header name";
        }
        const Json type = definition.value("type", Json());
        if (!type.is_string() || (type != "string" && type != "integer" && type != "boolean")) {
            return "property " + shown + " has an x-mcp-header but is not of type string, integer or boolean";
        }
        std::string lower = header;
        for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (!taken.insert(lower).second) {
            return "x-mcp-header \"" + util::sanitize_for_message(header, 100) +
                   "\" names the header of another property";
        }
    }
    return std::nullopt;
}

std::string encode_mcp_header_value(std::string_view value) {
    bool plain = !value.empty() && value.front() != ' ' && value.front() != '\t' && value.back() != ' ' &&
                 value.back() != '\t' && !looks_encoded(value);
    for (unsigned char c : value) {
        if (!plain) break;
        plain = c == '\t' || (c >= 0x20 && c <= 0x7e);
    }
    if (plain || value.empty()) return std::string(value);
    return std::string(kSentinelStart) + util::base64_encode(value) + std::string(kSentinelEnd);
}

void StatelessHttpHeaders::learn_tools(const Json& tools) {
    if (!tools.is_array()) return;
    for (const auto& tool : tools) {
        if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string()) continue;
        const std::string name = tool["name"];
        std::vector<Mirror> mirrors;
        std::set<std::string> taken;  // header names, lower-cased: headers ignore case
        const Json schema = tool.value("inputSchema", Json::object());
        const Json properties = schema.is_object() ? schema.value("properties", Json::object()) : Json::object();
        if (properties.is_object()) {
            for (const auto& [property, definition] : properties.items()) {
                if (!definition.is_object()) continue;
                auto marked = definition.find("x-mcp-header");
                if (marked == definition.end() || !marked->is_string()) continue;
                const std::string header = marked->get<std::string>();
                std::string lower = header;
                for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                if (!util::is_http_token(header) || !taken.insert(lower).second) {
                    spdlog::warn(
                        "tool {} marks argument {} with x-mcp-header \"{}\", which cannot be a header of its "
                        "own; it is not mirrored",
                        util::sanitize_for_message(name, 100), util::sanitize_for_message(property, 100),
                        util::sanitize_for_message(header, 100));
                    continue;
                }
                mirrors.push_back({property, header});
            }
        }
        if (mirrors.empty()) mirrors_.erase(name);
        else mirrors_[name] = std::move(mirrors);
    }
}

HeaderList StatelessHttpHeaders::for_request(const Json& request) const {
    HeaderList headers;
    if (!request.is_object() || !request.contains("method") || !request["method"].is_string()) return headers;
    const std::string method = request["method"];
    const Json params = request.value("params", Json::object());
    headers.emplace_back("Mcp-Method", method);
    const Json* name = addressed_name(method, params);
    if (name) headers.emplace_back("Mcp-Name", encode_mcp_header_value(name->get<std::string>()));
    if (method != "tools/call" || !name) return headers;
    auto tool = mirrors_.find(name->get<std::string>());
    if (tool == mirrors_.end()) return headers;
    const Json arguments = params.value("arguments", Json::object());
    if (!arguments.is_object()) return headers;
    for (const auto& mirror : tool->second) {
        auto argument = arguments.find(mirror.property);
        if (argument == arguments.end()) continue;
        if (auto text = argument_text(*argument)) {
            headers.emplace_back("Mcp-Param-" + mirror.header, encode_mcp_header_value(*text));
        }
    }
    return headers;
}

}  // namespace toolport::client
