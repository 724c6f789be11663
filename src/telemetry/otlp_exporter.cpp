#include "telemetry/otlp_exporter.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <zlib.h>

#include "async/asio_executor.hpp"
#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "http_client/retry_policy.hpp"
#include "http_client/url.hpp"
#include "observability/metrics.hpp"
#include "observability/otlp_json.hpp"
#include "observability/otlp_protobuf.hpp"
#include "util/sanitize.hpp"

namespace toolport::telemetry {

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// The OTLP specification's recommended bound on a response read by an exporter.
constexpr std::size_t kMaxResponseBytes = 4u << 20;

// How one POST of a batch ended.
struct Attempt {
    bool ok = false;
    std::int64_t rejected = 0;  // ok: spans the collector said it did not keep (partial success)
    std::string rejected_why;
    bool retryable = false;
    std::optional<milliseconds> retry_after;
    std::string reason;  // the failure's metric label: "http_503", "connection", "timeout", ...
    std::string detail;  // for the log
};

// `data` as a gzip stream (Content-Encoding: gzip). Export bodies are repetitive (the same
// keys and names in every span) and shrink several times.
std::string gzip(std::string_view data) {
    z_stream z{};
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("gzip: cannot start the compressor");
    std::string out(deflateBound(&z, static_cast<uLong>(data.size())), '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    if (status != Z_STREAM_END) throw std::runtime_error("gzip: the compressor did not finish");
    return out;
}

// The downstream client's options, with the collector's own CA file when one is set.
http_client::ClientOptions for_collector(http_client::ClientOptions options, const TelemetrySettings& settings) {
    if (!settings.certificate.empty()) options.ca_file = settings.certificate;
    return options;
}

}  // namespace

struct OtlpExporter::State {
    State(TelemetrySettings s, http_client::ClientOptions client_options)
        : settings(std::move(s)),
          resource(settings.resource()),
          scope(observability::toolport_scope()),
          io(1),
          executor(io),
          client(std::make_unique<http_client::HttpClient>(executor, for_collector(std::move(client_options), settings))),
          random(std::random_device{}()) {
        auto& m = observability::metrics();
        exported = m.counter("toolport_trace_spans_exported_total", {});
        dropped_full = m.counter("toolport_trace_spans_dropped_total", {{"reason", "queue_full"}});
        dropped_failed = m.counter("toolport_trace_spans_dropped_total", {{"reason", "export_failed"}});
    }

    const TelemetrySettings settings;
    const observability::Attributes resource;
    const observability::InstrumentationScope scope;

    // ---- Shared with the callers of on_end() and flush(), under `mutex` ----
    std::mutex mutex;
    std::condition_variable wake;     // the exporter thread: a full batch, a flush, the stop
    std::condition_variable drained;  // flush(): the queue is empty and no export is under way
    std::vector<observability::SpanData> queue;
    bool exporting = false;
    bool stopping = false;
    int flushes = 0;  // flush() calls waiting
    std::optional<Clock::time_point> flush_deadline;

    std::atomic<std::uint64_t> spans_exported{0}, dropped_queue_full{0}, dropped_export_failed{0}, dropped_rejected{0},
        requests_sent{0}, requests_failed{0};
    observability::Counter exported, dropped_full, dropped_failed;

    // ---- The exporter thread's own ----
    boost::asio::io_context io;
    AsioExecutor executor;
    std::unique_ptr<http_client::HttpClient> client;
    CancelToken* in_flight = nullptr;  // the export under way, for the destructor to cancel
    std::mt19937_64 random;
    bool failing = false;          // the last batch failed (logged once until one succeeds)
    bool warned_rejected = false;  // a partial success was logged
    // Where batches are encoded (protobuf), kept from one to the next; let go past 16 MiB.
    std::string encode_room;
    std::thread thread;

    void run();
    void export_batch(std::vector<observability::SpanData> batch, Clock::time_point give_up);
    Attempt post(std::string_view body, Clock::time_point deadline);
    void count_dropped_after_failure(std::size_t spans, const Attempt& last);
};

void OtlpExporter::State::run() {
    std::unique_lock lock(mutex);
    auto next_send = Clock::now() + settings.schedule_delay;
    while (!stopping) {
        const bool flushing = flushes > 0;
        const bool full_batch = queue.size() >= settings.max_export_batch_size;
        if (queue.empty() || (!flushing && !full_batch && Clock::now() < next_send)) {
            if (queue.empty()) drained.notify_all();
            if (queue.empty() && Clock::now() >= next_send) next_send = Clock::now() + settings.schedule_delay;
            wake.wait_until(lock, next_send, [this] {
                return stopping || (!queue.empty() && (flushes > 0 || queue.size() >= settings.max_export_batch_size));
            });
            continue;
        }
        // The lock is held as briefly as can be, since on_end() waits for it: the whole queue
        // is swapped out when it fits in one batch (the usual case), else a batch is moved out.
        std::vector<observability::SpanData> batch;
        if (queue.size() <= settings.max_export_batch_size) {
            batch.swap(queue);
            queue.reserve(batch.size());
        } else {
            const auto end = queue.begin() + static_cast<std::ptrdiff_t>(settings.max_export_batch_size);
            batch.assign(std::make_move_iterator(queue.begin()), std::make_move_iterator(end));
            queue.erase(queue.begin(), end);
        }
        auto give_up = Clock::now() + settings.export_timeout;
        if (flushing && flush_deadline) give_up = std::min(give_up, *flush_deadline);
        exporting = true;
        lock.unlock();
        const std::size_t spans = batch.size();
        try {
            export_batch(std::move(batch), give_up);
        } catch (const std::exception& e) {  // out of memory, or a loop handler that threw
            Attempt failed;
            failed.detail = e.what();
            count_dropped_after_failure(spans, failed);
        }
        if (encode_room.size() > (16u << 20)) std::string().swap(encode_room);  // after a huge batch
        lock.lock();
        exporting = false;
        next_send = Clock::now() + settings.schedule_delay;
    }
    drained.notify_all();
}

void OtlpExporter::State::export_batch(std::vector<observability::SpanData> batch, Clock::time_point give_up) {
    // Protobuf is encoded into the thread's kept buffer (no fresh one per batch); JSON and
    // gzip make a string of their own.
    std::string owned;
    std::string_view body;
    if (settings.protocol == OtlpProtocol::http_json) {
        owned = observability::encode_otlp_json(resource, scope, batch);
        body = owned;
    } else {
        body = observability::encode_otlp_protobuf(resource, scope, batch, encode_room);
    }
    if (settings.gzip) {
        owned = gzip(body);
        body = owned;
    }
    Attempt last;
    for (int attempt = 1;; ++attempt) {
        const auto now = Clock::now();
        if (now >= give_up) break;
        last = post(body, std::min(now + settings.timeout, give_up));
        if (last.ok) {
            // A partial success is not sent again (the specification says so): what the
            // collector did not keep is counted as dropped.
            const auto rejected = static_cast<std::size_t>(std::min<std::int64_t>(last.rejected, batch.size()));
            spans_exported += batch.size() - rejected;
            exported.increment(static_cast<double>(batch.size() - rejected));
            if (rejected > 0) {
                dropped_rejected += rejected;
                observability::metrics().increment("toolport_trace_spans_dropped_total", {{"reason", "rejected"}},
                                                   static_cast<double>(rejected));
                if (!warned_rejected) {
                    spdlog::warn(
                        "telemetry: the collector at {} did not keep {} of {} span(s): {} (later rejections "
                        "are counted in toolport_trace_spans_dropped_total, not logged)",
                        settings.traces_endpoint, rejected, batch.size(),
                        last.rejected_why.empty() ? "no reason given" : last.rejected_why);
                    warned_rejected = true;
                }
            }
            if (failing) {
                spdlog::info("telemetry: trace export to {} works again", settings.traces_endpoint);
                failing = false;
            }
            return;
        }
        ++requests_failed;
        observability::metrics().increment("toolport_trace_export_requests_failed_total", {{"reason", last.reason}});
        if (!last.retryable) break;
        const auto pause = http_client::backoff(attempt + 1, std::uniform_real_distribution<double>(0, 1)(random),
                                                last.retry_after);
        if (Clock::now() + pause >= give_up) break;
        std::unique_lock lock(mutex);
        if (wake.wait_for(lock, pause, [this] { return stopping; })) break;
    }
    count_dropped_after_failure(batch.size(), last);
}

void OtlpExporter::State::count_dropped_after_failure(std::size_t spans, const Attempt& last) {
    dropped_export_failed += spans;
    dropped_failed.increment(static_cast<double>(spans));
    // Once per run of failures: a collector that is down would otherwise write a line a batch.
    if (!failing) {
        spdlog::warn("telemetry: {} span(s) dropped: trace export to {} failed ({}){}", spans, settings.traces_endpoint,
                     last.detail.empty() ? "no time left to try" : last.detail,
                     " (further failures are counted in toolport_trace_spans_dropped_total, not logged)");
        failing = true;
    }
}

Attempt OtlpExporter::State::post(std::string_view body, Clock::time_point deadline) {
    http_client::Request request{.method = "POST",
                                 .url = settings.traces_endpoint,
                                 .headers = settings.headers,
                                 .body = std::string(body)};
    request.headers.emplace_back("Content-Type", settings.content_type());
    if (settings.gzip) request.headers.emplace_back("Content-Encoding", "gzip");
    CancelToken cancel;
    struct Outcome {
        bool done = false;
        std::optional<http_client::Response> response;
        std::exception_ptr error;
    };
    // Shared with the completion: it outlives this frame only if the loop is abandoned below.
    auto outcome = std::make_shared<Outcome>();
    ++requests_sent;
    {
        std::lock_guard lock(mutex);
        in_flight = &cancel;
        if (stopping) cancel.cancel("the exporter is stopping");
    }
    // Cleared however this ends: the destructor must never reach a token that is gone.
    struct Clear {
        State& state;
        ~Clear() {
            std::lock_guard lock(state.mutex);
            state.in_flight = nullptr;
        }
    } clear{*this};
    spawn(client->fetch(std::move(request), {.deadline = deadline,
                                             .cancel = &cancel,
                                             .max_response_bytes = kMaxResponseBytes,
                                             .max_attempts = 1,
                                             .traced = false}),
          [outcome](std::optional<http_client::Response> response, std::exception_ptr error) {
              outcome->response = std::move(response);
              outcome->error = error;
              outcome->done = true;
          });
    io.restart();
    while (!outcome->done && io.run_one() > 0) {}
    Attempt a;
    if (!outcome->done) {
        a.reason = "internal";
        a.detail = "the request did not finish";
        return a;
    }
    if (outcome->error) {
        try {
            std::rethrow_exception(outcome->error);
        } catch (const http_client::HttpError& e) {
            a.retryable = e.transient();
            using Kind = http_client::HttpError::Kind;
            a.reason = e.kind == Kind::timeout ? "timeout" : e.kind == Kind::tls ? "tls" : "connection";
            a.detail = e.what();
        } catch (const OperationCancelled&) {
            a.reason = "cancelled";
            a.detail = "cancelled at shutdown";
        } catch (const std::exception& e) {
            a.reason = "response";
            a.detail = e.what();
        }
        return a;
    }
    const auto& response = *outcome->response;
    if (response.status >= 200 && response.status < 300) {
        a.ok = true;
        const auto partial = settings.protocol == OtlpProtocol::http_json
                                 ? observability::decode_otlp_json_partial_success(response.body)
                                 : observability::decode_otlp_partial_success(response.body);
        if (partial && partial->rejected_spans > 0) {
            a.rejected = partial->rejected_spans;
            a.rejected_why = util::sanitize_for_message(partial->error_message, 200);
        }
        return a;
    }
    a.reason = fmt::format("http_{}", response.status);
    a.retryable = response.status == 429 || http_client::retryable_status(response.status);
    if (auto value = response.header_view("Retry-After"))
        a.retry_after = http_client::parse_retry_after(*value, std::chrono::system_clock::now());
    a.detail = fmt::format("HTTP {}{}", response.status,
                           response.body.empty() ? "" : ": " + util::sanitize_for_message(response.body, 200));
    return a;
}

OtlpExporter::OtlpExporter(TelemetrySettings settings, http_client::ClientOptions client)
    : state_(std::make_unique<State>(std::move(settings), std::move(client))) {
    state_->thread = std::thread([state = state_.get()] {
        pthread_setname_np(pthread_self(), "toolport-otlp");  // as top and debuggers show it
        state->run();
    });
}

OtlpExporter::~OtlpExporter() {
    {
        std::lock_guard lock(state_->mutex);
        state_->stopping = true;
        // An export under way ends now: its request is cancelled on the exporter's loop.
        if (state_->in_flight) {
            boost::asio::post(state_->io, [state = state_.get()] {
                std::lock_guard inner(state->mutex);
                if (state->in_flight) state->in_flight->cancel("the exporter is stopping");
            });
        }
    }
    state_->wake.notify_all();
    state_->thread.join();
    // Pooled connections closed, and what their closing left on the loop run, before the
    // loop goes.
    state_->client.reset();
    state_->io.restart();
    state_->io.poll();
}

void OtlpExporter::on_end(observability::SpanData&& span) {
    std::size_t queued = 0;
    {
        std::lock_guard lock(state_->mutex);
        if (state_->queue.size() >= state_->settings.max_queue_size) {
            ++state_->dropped_queue_full;
            state_->dropped_full.increment();
            return;
        }
        state_->queue.push_back(std::move(span));
        queued = state_->queue.size();
    }
    // A full batch is sent now, not at the next scheduled time.
    if (queued == state_->settings.max_export_batch_size) state_->wake.notify_one();
}

void OtlpExporter::flush(int timeout_ms) {
    const auto deadline = Clock::now() + milliseconds(std::max(timeout_ms, 0));
    std::unique_lock lock(state_->mutex);
    ++state_->flushes;
    state_->flush_deadline = state_->flush_deadline ? std::max(*state_->flush_deadline, deadline) : deadline;
    state_->wake.notify_all();
    state_->drained.wait_until(lock, deadline,
                               [this] { return state_->stopping || (state_->queue.empty() && !state_->exporting); });
    if (--state_->flushes == 0) state_->flush_deadline.reset();
}

ExporterStats OtlpExporter::stats() const {
    return {state_->spans_exported.load(),   state_->dropped_queue_full.load(), state_->dropped_export_failed.load(),
            state_->dropped_rejected.load(), state_->requests_sent.load(),      state_->requests_failed.load()};
}

std::shared_ptr<OtlpExporter> make_otlp_exporter(const TelemetrySettings& settings,
                                                 const http_client::ClientOptions& client) {
    if (!settings.enabled()) return nullptr;
    try {
        auto exporter = std::make_shared<OtlpExporter>(settings, client);
        spdlog::info("telemetry: exporting traces to {} ({}, sampler {})",
                     http_client::parse_url(settings.traces_endpoint).display(),
                     settings.protocol == OtlpProtocol::http_json ? "http/json" : "http/protobuf",
                     sampler_name(settings.sampler));
        return exporter;
    } catch (const std::invalid_argument& e) {
        throw TelemetrySettingsError(fmt::format("telemetry: {}", e.what()));
    }
}

}  // namespace toolport::telemetry
