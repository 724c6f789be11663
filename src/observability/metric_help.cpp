#include "observability/metric_help.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace toolport::observability {

namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 33> kHelp{{
    {"toolport_tool_calls_total", "Tool calls answered, by tool and result code (OK, or the error code)."},
    {"toolport_tool_errors_total", "Tool calls that ended in an error, by tool and error code."},
    {"toolport_tool_call_duration_seconds", "Time from a tool call's arrival to its answer, by tool."},
    {"toolport_cache_requests_total",
     "Result cache look-ups of cacheable tool calls, by tool and result (hit, miss, or bypass when the call "
     "may not be served from the cache)."},
    {"toolport_budget_downstream_calls_total",
     "Downstream API calls charged to request budgets, by tool (the call's _meta.downstream_api_calls, else the "
     "configured estimate)."},
    {"toolport_redactions_total",
     "Values the built-in redaction replaced, by source, detector (email, card, api_key, ...) and where (result, "
     "audit, trace)."},
    {"toolport_injection_markers_total",
     "Prompt-injection markers found in results (which are labelled, not edited), by source and marker."},
    {"toolport_budget_rejections_total", "Tool calls refused because their request budget was spent, by tool."},
    {"toolport_circuit_state",
     "Circuit breaker state of each downstream service: 0 = closed (calls pass), 1 = half-open (a trial call "
     "passes), 2 = open (calls are refused until the cool-down ends)."},
    {"toolport_circuit_rejections_total",
     "Tool calls refused because the service's circuit breaker was open, by service."},
    {"toolport_service_calls_total",
     "Calls to each downstream service through its circuit breaker, by service and outcome (success, failure, "
     "neutral: refused before the service was asked)."},
    {"toolport_service_response_seconds", "Response time of each downstream service, by service."},
    {"toolport_guard_checks_total",
     "Checks by external guards (guards:), by guard, phase (before, after) and outcome (allow, modify, deny, "
     "cached, failed_open, failed_closed)."},
    {"toolport_guard_check_seconds", "Time each external guard took to give a verdict, by guard."},
    {"toolport_rate_limited_total", "Tool calls refused by a rate limit, by scope (service or client) and service."},
    {"toolport_rate_limit_wait_seconds", "Time tool calls waited for a service's rate limit, by service."},
    {"toolport_http_requests_total", "HTTP requests answered, by method and status code."},
    {"toolport_http_connections_open", "HTTP connections open."},
    {"toolport_http_connections_refused_total",
     "HTTP connections refused, by reason (max_connections, out_of_descriptors)."},
    {"toolport_sessions_open", "MCP sessions open on the HTTP transports (Streamable HTTP and legacy SSE)."},
    {"toolport_upstream_up",
     "Whether each gateway upstream is connected: 1 = connected, 0 = not (starting, "
     "restarting or failed)."},
    {"toolport_upstream_connections_total",
     "Connections (and restarts) of each gateway upstream, by upstream; a rising count means it keeps failing."},
    {"toolport_upstream_output_dropped_total",
     "Upstream stderr lines, log messages and call notifications dropped over their limits, by upstream and stream."},
    {"toolport_upstream_output_dropped_bytes_total",
     "Bytes of upstream output dropped over its limits, by upstream and stream."},
    {"toolport_pin_changes_total",
     "Definitions of pinned sources that differ from their pins, by source, change (changed, renamed, added) and "
     "kind (tool, prompt, template); each counted once (docs/pinning.md)."},
    {"toolport_pins_withheld",
     "Definitions withheld from clients by pinning (quarantine or block-source) at the source's last listing, by "
     "source and kind (tool, prompt, template)."},
    {"toolport_reloads_total",
     "Reloads asked (SIGHUP, POST /admin/reload), by outcome: started, or answered by the running or last one "
     "(coalesced)."},
    {"mcp_server_operation_duration_seconds",
     "MCP requests served, from arrival to answer (OpenTelemetry mcp.server.operation.duration), by method, tool "
     "(tools/call) and error type (the JSON-RPC code, or tool_error)."},
    {"mcp_client_operation_duration_seconds",
     "MCP requests the gateway sent its upstreams, from sending to the answer (OpenTelemetry "
     "mcp.client.operation.duration), by upstream, method, tool (tools/call) and error type."},
    {"mcp_server_session_duration_seconds",
     "MCP sessions (stateful, after initialize), from opening to closing (OpenTelemetry "
     "mcp.server.session.duration), by protocol version."},
    {"toolport_trace_spans_exported_total", "Trace spans the OTLP exporter delivered to the collector (answered 2xx)."},
    {"toolport_trace_spans_dropped_total",
     "Trace spans that were never delivered, by reason: queue_full (the export queue was full when the span "
     "ended), export_failed (the collector refused the batch or could not be reached before the export timeout), "
     "rejected (the collector accepted the batch but said it did not keep them: a partial success)."},
    {"toolport_trace_export_requests_failed_total",
     "OTLP export requests (retries included) that failed, by reason: http_<status>, connection, tls, "
     "timeout, cancelled (at shutdown) or response (an unreadable answer)."},
}};

}  // namespace

std::optional<std::string_view> metric_help(std::string_view name) {
    auto it = std::find_if(kHelp.begin(), kHelp.end(), [name](const auto& entry) { return entry.first == name; });
    if (it == kHelp.end()) return std::nullopt;
    return it->second;
}

std::vector<std::string_view> known_metrics() {
    std::vector<std::string_view> names;
    for (const auto& [name, help] : kHelp) names.push_back(name);
    return names;
}

}  // namespace toolport::observability
