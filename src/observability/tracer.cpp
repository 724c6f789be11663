#include "observability/tracer.hpp"

#include <chrono>

#include "observability/events.hpp"
#include "observability/metrics.hpp"
#include "util/redaction/json_redaction.hpp"

namespace toolport::observability {

std::uint64_t unix_nanos_now() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string payload_attribute(const Json& payload) {
    Json redacted = redact_fields(payload);
    util::redaction::RedactionCounts counts;
    if (util::redaction::redact_json(redacted, tracer().payload_detectors(), &counts)) {
        for (std::size_t i = 0; i < util::redaction::kDetectorCount; ++i) {
            if (!counts.by_detector[i]) continue;
            metrics().increment("toolport_redactions_total",
                                {{"source", ""},
                                 {"detector",
                                  std::string(util::redaction::name(static_cast<util::redaction::Detector>(i)))},
                                 {"where", "trace"}},
                                counts.by_detector[i]);
        }
    }
    std::string text = redacted.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (text.size() > 4096) {
        text.resize(4096);
        text += "...";
    }
    return text;
}

Span& Span::operator=(Span&& other) noexcept {
    if (this != &other) {
        end();
        data_ = std::move(other.data_);
        processor_ = std::move(other.processor_);
        context_ = std::move(other.context_);
    }
    return *this;
}

// A key appears once: setting it again replaces its value.
Attribute* Span::find_attribute(AttributeKey key) {
    for (auto& attribute : data_->attributes) {
        // The same literal is the same pointer; another literal, most often another size.
        const auto a = attribute.key.text(), b = key.text();
        if ((a.data() == b.data() && a.size() == b.size()) || a == b) return &attribute;
    }
    return nullptr;
}

void Span::set_attribute(AttributeKey key, AttributeValue value) {
    if (!data_) return;
    if (auto* attribute = find_attribute(key)) attribute->value = std::move(value);
    else data_->attributes.push_back({key, std::move(value)});
}

void Span::set_attribute(AttributeKey key, std::string_view value) {
    if (!data_) return;
    if (auto* attribute = find_attribute(key)) attribute->value.emplace<std::string>(value);
    else data_->attributes.push_back({key, AttributeValue(std::in_place_type<std::string>, value)});
}

void Span::add_attribute(AttributeKey key, std::string_view value) {
    if (data_) data_->attributes.push_back({key, AttributeValue(std::in_place_type<std::string>, value)});
}

void Span::add_event(std::string_view name, Attributes attributes) {
    if (!data_) return;
    data_->events.push_back({std::string(name), unix_nanos_now(), std::move(attributes)});
}

void Span::set_error(std::string_view error_type, std::string_view message) {
    if (!data_) return;
    set_attribute("error.type", error_type);
    data_->status = SpanStatusCode::error;
    data_->status_message = std::string(message);
}

void Span::set_name(std::string_view name) {
    if (data_) data_->name = std::string(name);
}

void Span::end() {
    if (!data_) return;
    data_->end_unix_nano = unix_nanos_now();
    auto processor = std::move(processor_);
    auto data = std::move(data_);
    if (processor) processor->on_end(std::move(*data));
}

void Tracer::configure(Sampler sampler, std::shared_ptr<SpanProcessor> processor, bool capture_payloads) {
    sampler_ = sampler;
    capture_payloads_ = capture_payloads;
    processor_ = std::move(processor);
    enabled_.store(processor_ != nullptr, std::memory_order_relaxed);
}

void Tracer::flush(int timeout_ms) {
    if (processor_) processor_->flush(timeout_ms);
}

Span Tracer::start_span(std::string name, SpanKind kind, const TraceContext* parent, bool parent_is_remote) {
    Span span;
    const bool has_parent = parent && parent->valid();
    if (!enabled()) {
        if (has_parent) span.context_ = *parent;
        return span;
    }
    span.context_.trace_id = has_parent ? parent->trace_id : new_trace_id();
    span.context_.span_id = new_span_id();
    if (has_parent) span.context_.trace_state = parent->trace_state;
    const bool sampled = sampler_.sample(has_parent ? parent : nullptr, span.context_.trace_id);
    span.context_.flags = sampled ? 1 : 0;
    if (!sampled) return span;

    auto data = std::make_unique<SpanData>();
    data->trace_id = span.context_.trace_id;
    data->span_id = span.context_.span_id;
    if (has_parent) {
        data->parent_span_id = parent->span_id;
        data->parent_is_remote = parent_is_remote;
        data->trace_state = parent->trace_state;
    }
    data->flags = span.context_.flags;
    data->name = std::move(name);
    data->kind = kind;
    data->start_unix_nano = unix_nanos_now();
    data->attributes.reserve(12);
    span.data_ = std::move(data);
    span.processor_ = processor_;
    return span;
}

Tracer& tracer() {
    static Tracer instance;
    return instance;
}

}  // namespace toolport::observability
