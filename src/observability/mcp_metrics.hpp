// The OpenTelemetry MCP conventions' metrics, in Prometheus form beside Toolport's own:
//   mcp_server_operation_duration_seconds  {mcp_method_name, gen_ai_tool_name, error_type}
//   mcp_client_operation_duration_seconds  {mcp_method_name, gen_ai_tool_name, error_type, toolport_upstream}
//   mcp_server_session_duration_seconds    {mcp_protocol_version}
// (the conventions' attribute names with dots as underscores; gen_ai_tool_name only for
// tools/call, error_type only for a failure: the JSON-RPC code, or `tool_error`).
// Series handles are kept per thread, so a request's update takes no lock.
#pragma once

#include <string>
#include <string_view>

namespace toolport::observability {

void record_server_operation(const std::string& method, const std::string* tool, std::string_view error_type,
                             double seconds);
void record_client_operation(const std::string& upstream, const std::string& method, const std::string* tool,
                             std::string_view error_type, double seconds);
void record_server_session(std::string_view protocol_version, double seconds);

}  // namespace toolport::observability
