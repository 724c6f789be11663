// An upstream tool's own error result, labelled for the agent. Toolport's own failures carry
// a machine-readable code and a suggestion (server/tool_error.hpp); an upstream's isError
// result often carries neither ("MCP error -32601: ..."), and the model then has nothing to
// act on. The gateway passes the upstream's result on unchanged and adds what is missing: a
// text block "UPSTREAM_TOOL_ERROR: ... Suggestion: ..." and the same fields in
// _meta["toolport/error"].
#pragma once

#include <string>

#include "server/content.hpp"

namespace toolport::gateway {

// Adds the code and a suggestion to `result` when it is an error result that has no code of
// its own (a structuredContent or _meta["toolport/error"] with error_code, or a text line
// that starts "CODE:"). Where the failure is the gateway's own refusal to relay a request of
// the upstream's to a client that lacks the capability (sampling, elicitation, roots), the
// suggestion says so. Returns whether it added anything.
bool label_upstream_error(ToolResult& result, const std::string& upstream, const std::string& tool);

}  // namespace toolport::gateway
