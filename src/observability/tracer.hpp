// The tracer: starts spans, decides by its sampler which are recorded, and hands the ended
// ones to its SpanProcessor (the OTLP exporter, src/telemetry/). One per process, like
// metrics(); configured once at start-up, before any request is served.
//
//   Span span = tracer().start_span("tools/call get_weather", SpanKind::server, parent);
//   span.set_attribute("mcp.method.name", "tools/call");
//   if (span.recording()) span.add_event("cache.hit");
//   ... span.context() is what goes on to the next hop (trace_propagation.hpp)
//   span.end();   // or let it go out of scope
//
// Off (no processor: the default) a span records nothing and costs nothing beyond the
// check; its context is the parent's, so a caller's trace context still passes through.
// On but not sampled, a span gets its own id with the sampled flag clear, so the hops
// after it know not to record either.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <string_view>

#include "observability/sampler.hpp"
#include "observability/span_data.hpp"
#include "observability/trace_context.hpp"
#include "util/json.hpp"
#include "util/redaction/detectors.hpp"

namespace toolport::observability {

class Span {
public:
    Span() = default;
    Span(Span&& other) noexcept = default;
    Span& operator=(Span&& other) noexcept;
    Span(const Span&) = delete;
    Span& operator=(const Span&) = delete;
    ~Span() { end(); }

    // Whether this span is recorded (tracing on and sampled): check before building
    // attributes or events that cost something.
    bool recording() const { return data_ != nullptr; }
    // The context to pass on: this span's, or the parent's when tracing is off (invalid
    // when there was none).
    const TraceContext& context() const { return context_; }

    // Keys are string literals (AttributeKey); a key set twice keeps its latest value.
    void set_attribute(AttributeKey key, AttributeValue value);
    void set_attribute(AttributeKey key, std::string_view value);
    void set_attribute(AttributeKey key, const std::string& value) { set_attribute(key, std::string_view(value)); }
    void set_attribute(AttributeKey key, const char* value) { set_attribute(key, std::string_view(value)); }
    void set_attribute(AttributeKey key, std::int64_t value) {
        if (data_) set_attribute(key, AttributeValue(value));
    }
    void set_attribute(AttributeKey key, int value) { set_attribute(key, std::int64_t{value}); }
    void set_attribute(AttributeKey key, bool value) {
        if (data_) set_attribute(key, AttributeValue(value));
    }
    // For a key the span does not have yet (one filled in as it starts, each key once):
    // appended without the look-up set_attribute makes.
    void add_attribute(AttributeKey key, std::string_view value);
    void add_event(std::string_view name, Attributes attributes = {});
    // Marks the span failed: status error with `message`, and the `error.type` attribute.
    void set_error(std::string_view error_type, std::string_view message = {});
    // Renames it (a span's name may be known only once the request is read).
    void set_name(std::string_view name);

    // Ends it now (later calls do nothing) and hands it to the processor.
    void end();

private:
    friend class Tracer;
    Attribute* find_attribute(AttributeKey key);

    std::unique_ptr<SpanData> data_;
    std::shared_ptr<SpanProcessor> processor_;
    TraceContext context_;
};

class Tracer {
public:
    // Tracing on: spans sampled by `sampler` go to `processor`. A null processor turns it off.
    // `capture_payloads`: request arguments and results go on spans too (opted in by
    // telemetry.traces.capture_payloads; redacted, capped: payload_attribute()).
    void configure(Sampler sampler, std::shared_ptr<SpanProcessor> processor, bool capture_payloads = false);
    bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
    bool captures_payloads() const { return capture_payloads_; }
    // The detectors payload_attribute() redacts with (the configuration's
    // `pipeline: {redact: {payloads}}`; every one by default).
    void set_payload_detectors(util::redaction::DetectorSet set) { payload_detectors_ = set; }
    util::redaction::DetectorSet payload_detectors() const { return payload_detectors_; }
    // Hands what the processor has queued on (at shutdown).
    void flush(int timeout_ms);

    // A new span under `parent` (nullptr or an invalid context: a new trace).
    // `parent_is_remote`: the parent came from another process (a request's traceparent).
    // `name` is taken (moved) only when the span is recorded.
    Span start_span(std::string name, SpanKind kind, const TraceContext* parent, bool parent_is_remote = false);

private:
    std::atomic<bool> enabled_{false};
    bool capture_payloads_ = false;
    util::redaction::DetectorSet payload_detectors_ = util::redaction::kAllDetectors;
    Sampler sampler_;
    std::shared_ptr<SpanProcessor> processor_;
};

Tracer& tracer();

// A request's arguments or result as a span attribute value: compact JSON with the values
// of secret-looking keys redacted as in the logs (events.hpp) and what the payload
// detectors find replaced (util/redaction/, counted in
// toolport_redactions_total{where="trace"}), cut at 4096 bytes.
std::string payload_attribute(const Json& payload);

// Nanoseconds since the Unix epoch (span and event times).
std::uint64_t unix_nanos_now();

}  // namespace toolport::observability
