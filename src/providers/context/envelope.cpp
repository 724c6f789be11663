#include "providers/context/envelope.hpp"

#include "pipeline/stages/meta_accounting.hpp"
#include "server/tool_error.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

std::string compact(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

ToolResult finish(Json envelope, bool is_error) {
    ToolResult result = ToolResult::structured(std::move(envelope));
    result.is_error = is_error;
    return result;
}

// What to do about a failure whose thrower named nothing more specific: every error an
// agent sees says how to go on (issue 29).
std::string default_suggestion(const std::string& code) {
    if (code == "PATTERN_NOT_FOUND") return "Search with searchPatterns and pass an id it returns.";
    if (code == "SKILL_NOT_FOUND")
        return "Only patterns with hasExecutable: true can run; read this one with loadSkill.";
    if (code == "CATEGORY_INVALID") return "Use one of the categories the tool's inputSchema lists.";
    if (code == "SESSION_NOT_FOUND") return "Call searchArtifacts to list the sessions there are.";
    if (code == "SKILL_EXECUTION_FAILED")
        return "Check the input against the skill's SKILL.md (loadSkill), or try dryRun.";
    if (code == "FILESYSTEM_ERROR")
        return "The server could not use its files: try again, and tell the operator if it persists.";
    if (code == "VALIDATION_ERROR")
        return "Correct the argument the message names; the tool's inputSchema says what each accepts.";
    if (code == "SKILL_NOT_APPROVED" || code == "SANDBOX_UNAVAILABLE") return "Ask the operator of this server.";
    return "Try again; tell the operator if it persists.";
}

}  // namespace

const char* code_name(ErrorCode code) {
    switch (code) {
        case ErrorCode::pattern_not_found: return "PATTERN_NOT_FOUND";
        case ErrorCode::skill_not_found: return "SKILL_NOT_FOUND";
        case ErrorCode::category_invalid: return "CATEGORY_INVALID";
        case ErrorCode::session_not_found: return "SESSION_NOT_FOUND";
        case ErrorCode::skill_execution_failed: return "SKILL_EXECUTION_FAILED";
        case ErrorCode::filesystem_error: return "FILESYSTEM_ERROR";
        case ErrorCode::validation_error: return "VALIDATION_ERROR";
        case ErrorCode::skill_not_approved: return "SKILL_NOT_APPROVED";
        case ErrorCode::sandbox_unavailable: return "SANDBOX_UNAVAILABLE";
    }
    return "FILESYSTEM_ERROR";
}

long long tokens_used(const Json& data) { return pipeline::MetaAccounting::tokens_estimate(compact(data).size()); }

ToolResult success_result(Json data, std::chrono::milliseconds duration, Json extra) {
    Json metadata = {{"tokensUsed", tokens_used(data)}, {"duration", duration.count()}};
    for (auto& [key, value] : extra.items()) metadata[key] = std::move(value);
    return finish({{"success", true}, {"data", std::move(data)}, {"metadata", std::move(metadata)}}, false);
}

ToolResult failure_result(const std::string& code, const std::string& message, const std::string& suggestion,
                          std::chrono::milliseconds duration) {
    Json error = {{"code", code}, {"message", util::sanitize_for_message(message, 2000)}};
    error["suggestion"] = util::sanitize_for_message(suggestion.empty() ? default_suggestion(code) : suggestion, 1000);
    return finish({{"success", false},
                   {"error", std::move(error)},
                   {"metadata", {{"tokensUsed", 0}, {"duration", duration.count()}}}},
                  true);
}

ToolResult failure_result(const ContextError& error, std::chrono::milliseconds duration) {
    return failure_result(code_name(error.code()), error.what(), error.suggestion(), duration);
}

ToolResult failure_result(const ToolError& error) {
    const Json fields = error.to_json();
    std::string code = fields.value("error_code", "INTERNAL_ERROR");
    if (error.code() == ToolErrorCode::missing_parameter || error.code() == ToolErrorCode::invalid_argument ||
        error.code() == ToolErrorCode::invalid_format) {
        code = fields.value("parameter", "") == "category" ? "CATEGORY_INVALID" : "VALIDATION_ERROR";
        // An argument name the tool does not define is the one refusal every source words
        // alike (the validation stage's), so a model learns one code for it.
        if (fields.contains("unknown_arguments")) code = "INVALID_ARGUMENT";
    }
    ToolResult result = failure_result(code, error.what(), fields.value("suggestion", ""), std::chrono::milliseconds(0));
    // The details a model needs to fix the call (parameter, expected, example) stay.
    Json& out = result.structured_content["error"];
    for (const char* key : {"parameter", "provided", "expected_format", "example", "retry_after_ms",
                            "unknown_arguments", "accepted_arguments", "did_you_mean"}) {
        if (auto it = fields.find(key); it != fields.end()) out[key] = *it;
    }
    result.content = Json::array({content::text(compact(result.structured_content))});
    return result;
}

Json envelope_schema(Json data_schema, Json extra_metadata) {
    Json metadata_properties = {{"tokensUsed", {{"type", "integer"}, {"description", "ceil(chars / 4 * 1.1) of data"}}},
                                {"duration", {{"type", "integer"}, {"description", "milliseconds"}}}};
    for (auto& [key, value] : extra_metadata.items()) metadata_properties[key] = std::move(value);
    return {
        {"type", "object"},
        {"properties",
         {{"success", {{"type", "boolean"}}},
          {"data", std::move(data_schema)},
          {"error",
           {{"type", "object"},
            {"properties",
             {{"code", {{"type", "string"}}}, {"message", {{"type", "string"}}}, {"suggestion", {{"type", "string"}}}}},
            {"required", {"code", "message", "suggestion"}}}},
          {"metadata",
           {{"type", "object"},
            {"properties", std::move(metadata_properties)},
            {"required", {"tokensUsed", "duration"}}}}}},
        {"required", {"success", "metadata"}}};
}

}  // namespace toolport::context
