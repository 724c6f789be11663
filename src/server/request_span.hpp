// The SERVER span of one inbound MCP request, as the OpenTelemetry MCP semantic
// conventions describe it: named "{mcp.method.name} {target}" (`tools/call get_weather`),
// with mcp.method.name, gen_ai.tool.name / gen_ai.prompt.name / mcp.resource.uri,
// jsonrpc.request.id, mcp.session.id, mcp.protocol.version, network.transport (`pipe` for
// stdio), and at the end error.type and rpc.response.status_code. Its parent is the trace
// context the request carries in params._meta (the HTTP transport copies the W3C headers
// there when _meta has none).
#pragma once

#include <string>

#include "observability/tracer.hpp"
#include "protocol/request_id.hpp"
#include "protocol/versions.hpp"
#include "util/json.hpp"

namespace toolport {

struct CallerIdentity;

struct RequestTrace {
    observability::Span span;
    std::string baggage;
};

// The tool a tools/call names (nullptr for other methods, or without a string name).
const std::string* tool_name_of(const std::string& method, const Json& params);
// Whether `result` is a tool result with isError true.
bool is_tool_error_result(const Json& result);

// Only called with tracing on (observability::tracer().enabled()).
RequestTrace start_request_span(const std::string& method, const Json& params, const protocol::RequestId& id,
                                const CallerIdentity& caller, protocol::Revision revision);

// The request was answered with `result`: a tool result with isError true marks the span
// failed with error.type `tool_error`.
void end_request_span_with_result(observability::Span& span, const Json& result);
// The request was answered with the JSON-RPC error `code`.
void end_request_span_with_error(observability::Span& span, int code, const std::string& message);

}  // namespace toolport
