// The OTLP/HTTP trace exporter: a SpanProcessor that batches ended spans and POSTs them to
// the collector (telemetry_settings.hpp says where and how), as OpenTelemetry's batching
// span processor does:
//
//  - on_end() takes a lock and moves the span into a bounded queue (max_queue_size); when
//    the queue is full the span is dropped and counted, so a slow or absent collector never
//    blocks a request or grows memory;
//  - one background thread of its own sends a batch when max_export_batch_size spans are
//    queued or schedule_delay has passed, with its own event loop and HTTP client (the
//    downstream client: TLS, CA file or the collector's own `certificate`, proxies), gzip
//    when asked, so the engine's loop never encodes or waits for an export;
//  - 429, 502, 503, 504 and connection failures are retried with exponential backoff and
//    jitter (at least Retry-After), each request bounded by `timeout`, the whole batch by
//    `export_timeout`; anything else (400, ...) drops the batch at once; a 200 with a
//    partial_success counts the spans the collector did not keep as dropped (not resent);
//  - flush(timeout) sends everything queued (at shutdown); the destructor stops the thread
//    (an export under way is cancelled), dropping what is still queued.
//
// Metrics (observability::metrics()): toolport_trace_spans_exported_total,
// toolport_trace_spans_dropped_total{reason=queue_full|export_failed|rejected} and
// toolport_trace_export_requests_failed_total{reason}.
//
//   auto exporter = telemetry::make_otlp_exporter(config.telemetry, config.downstream);
//   if (exporter) tracer.set_processor(exporter);  // spans flow
//   ...
//   exporter->flush(5000);                         // at shutdown, then let it go
#pragma once

#include <cstdint>
#include <memory>

#include "http_client/http_client.hpp"
#include "observability/span_data.hpp"
#include "telemetry/telemetry_settings.hpp"

namespace toolport::telemetry {

// What an exporter has done so far (the same counts as its metrics, for tests and logs).
struct ExporterStats {
    std::uint64_t spans_exported = 0;
    std::uint64_t dropped_queue_full = 0;
    std::uint64_t dropped_export_failed = 0;
    std::uint64_t dropped_rejected = 0;  // a 200 whose partial_success says they were not kept
    std::uint64_t requests_sent = 0;
    std::uint64_t requests_failed = 0;
};

class OtlpExporter final : public observability::SpanProcessor {
public:
    // Starts the background thread. Throws std::invalid_argument when the HTTP client
    // cannot be made (a CA file that cannot be loaded).
    OtlpExporter(TelemetrySettings settings, http_client::ClientOptions client);
    ~OtlpExporter() override;
    OtlpExporter(const OtlpExporter&) = delete;
    OtlpExporter& operator=(const OtlpExporter&) = delete;

    // Any thread; never blocks on the network (a lock and a move).
    void on_end(observability::SpanData&& span) override;
    // Sends everything queued now; returns once it is sent (or dropped) or after
    // `timeout_ms`. Any thread but the exporter's own.
    void flush(int timeout_ms) override;

    ExporterStats stats() const;

private:
    struct State;
    std::unique_ptr<State> state_;
};

// The exporter `settings` describe, or null when they export nothing (no endpoint, or
// disabled). `client`: the downstream HTTP client's options (CA file, TLS checks, proxies).
// Throws TelemetrySettingsError when the client cannot be made.
std::shared_ptr<OtlpExporter> make_otlp_exporter(const TelemetrySettings& settings,
                                                 const http_client::ClientOptions& client);

}  // namespace toolport::telemetry
