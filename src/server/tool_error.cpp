#include "server/tool_error.hpp"

#include <array>

#include <fmt/format.h>

#include "util/sanitize.hpp"

namespace toolport {

namespace {

struct CodeInfo {
    std::string_view name;
    bool recoverable;  // can the caller fix it (change arguments, wait, narrow scope)?
    bool transient;    // may the same call succeed later unchanged?
    std::string_view suggestion;
};

constexpr std::array<CodeInfo, 18> kCodes = {{
    {"MISSING_API_KEY", true, false, "Configure the API key for this source (see the server's configuration)."},
    {"MISSING_PARAMETER", true, false, "Add the missing parameter and call again."},
    {"INVALID_ARGUMENT", true, false, "Fix the argument to match the tool's input schema and call again."},
    {"INVALID_FORMAT", true, false, "Send the value in the expected format and call again."},
    {"NOT_FOUND", true, false, "Check the identifier, or search for it first."},
    {"RATE_LIMITED", true, true, "Wait for retry_after_ms, then retry."},
    {"TIMEOUT", true, true, "Retry with a narrower request (fewer results, more specific filters)."},
    {"UPSTREAM_ERROR", true, true, "The service behind this tool failed; retry later."},
    {"MCP_BUDGET_EXCEEDED", true, false,
     "This request used its budget of downstream calls: narrow the scope, batch work into fewer calls, or ask "
     "for summaries instead of full records."},
    {"MCP_RESPONSE_TOO_LARGE", true, false, "Ask for less: lower the limit, add filters, or request fewer fields."},
    {"SERVER_UNHEALTHY", true, true, "The service is failing; retry after retry_after_ms."},
    {"INTERNAL_ERROR", false, false, "This is a server fault; report it if it persists."},
    {"UPSTREAM_CREDENTIALS_UNAVAILABLE", false, false,
     "Call with an OAuth access token: this service is reached with a token exchanged for the caller's own."},
    {"UPSTREAM_AUTHORIZATION_FAILED", true, false,
     "The authorization server refused a token for this service; obtain a new access token or ask the operator."},
    {"MCP_GUARD_DENIED", true, false,
     "A guard refused this: change what its reason names (leave out the data it objects to) or ask for something "
     "else; the same call will be refused again."},
    {"MCP_GUARD_UNAVAILABLE", true, true,
     "The guard that must check this call could not be asked; retry after a short wait, or tell the operator."},
    {"MCP_TOOL_FORBIDDEN", false, false,
     "This caller may not use this tool: use another tool, or ask the server's operator for access (the access "
     "rules of its configuration)."},
    {"MCP_TOOL_QUARANTINED", false, false,
     "This tool's definition changed since an operator approved it; it stays withheld until the operator "
     "reviews and approves the change (toolport pins diff / approve)."},
}};

const CodeInfo& info(ToolErrorCode code) { return kCodes[static_cast<std::size_t>(code)]; }

}  // namespace

std::string_view code_name(ToolErrorCode code) { return info(code).name; }

ToolError::ToolError(ToolErrorCode code, const std::string& message)
    : std::runtime_error(util::sanitize_for_message(message, 2000)),
      code_(code),
      recoverable_(info(code).recoverable),
      transient_(info(code).transient) {}

Json ToolError::to_json() const {
    Json j = {{"error", what()}, {"error_code", std::string(code_name(code_))}};
    if (!parameter_.empty()) j["parameter"] = parameter_;
    if (!provided_.is_null()) j["provided"] = provided_;
    if (!expected_format_.empty()) j["expected_format"] = expected_format_;
    if (!example_.is_null()) j["example"] = example_;
    j["suggestion"] = suggestion_.empty() ? std::string(info(code_).suggestion)
                                          : util::sanitize_for_message(suggestion_, 1000);
    j["recoverable"] = recoverable_;
    j["transient"] = transient_;
    if (retry_after_ms_) j["retry_after_ms"] = *retry_after_ms_;
    for (const auto& [key, value] : details_.items()) {
        if (!j.contains(key)) j[key] = value;
    }
    return j;
}

ToolResult ToolError::to_result() const {
    Json fields = to_json();
    // The text block says the same thing in prose, for clients that show only text.
    std::string text = fmt::format("{}: {}", code_name(code_), what());
    if (!parameter_.empty()) text += fmt::format("\nParameter: {}", parameter_);
    if (!provided_.is_null()) {
        text += fmt::format("\nProvided: {}",
                            util::sanitize_for_message(provided_.dump(-1, ' ', false, Json::error_handler_t::replace),
                                                       300));
    }
    if (!expected_format_.empty()) text += fmt::format("\nExpected: {}", expected_format_);
    if (!example_.is_null())
        text += fmt::format("\nExample: {}", example_.dump(-1, ' ', false, Json::error_handler_t::replace));
    if (retry_after_ms_) text += fmt::format("\nRetry after: {} ms", *retry_after_ms_);
    text += fmt::format("\nSuggestion: {}", fields["suggestion"].get<std::string>());
    ToolResult r = ToolResult::text(text);
    r.structured_content = std::move(fields);
    r.is_error = true;
    return r;
}

}  // namespace toolport
