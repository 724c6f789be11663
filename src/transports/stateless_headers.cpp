#include "transports/stateless_headers.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "server/server.hpp"
#include "util/base64.hpp"
#include "util/http_text.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using namespace protocol;

namespace {

HeaderProblem problem(const Request& request, int status, int code, std::string message, Json data = nullptr) {
    return HeaderProblem{status, make_error(request.id, code, message, std::move(data))};
}

// The name a request addresses, for Mcp-Name (a view into its params).
std::optional<std::string_view> addressed_name(const Request& request) {
    const Json& p = request.params;
    if (!p.is_object()) return std::nullopt;
    const std::string_view method = request.method;
    std::string_view key;
    if (method == "tools/call" || method == "prompts/get") key = "name";
    else if (method == "resources/read") key = "uri";
    // The tasks extension routes its methods by task (SEP-2663).
    else if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") key = "taskId";
    if (key.empty()) return std::nullopt;
    // (Looked up by a view: a C-string key is measured at every comparison.)
    const auto& members = p.get_ref<const Json::object_t&>();
    auto it = members.find(key);
    if (it == members.end() || !it->second.is_string()) return std::nullopt;
    return std::string_view(it->second.get_ref<const std::string&>());
}

// Whether a header value says `expected`: as it is or, for values that are not plain visible
// ASCII, as "=?base64?<b64>?=". (Compared in place: a copy only for a base64 one.)
bool header_says(std::string_view value, std::string_view expected) {
    constexpr std::string_view prefix = "=?base64?";
    constexpr std::string_view suffix = "?=";
    if (value.size() >= prefix.size() + suffix.size() && util::iequals_ascii(value.substr(0, prefix.size()), prefix) &&
        value.substr(value.size() - suffix.size()) == suffix) {
        auto decoded = util::base64_decode(value.substr(prefix.size(), value.size() - prefix.size() - suffix.size()));
        return decoded && *decoded == expected;
    }
    return value == expected;
}

// HTTP field values may carry optional white space around them (RFC 9110 §5.5).
std::string_view trim_ows(std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
}

std::string header_text(const Json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
    return v.dump();
}

}  // namespace

std::optional<HeaderProblem> check_stateless_headers(const StatelessHeaders& h, const Request& request,
                                                     const StatelessMeta& meta, const McpServer& server) {
    if (!h.has_protocol_version) {
        return problem(request, 400, error_code::kHeaderMismatch, "Missing MCP-Protocol-Version header");
    }
    if (!meta.present) {
        return problem(request, 400, error_code::kInvalidParams,
                       fmt::format("Invalid params: missing _meta keys: {}, {}", meta_key::kProtocolVersion,
                                   meta_key::kClientCapabilities));
    }
    if (!meta.has_capabilities) {
        return problem(request, 400, error_code::kInvalidParams,
                       fmt::format("Invalid params: missing _meta keys: {}", meta_key::kClientCapabilities));
    }
    if (h.protocol_version != meta.requested) {
        return problem(request, 400, error_code::kHeaderMismatch,
                       fmt::format("MCP-Protocol-Version header \"{}\" does not match _meta protocolVersion \"{}\"",
                                   util::sanitize_for_message(h.protocol_version, 40),
                                   util::sanitize_for_message(meta.requested, 40)));
    }
    if (!meta.revision) {
        return HeaderProblem{400, unsupported_version_error(request.id, meta.requested)};
    }
    if (!h.has_method) {
        return problem(request, 400, error_code::kHeaderMismatch, "Missing Mcp-Method header");
    }
    if (trim_ows(h.method) != request.method) {
        return problem(request, 400, error_code::kHeaderMismatch,
                       fmt::format("Mcp-Method header \"{}\" does not match the body's method \"{}\"",
                                   util::sanitize_for_message(h.method, 60),
                                   util::sanitize_for_message(request.method, 60)));
    }
    const auto name = addressed_name(request);
    if (name) {
        if (!h.has_name) {
            return problem(request, 400, error_code::kHeaderMismatch,
                           fmt::format("Missing Mcp-Name header (expected \"{}\")",
                                       util::sanitize_for_message(*name, 100)));
        }
        if (!header_says(trim_ows(h.name), *name)) {
            return problem(request, 400, error_code::kHeaderMismatch,
                           fmt::format("Mcp-Name header does not match the body (\"{}\")",
                                       util::sanitize_for_message(*name, 100)));
        }
    }
    // Mcp-Param-<Name> mirrors of x-mcp-header tool parameters must match the arguments.
    if (name && request.method == "tools/call") {  // (a name means the params are an object)
        const ToolSpec* tool = server.registry().find_tool(std::string(*name));
        const Json* properties = nullptr;
        if (tool && tool->input_schema.is_object()) {
            const auto& schema = tool->input_schema.get_ref<const Json::object_t&>();
            if (auto it = schema.find(std::string_view("properties")); it != schema.end()) properties = &it->second;
        }
        if (properties && properties->is_object() && !properties->empty()) {
            // The arguments as sent (an object when the call has none), read in place.
            static const Json no_arguments = Json::object();
            const auto sent_arguments = request.params.find("arguments");
            const Json& args = sent_arguments != request.params.end() ? *sent_arguments : no_arguments;
            for (const auto& [prop, def] : properties->items()) {
                if (!def.is_object() || !def.contains("x-mcp-header") || !def["x-mcp-header"].is_string()) continue;
                const std::string header_name = def["x-mcp-header"];
                const Json* sent = nullptr;
                std::string_view sent_value;
                for (const auto& [hn, hv] : h.params) {
                    if (util::iequals_ascii(hn, header_name)) {
                        sent_value = hv;
                        sent = &args;  // marks "present"
                    }
                }
                const bool has_arg = args.is_object() && args.contains(prop) && !args[prop].is_null();
                if (!has_arg) {
                    if (sent) {
                        return problem(request, 400, error_code::kHeaderMismatch,
                                       fmt::format("Mcp-Param-{} header sent but argument \"{}\" is absent",
                                                   header_name, prop));
                    }
                    continue;
                }
                if (!sent) {
                    return problem(request, 400, error_code::kHeaderMismatch,
                                   fmt::format("Missing Mcp-Param-{} header for argument \"{}\"", header_name, prop));
                }
                if (!header_says(trim_ows(sent_value), header_text(args[prop]))) {
                    return problem(request, 400, error_code::kHeaderMismatch,
                                   fmt::format("Mcp-Param-{} header does not match argument \"{}\"", header_name, prop));
                }
            }
        }
    }
    return std::nullopt;
}

}  // namespace toolport
