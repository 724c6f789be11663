// Trace context in MCP messages: read from and written to a request's params._meta
// (`traceparent`, `tracestate`, `baggage`), as the OpenTelemetry MCP conventions and
// SEP-414 say. HTTP headers of the same names are copied into _meta by the HTTP transport
// when _meta has none (transports/http_policy.hpp), so _meta wins and this is the one
// place a server reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "observability/trace_context.hpp"
#include "util/json.hpp"

namespace toolport::observability {

struct PropagatedTrace {
    std::optional<TraceContext> parent;  // with its tracestate, when valid
    std::string baggage;                 // W3C baggage to pass on as received ("" for none)
};

// What `params._meta` carries. Malformed values are ignored (a bad traceparent starts a
// new trace; a bad tracestate or baggage is dropped).
PropagatedTrace read_trace_meta(const Json& params);
// The same from the `_meta` object itself (a request's, found already: RequestContext::meta).
PropagatedTrace read_trace_meta_members(const Json& meta);

// Sets params._meta.traceparent (and tracestate and baggage, when there are any) to
// `context`, replacing what the caller sent: the next hop's parent is this process's span.
// Creates _meta (and params) when missing; leaves params alone if it is not an object.
void write_trace_meta(Json& params, const TraceContext& context, std::string_view baggage);

}  // namespace toolport::observability
