// The operator's credentials kept out of what a source answers. An API may echo the keys
// it was sent (an account endpoint, a debugging echo, an error quoting the request); a
// source that sends the operator's keys runs each answer through here before a client
// sees it, errors and successes alike. JSON is redacted value by value, so the answer
// stays the same JSON with the same structure: only strings that held a secret change.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "server/content.hpp"
#include "util/json.hpp"

namespace toolport::providers {

// What a secret is replaced by.
inline constexpr const char* kRedacted = "[redacted]";
// Values shorter than this are left alone: they would match ordinary words and numbers,
// and successful answers are redacted too (keys are long).
inline constexpr std::size_t kMinSecretLength = 6;

// `text` with every occurrence of each secret replaced by "[redacted]".
std::string redact_text(std::string text, const std::vector<std::string>& secrets);

// Every string in `value` (member names included) redacted in place; numbers, booleans,
// nulls and the shape stay. Returns whether anything changed.
bool redact_json(Json& value, const std::vector<std::string>& secrets);

// A tool result redacted in place: its text blocks, embedded text resources,
// structuredContent and _meta. When structuredContent changed, the text block that
// carried its JSON is written again from the redacted value (a secret with characters
// JSON escapes would not be found in the text itself). Returns whether anything changed.
bool redact_result(ToolResult& result, const std::vector<std::string>& secrets);

// After redact_result changed `result`: its structuredContent no longer matching the
// tool's `output_schema` (a redacted string that had to match a pattern, an enum or a
// format) makes the call fail with UPSTREAM_ERROR saying so (naming `tool`): the client
// gets neither the secret nor a result that breaks the schema it was promised. Null
// schema: nothing to do.
void check_redacted_output(const ToolResult& result, const Json& output_schema, const std::string& tool);

}  // namespace toolport::providers
