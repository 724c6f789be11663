// SpanData: what one finished span holds, in the shape OTLP exports it. The tracer
// (tracer.hpp) fills it while a span is open and hands it, ended, to its SpanProcessor
// (the OTLP exporter, or a test's collector). Ids are raw bytes; all-zero means "none"
// (a root span has no parent).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace toolport::observability {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// Numbered as OTLP's Span.SpanKind.
enum class SpanKind : std::uint8_t { internal = 1, server = 2, client = 3, producer = 4, consumer = 5 };

using AttributeValue = std::variant<std::string, std::int64_t, double, bool>;

struct Attribute {
    std::string key;
    AttributeValue value;
};
using Attributes = std::vector<Attribute>;

struct SpanEvent {
    std::string name;
    std::uint64_t time_unix_nano = 0;
    Attributes attributes;
};

// Numbered as OTLP's Status.StatusCode.
enum class SpanStatusCode : std::uint8_t { unset = 0, ok = 1, error = 2 };

struct SpanData {
    TraceId trace_id{};
    SpanId span_id{};
    SpanId parent_span_id{};        // all zero: a root span
    bool parent_is_remote = false;  // the parent came from another process (traceparent)
    std::string trace_state;        // W3C tracestate, passed on as received
    std::uint8_t flags = 0;         // W3C trace flags (bit 0: sampled)
    std::string name;
    SpanKind kind = SpanKind::internal;
    std::uint64_t start_unix_nano = 0;
    std::uint64_t end_unix_nano = 0;
    Attributes attributes;
    std::vector<SpanEvent> events;
    SpanStatusCode status = SpanStatusCode::unset;
    std::string status_message;  // only with status error
};

// Where ended spans go. on_end is called on the thread that ended the span, on a request's
// path: it must not block (an exporter queues and drops when full).
class SpanProcessor {
public:
    virtual ~SpanProcessor() = default;
    virtual void on_end(SpanData&& span) = 0;
    // Sends what is queued; waits at most `timeout_ms`. Called at shutdown.
    virtual void flush(int timeout_ms) = 0;
};

}  // namespace toolport::observability
