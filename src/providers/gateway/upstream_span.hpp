// The CLIENT span of one request the gateway sends an upstream MCP server (OpenTelemetry
// MCP conventions: "{mcp.method.name} {target}", server.address / server.port of an HTTP
// upstream, network.transport `pipe` for a stdio one), and what the request carries on:
// this span's trace context in params._meta, so the upstream's own SERVER span is its
// child. With tracing off the caller's trace context is passed on unchanged.
#pragma once

#include <chrono>
#include <exception>
#include <string>

#include "observability/tracer.hpp"
#include "util/json.hpp"

namespace toolport {
class RequestContext;
}

namespace toolport::gateway {

struct UpstreamSettings;

// One request's trace and timing, from before it is sent to its answer.
class UpstreamRequestTrace {
public:
    // Starts the span (tracing on) and writes the trace context into `params`' _meta.
    UpstreamRequestTrace(const UpstreamSettings& upstream, const std::string& method, Json& params,
                         const RequestContext& ctx);
    // Ends it with the upstream's result (a tool result with isError marks it `tool_error`).
    void succeeded(const Json& result);
    // Ends it with the failure `error` (a JSON-RPC error's code, else the kind of failure).
    void failed(std::exception_ptr error);

private:
    void record(std::string_view error_type);

    const UpstreamSettings& upstream_;
    std::string method_;
    std::string tool_;  // tools/call only
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    observability::Span span_;
};

}  // namespace toolport::gateway
