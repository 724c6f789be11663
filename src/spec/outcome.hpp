// What one spec's call produced, and the views of it that assertions check: the response
// text and the response document. Internal to src/spec.
#pragma once

#include <optional>
#include <string>

#include "spec/spec.hpp"

namespace toolport::spec::detail {

struct Outcome {
    enum class Kind {
        result,       // a result that is not an error
        tool_error,   // a tool result with isError: true
        call_failed,  // the call threw: a JSON-RPC error, a timeout, a broken transport
    };
    Kind kind = Kind::result;
    SpecKind spec_kind = SpecKind::tool;
    Json result;        // the result object (null when the call failed)
    std::string error;  // call_failed: "JSON-RPC error -32602: Unknown tool: x" or the exception's message
    std::optional<int> rpc_code;
    std::string text;  // the response text (see spec.hpp), the error message when the call failed

    bool is_error() const { return kind != Kind::result; }
    // "JSON-RPC error -32602: ..." / "the tool returned isError: true" for failure messages.
    std::string describe_error() const;
};

Outcome outcome_of_result(SpecKind kind, Json result);
Outcome outcome_of_failure(SpecKind kind, const std::exception& e);

// Text blocks joined with "\n": a tool's content[], a prompt's messages[].content, a
// resource's contents[].
std::string response_text(SpecKind kind, const Json& result);

// The response document json_path, snapshot and json_schema look at: the text parsed as JSON
// for a tool, the result object for a prompt or resource. Throws std::runtime_error saying why
// there is none (the call failed, the text is not JSON).
Json response_document(const Outcome& outcome);

// JSON text parsed with the nesting limit of spec files. Throws std::runtime_error.
Json parse_json_text(const std::string& text);

// Nesting depth of a value, without recursion (for values that did not come through a parser
// with a depth limit).
std::size_t nesting_depth(const Json& value);

// A short, single-line rendering for messages: JSON, cut at `max_chars` with "…".
std::string preview(const Json& value, std::size_t max_chars = 120);
std::string preview_text(const std::string& text, std::size_t max_chars = 200);

}  // namespace toolport::spec::detail
