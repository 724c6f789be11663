// ToolError: the one shape of every tool failure. A handler (or a pipeline stage) throws
// it; the engine turns it into a tool result with `isError: true`, a readable text block,
// and the same fields as `structuredContent`, so a model can both read and act on it:
//
//   throw ToolError(ToolErrorCode::missing_parameter, "uei is required")
//       .parameter("uei").expected("12 alphanumeric characters").example("ZQGGHJH74DW7")
//       .suggest("Search by vendor name first with search_vendors");
//
// Messages are sanitized (no home paths, no control characters) before they leave.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/content.hpp"

namespace toolport {

enum class ToolErrorCode {
    missing_api_key,
    missing_parameter,
    invalid_argument,
    invalid_format,
    not_found,
    rate_limited,
    timeout,
    upstream_error,
    budget_exceeded,
    response_too_large,
    server_unhealthy,
    internal_error,
    // The service behind the tool is reached with credentials obtained for the caller
    // (auth/upstream_credentials.hpp) and this caller has none to exchange, or the
    // authorization server refused them.
    upstream_credentials_unavailable,
    upstream_authorization_failed,
    // A guard (pipeline/stages/guard.hpp) denied the call or its result, or could not be
    // asked and its failure_mode is closed.
    guard_denied,
    guard_unavailable,
    // An access rule (auth/access_policy.hpp), or the default effect, denies this caller
    // the tool.
    tool_forbidden,
    // The tool's definition changed (or the tool is new) since it was pinned, and its
    // source's pinning policy withholds it until an operator approves (providers/pins).
    tool_quarantined,
};

// "MISSING_API_KEY", ..., "MCP_BUDGET_EXCEEDED", "MCP_RESPONSE_TOO_LARGE", ...
std::string_view code_name(ToolErrorCode code);

class ToolError : public std::runtime_error {
public:
    ToolError(ToolErrorCode code, const std::string& message);

    ToolError& parameter(std::string name) {
        parameter_ = std::move(name);
        return *this;
    }
    ToolError& provided(Json value) {
        provided_ = std::move(value);
        return *this;
    }
    ToolError& expected(std::string format) {
        expected_format_ = std::move(format);
        return *this;
    }
    ToolError& example(Json value) {
        example_ = std::move(value);
        return *this;
    }
    ToolError& suggest(std::string suggestion) {
        suggestion_ = std::move(suggestion);
        return *this;
    }
    ToolError& recoverable(bool v) {
        recoverable_ = v;
        return *this;
    }
    ToolError& transient(bool v) {
        transient_ = v;
        return *this;
    }
    ToolError& retry_after(std::chrono::milliseconds delay) {
        retry_after_ms_ = delay.count();
        return *this;
    }
    // A further machine-readable field of this error (e.g. the authorization server's
    // error code); the standard fields keep their names.
    ToolError& detail(const std::string& key, Json value) {
        details_[key] = std::move(value);
        return *this;
    }

    ToolErrorCode code() const { return code_; }
    bool is_transient() const { return transient_; }
    const std::optional<std::int64_t>& retry_after_ms() const { return retry_after_ms_; }

    // {error, error_code, parameter?, provided?, expected_format?, example?, suggestion,
    //  recoverable, transient, retry_after_ms?, details...}
    Json to_json() const;
    // The isError tool result carrying this error.
    ToolResult to_result() const;

private:
    ToolErrorCode code_;
    std::string parameter_;
    Json provided_;
    std::string expected_format_;
    Json example_;
    std::string suggestion_;
    bool recoverable_;
    bool transient_;
    std::optional<std::int64_t> retry_after_ms_;
    Json details_ = Json::object();
};

}  // namespace toolport
