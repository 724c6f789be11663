#include "providers/gateway/upstream_tool_errors.hpp"

#include <regex>

#include <fmt/format.h>

#include "server/error_result_guard.hpp"

namespace toolport::gateway {

namespace {

bool has_code(const ToolResult& result) {
    for (const Json* fields : {&result.structured_content, &result.meta}) {
        if (!fields->is_object()) continue;
        if (fields->contains("error_code")) return true;
        if (auto error = fields->find(kDroppedErrorMetaKey);
            error != fields->end() && error->is_object() && error->contains("error_code")) {
            return true;
        }
    }
    static const std::regex code_line(R"((^|\n)[A-Z][A-Z0-9_]{2,}:)");
    for (const auto& block : result.content) {
        if (block.is_object() && block.value("type", "") == "text" &&
            std::regex_search(block.value("text", std::string()), code_line)) {
            return true;
        }
    }
    return false;
}

std::string first_text(const ToolResult& result) {
    for (const auto& block : result.content) {
        if (block.is_object() && block.value("type", "") == "text") return block.value("text", std::string());
    }
    return {};
}

// The capability behind the gateway's own refusal (upstream.cpp: "the client of this call
// does not support M (it did not declare the C capability)"), if that is what the upstream
// reports.
std::string refused_capability(const std::string& text) {
    static const std::regex refusal(R"(did not declare the (\w+) capability)");
    std::smatch m;
    return std::regex_search(text, m, refusal) ? m[1].str() : std::string();
}

}  // namespace

bool label_upstream_error(ToolResult& result, const std::string& upstream, const std::string& tool) {
    if (!result.is_error || has_code(result)) return false;
    const std::string text = first_text(result);
    std::string suggestion;
    if (auto capability = refused_capability(text); !capability.empty()) {
        suggestion = fmt::format(
            "This tool asks the user through the client ({}), which this client does not offer: "
            "call it from a client that declares the {} capability, or use another tool",
            capability, capability);
    } else {
        suggestion = fmt::format(
            "Read the message above from {}: correct the arguments it names and call again, or "
            "try another tool",
            upstream);
    }
    const std::string message = fmt::format("upstream {} reported a failure of its tool {}", upstream, tool);
    result.content.push_back(
        Json{{"type", "text"}, {"text", fmt::format("UPSTREAM_TOOL_ERROR: {}. Suggestion: {}.", message, suggestion)}});
    if (!result.meta.is_object()) result.meta = Json::object();
    result.meta[kDroppedErrorMetaKey] = Json{{"error_code", "UPSTREAM_TOOL_ERROR"},
                                             {"error", text.empty() ? message : text},
                                             {"suggestion", suggestion},
                                             {"recoverable", true},
                                             {"transient", false}};
    return true;
}

}  // namespace toolport::gateway
