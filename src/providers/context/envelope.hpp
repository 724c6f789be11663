// The answer every context tool gives (seed 003, "Union Types for Success/Error
// Responses"), in structuredContent and as its JSON text:
//
//   {success: true,  data: ..., metadata: {tokensUsed, duration, resultsCount?, ...}}
//   {success: false, error: {code, message, suggestion}, metadata: {tokensUsed, duration}}
//
// A failure is also an isError result, so clients that only look at isError see it.
// tokensUsed = ceil(chars / 4 * 1.1) of the data's compact JSON (seed 003, "Token
// Estimation Approach"); duration is in milliseconds.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "server/content.hpp"
#include "util/json.hpp"

namespace toolport {
class ToolError;
}

namespace toolport::context {

// The documented error codes, each emitted where its failure happens.
enum class ErrorCode {
    pattern_not_found,       // PATTERN_NOT_FOUND: no {name}.md for the id
    skill_not_found,         // SKILL_NOT_FOUND: the pattern has no code file to run
    category_invalid,        // CATEGORY_INVALID: a category outside the configured list
    session_not_found,       // SESSION_NOT_FOUND: no such session in the project
    skill_execution_failed,  // SKILL_EXECUTION_FAILED: the skill failed, timed out, or answered garbage
    filesystem_error,        // FILESYSTEM_ERROR: an I/O failure
    validation_error,        // VALIDATION_ERROR: arguments, ids or paths that cannot be used
    skill_not_approved,      // SKILL_NOT_APPROVED: a client wrote the code and the operator has not approved it
    sandbox_unavailable,     // SANDBOX_UNAVAILABLE: skills cannot be sandboxed here and may not run without
};

const char* code_name(ErrorCode code);

// Thrown by a context tool's work; the tool answers with the failure envelope. Messages
// name files relative to their root, never an absolute path.
class ContextError : public std::runtime_error {
public:
    ContextError(ErrorCode code, const std::string& message, std::string suggestion = {})
        : std::runtime_error(message), code_(code), suggestion_(std::move(suggestion)) {}
    ErrorCode code() const { return code_; }
    const std::string& suggestion() const { return suggestion_; }

private:
    ErrorCode code_;
    std::string suggestion_;
};

// ceil(chars / 4 * 1.1) of `data` as compact JSON.
long long tokens_used(const Json& data);

// {success: true, data, metadata: {tokensUsed, duration, ...extra}}; `extra` is an object
// of tool-specific counts (resultsCount, codeBlocksCount, ...).
ToolResult success_result(Json data, std::chrono::milliseconds duration, Json extra = Json::object());
ToolResult failure_result(const std::string& code, const std::string& message, const std::string& suggestion,
                          std::chrono::milliseconds duration);
ToolResult failure_result(const ContextError& error, std::chrono::milliseconds duration);
// A refusal by the pipeline (arguments that fail the schema, a timeout, a budget) in the
// envelope: schema failures become VALIDATION_ERROR (CATEGORY_INVALID for `category`),
// the pipeline's own codes are kept.
ToolResult failure_result(const ToolError& error);

// The outputSchema every context tool shares, with `data_schema` for `data` and the
// tool's extra metadata properties.
Json envelope_schema(Json data_schema, Json extra_metadata = Json::object());

}  // namespace toolport::context
