// W3C Trace Context (https://www.w3.org/TR/trace-context/) and W3C Baggage: reading and
// writing `traceparent`, checking `tracestate` and `baggage` before they are passed on, and
// making new ids. A request carries these in params._meta (as the MCP semantic
// conventions say) or in HTTP headers; trace_propagation.hpp moves them in and out of _meta.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "async/log_ids.hpp"

#include "observability/span_data.hpp"

namespace toolport::observability {

struct TraceContext {
    TraceId trace_id{};
    SpanId span_id{};
    std::uint8_t flags = 0;   // bit 0: sampled
    std::string trace_state;  // passed on unchanged (checked by valid_tracestate)

    // Both ids non-zero: a context there is to continue.
    bool valid() const;
    bool sampled() const { return (flags & 1) != 0; }
};

// "00-<32 hex>-<16 hex>-<2 hex>". A higher version is read by its first four fields (the
// format's forward compatibility); version ff, upper-case hex, all-zero ids and anything
// malformed give nullopt.
std::optional<TraceContext> parse_traceparent(std::string_view header);
// Always version 00.
std::string format_traceparent(const TraceContext& context);

// Whether a tracestate / baggage value may be passed on: the size and member-count limits
// of the W3C formats and their grammar at the level a relay needs (keys, `=`, no control
// characters). Values that fail are dropped, never repaired.
bool valid_tracestate(std::string_view value);
bool valid_baggage(std::string_view value);

std::string to_hex(const TraceId& id);
// The ids log lines carry while `context`'s request runs (async/log_ids.hpp); unset when
// the context is not valid.
LogIds log_ids_of(const TraceContext& context);
std::string to_hex(const SpanId& id);

// Random, never all-zero ids (a per-thread generator seeded from the OS).
TraceId new_trace_id();
SpanId new_span_id();

}  // namespace toolport::observability
