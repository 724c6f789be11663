// SpanData: what one finished span holds, in the shape OTLP exports it. The tracer
// (tracer.hpp) fills it while a span is open and hands it, ended, to its SpanProcessor
// (the OTLP exporter, or a test's collector). Ids are raw bytes; all-zero means "none"
// (a root span has no parent).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace toolport::observability {

using TraceId = std::array<std::uint8_t, 16>;
using SpanId = std::array<std::uint8_t, 8>;

// Numbered as OTLP's Span.SpanKind.
enum class SpanKind : std::uint8_t { internal = 1, server = 2, client = 3, producer = 4, consumer = 5 };

using AttributeValue = std::variant<std::string, std::int64_t, double, bool>;

// An attribute's key. Keys are the conventions' names, written in the code, so a key is a
// view of a string literal, never a copy: a span sets a dozen of them per request. A literal
// is checked at compile time to be ASCII, so the encoders need not check it is UTF-8. A key
// that is data (a resource attribute from OTEL_RESOURCE_ATTRIBUTES) is `viewing` a string
// its owner keeps alive and in place as long as the attribute; that one is checked.
class AttributeKey {
public:
    template <std::size_t N>
    consteval AttributeKey(const char (&literal)[N]) : text_(literal, N - 1), ascii_(true) {  // NOLINT: implicit
        for (char c : text_) {
            if (static_cast<unsigned char>(c) >= 0x80) throw "an attribute key literal is ASCII";
        }
    }
    static AttributeKey viewing(std::string_view kept) { return AttributeKey(kept, false); }

    std::string_view text() const { return text_; }
    // Known ASCII (a literal): valid UTF-8 without a check.
    bool ascii() const { return ascii_; }
    bool empty() const { return text_.empty(); }
    std::size_t size() const { return text_.size(); }
    friend bool operator==(const AttributeKey& key, std::string_view text) { return key.text_ == text; }

private:
    AttributeKey(std::string_view text, bool ascii) : text_(text), ascii_(ascii) {}
    std::string_view text_;
    bool ascii_ = false;
};

struct Attribute {
    AttributeKey key;
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
