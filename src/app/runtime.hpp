// Runtime: the server as the configuration describes it, ready for a transport: the
// event loop's executor, the shared stores, the call pipeline with its stages, the MCP
// server with its sources (packs). `toolport serve` puts a transport in front of it; the CLI
// client's in-process mode (`toolport list --config FILE`) talks to it directly.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "observability/health.hpp"
#include "observability/span_data.hpp"
#include "pipeline/pipeline.hpp"
#include "providers/source_table.hpp"
#include "server/server.hpp"
#include "stores/audit_feed.hpp"
#include "stores/audit_log.hpp"
#include "stores/stores.hpp"

namespace toolport {

class AsioExecutor;
class Executor;
namespace http_client {
class HttpClient;
}
namespace telemetry {
class OtlpExporter;
}
namespace pipeline {
class CircuitBreakerStage;
class GuardStage;
}  // namespace pipeline

// What a reload request got: a reload started now, or the running (or last) one's report
// because it came while that one ran or within reload.min_interval_s of its start.
struct ReloadOutcome {
    bool started = false;
    bool running = false;               // the reload reported is still fetching
    std::vector<std::string> sources;   // the sources it asked
    std::chrono::milliseconds age{0};   // since it started
    std::chrono::milliseconds wait{0};  // until another may start (an estimate while it runs)
    // One line for people (SIGHUP's log line, `toolport reload`).
    std::string summary() const;
    // The JSON body of POST /admin/reload: {"reloading": [...], "started": ..., ...}.
    std::string json() const;
};

class Runtime {
public:
    // Throws ConfigError (unknown pack, a pack that cannot start, bad store URL, ...).
    // On a network event loop the runtime has the downstream HTTP client sources need to
    // call web APIs; on any other executor (unit tests) it has none.
    Runtime(const Config& config, AsioExecutor& executor);
    Runtime(const Config& config, Executor& executor);
    ~Runtime();
    // Ends every source's background work now (upstream processes killed and reaped), for
    // a shutdown that will not run the destructors (serve --stdio exits at once on a
    // signal).
    void stop_sources();
    // Store work it started that is still under way (the pins' poll or writes): shutdown
    // runs the loop until it ends, or its deadline.
    bool background_busy() const;
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    McpServer& server() { return *server_; }
    pipeline::Pipeline& pipeline() { return pipeline_; }
    stores::Stores& stores() { return *stores_; }
    // What GET /health reports: a "server" probe, plus one per store and downstream service.
    observability::HealthRegistry& health() { return health_; }
    // Asks the sources that fetch definitions (REST catalogs, OpenAPI documents) to fetch
    // them again; returns at once. SIGHUP, POST /admin/reload. One reload at a time, at
    // most one per reload.min_interval_s: asked while one runs or too soon after it, it
    // starts nothing and reports that one. A reload that starts also reads the file's
    // `access:` rules again (a file that no longer loads keeps the rules in force). On the
    // engine's loop.
    ReloadOutcome reload();
    // A reload started by reload() is still fetching.
    bool reloading() { return reload_running_ && sources_fetching(); }
    // Every source has settled (Source::settled): its first background load is over.
    bool sources_settled();
    // The downstream HTTP client (on the network event loop), or null on another executor.
    http_client::HttpClient* downstream() { return downstream_.get(); }
    // Where ended spans go: the OTLP exporter when `telemetry:` / OTEL_* name an endpoint,
    // else null (tracing exports nothing). Safe to call on_end() from any thread.
    std::shared_ptr<observability::SpanProcessor> span_processor() const;
    // Sends the spans still queued, waiting at most `timeout_ms` (at shutdown, once the
    // loop has stopped).
    void flush_telemetry(int timeout_ms = 5000);
    // The audit log (null when audit is off), and the orchestration summary (per downstream
    // service: calls, failure rate, mean response time, breaker state; GET /orchestration).
    stores::AuditLog* audit() { return audit_.get(); }
    // The audit records as they are made, for the console (null without a console).
    stores::AuditFeed* audit_feed() { return audit_feed_.get(); }
    // Tool-definition pinning (providers/pin_guard.hpp); null when it is off.
    pins::PinGuard* pins() { return pins_.get(); }
    Json orchestration_summary();

private:
    Runtime(const Config& config, Executor& executor, AsioExecutor* network);

    observability::HealthRegistry health_;
    // First: destroyed last, after everything that may still end a span.
    std::shared_ptr<telemetry::OtlpExporter> span_exporter_;
    std::unique_ptr<http_client::HttpClient> downstream_;  // before the sources that use it
    // In dependency order: the stages use the stores, the server's tool invoker points
    // into the pipeline.
    std::unique_ptr<stores::Stores> stores_;
    // Tool-definition pinning (null when off for every source); before the sources that
    // watch it.
    std::unique_ptr<pins::PinGuard> pins_;
    // Before the pipeline whose audit stage writes to it: destroyed after, writing what is queued.
    std::shared_ptr<stores::AuditLog> audit_;
    std::shared_ptr<stores::AuditFeed> audit_feed_;
    std::shared_ptr<pipeline::CircuitBreakerStage> breakers_;
    std::shared_ptr<pipeline::GuardStage> guards_;  // ends its MCP guards' children in stop_sources()
    pipeline::Pipeline pipeline_;
    std::unique_ptr<McpServer> server_;
    // After the server: stopped and destroyed before it.
    std::vector<providers::RunningSource> sources_;

    // The reload gate (reload()): the last reload started, and whether it still runs
    // (watched every 100 ms while it does).
    void watch_reload();
    bool sources_fetching();
    // `access:` again from the configuration file, into the server (reload()).
    void reload_access();
    Executor& executor_;
    std::string config_file_;  // "" without one: nothing to read again
    std::chrono::milliseconds reload_min_interval_;
    std::optional<std::chrono::steady_clock::time_point> last_reload_;
    std::vector<std::string> last_reload_sources_;
    bool reload_running_ = false;
    std::function<void()> cancel_reload_watch_;
};

}  // namespace toolport
