#include "app/runtime.hpp"

#include "app/access_config.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "async/executor.hpp"
#include "guards/guards.hpp"
#include "http_client/http_client.hpp"
#include "observability/metrics.hpp"
#include "observability/tracer.hpp"
#include "pipeline/stages/audit.hpp"
#include "stores/local_pin_store.hpp"
#include "pipeline/stages/budget.hpp"
#include "pipeline/stages/cache.hpp"
#include "pipeline/stages/circuit_breaker_stage.hpp"
#include "pipeline/stages/content_scan.hpp"
#include "pipeline/stages/guard.hpp"
#include "pipeline/stages/meta_accounting.hpp"
#include "pipeline/stages/observe.hpp"
#include "pipeline/stages/rate_limit.hpp"
#include "pipeline/stages/size_cap.hpp"
#include "pipeline/stages/timeout.hpp"
#include "pipeline/stages/validation.hpp"
#include "server/tasks.hpp"
#include "telemetry/otlp_exporter.hpp"

namespace toolport {

namespace {

std::unique_ptr<stores::Stores> open_stores(const Config& config, Executor& executor) {
    try {
        return stores::make_stores(config.store, executor);
    } catch (const stores::StoreConfigError& e) {
        throw ConfigError(fmt::format("store: {}", e.what()));
    }
}

std::shared_ptr<telemetry::OtlpExporter> open_span_exporter(const Config& config) {
    try {
        return telemetry::make_otlp_exporter(config.telemetry, config.downstream);
    } catch (const telemetry::TelemetrySettingsError& e) {
        throw ConfigError(e.what());
    }
}

// The audit log, when on. A file the operator named that cannot be opened stops the
// start; the default one (in the state directory) only turns the audit log off, loudly.
std::shared_ptr<stores::AuditLog> open_audit(const Config& config) {
    if (!config.audit.enabled || config.audit.path.empty()) return nullptr;
    try {
        auto log = std::make_shared<stores::AuditLog>(config.audit);
        spdlog::info("audit: records to {}{}", config.audit.path,
                     config.audit.redis_url.empty() ? "" : " and the Redis stream " + config.audit.stream);
        return log;
    } catch (const stores::AuditError& e) {
        if (!config.audit.path_is_default) throw ConfigError(e.what());
        spdlog::warn("{}; the audit log is off (set audit.path, or audit.enabled: false)", e.what());
        return nullptr;
    }
}

// Pinning, unless it is off for every source. The pins are the shared Redis store's with
// pinning.store redis (or auto and a redis:// store): every replica judges against the same
// pins, read on the loop once the stores have connected. Else the pins file, read now,
// before any source lists: one that cannot be read stops the start (starting over would
// trust every definition afresh).
std::unique_ptr<pins::PinGuard> open_pins(const Config& config, stores::Stores& shared, Executor& executor) {
    bool any = config.pinning.default_policy != pins::PinPolicy::off;
    for (const auto& [source, policy] : config.pinning.sources) any = any || policy != pins::PinPolicy::off;
    if (!any) return nullptr;
    std::shared_ptr<stores::PinStore> store;
    if (config.pins_store != "file") store = shared.shared_pins();
    if (!store && config.pins_store == "redis") {
        throw ConfigError("pinning.store: redis needs the Redis store (store: redis://host:port)");
    }
    if (store) {
        spdlog::info("pins: kept in the Redis store, shared by every replica on it");
    } else {
        const std::string path = config.pins_path.empty() ? stores::default_pins_path() : config.pins_path;
        if (path.empty()) {
            spdlog::warn("pinning is off: no pins file (set pinning.path, or XDG_STATE_HOME or HOME)");
            return nullptr;
        }
        store = std::make_shared<stores::LocalPinStore>(path, executor.posts_from_any_thread() ? &executor : nullptr);
    }
    auto guard = std::make_unique<pins::PinGuard>(std::move(store), config.pinning, executor);
    try {
        guard->start();
    } catch (const stores::PinStoreError& e) {
        throw ConfigError(e.what());
    }
    return guard;
}

std::unique_ptr<http_client::HttpClient> open_downstream(const Config& config, AsioExecutor* network) {
    if (!network) return nullptr;
    try {
        return std::make_unique<http_client::HttpClient>(*network, config.downstream);
    } catch (const std::invalid_argument& e) {
        throw ConfigError(fmt::format("downstream: {}", e.what()));
    }
}

}  // namespace

Runtime::Runtime(const Config& config, AsioExecutor& executor) : Runtime(config, executor, &executor) {}
Runtime::Runtime(const Config& config, Executor& executor) : Runtime(config, executor, nullptr) {}

Runtime::Runtime(const Config& config, Executor& executor, AsioExecutor* network)
    : span_exporter_(open_span_exporter(config)),
      downstream_(open_downstream(config, network)),
      stores_(open_stores(config, executor)),
      pins_(open_pins(config, *stores_, executor)),
      audit_(open_audit(config)),
      pipeline_(pipeline::PolicyResolver(config.pipeline)),
      executor_(executor),
      config_file_(config.file),
      reload_min_interval_(config.reload_min_interval) {
    // Tracing is on when spans have somewhere to go (observability/tracer.hpp).
    if (span_exporter_) {
        auto sampler = observability::Sampler::named(telemetry::sampler_name(config.telemetry.sampler),
                                                     config.telemetry.sampler_ratio);
        observability::tracer().configure(sampler.value_or(observability::Sampler()), span_exporter_,
                                          config.telemetry.capture_payloads);
    }
    observability::tracer().set_payload_detectors(config.pipeline.defaults.content_scan.payloads);
    using namespace pipeline;
    // Always on, outermost: the audit record and observation see the accounted result.
    // The console's live Calls view follows the records in memory, with or without the
    // file (stores/audit_feed.hpp): its stage is there when either is.
    std::shared_ptr<AuditStage> audit_stage;
    if (config.transport == Config::Transport::http && config.http.console.enabled) {
        audit_feed_ = std::make_shared<stores::AuditFeed>();
    }
    if (audit_ || audit_feed_) {
        audit_stage = std::make_shared<AuditStage>(audit_, audit_feed_, config.audit.replica);
        audit_stage->set_payload_detectors(config.pipeline.defaults.content_scan.payloads);
        pipeline_.add_always(audit_stage);
    }
    auto observe = std::make_shared<ObserveStage>();
    pipeline_.add_always(observe);
    pipeline_.add_always(std::make_shared<MetaAccounting>());
    // Configurable: each tool's policy picks which of these run, and in what order.
    pipeline_.add(std::make_shared<ValidationStage>());
    pipeline_.add(std::make_shared<ClientQuotaStage>(stores_->rate_limits()));
    // The external guards `guards:` declares, run for the tools whose policy names them.
    guards_ = std::make_shared<GuardStage>(executor, stores_->cache());
    for (const auto& [name, settings] : config.pipeline.guards) {
        try {
            guards_->add_guard(settings, guards::make_guard(settings, network, downstream_.get()));
        } catch (const std::invalid_argument& e) {
            throw ConfigError(fmt::format("guards.{}: {}", name, e.what()));
        }
    }
    pipeline_.add(guards_);
    pipeline_.add(std::make_shared<CacheStage>(stores_->cache()));
    pipeline_.add(std::make_shared<ContentScanStage>());
    auto breakers = std::make_shared<CircuitBreakerStage>();
    breakers_ = breakers;
    pipeline_.add(breakers);
    pipeline_.add(std::make_shared<BudgetStage>(stores_->budgets()));
    pipeline_.add(std::make_shared<RateLimitStage>(stores_->rate_limits()));
    pipeline_.add(std::make_shared<TimeoutStage>());
    pipeline_.add(std::make_shared<SizeCapStage>());

    if (pins_ && audit_) {
        pins_->set_audit([audit = audit_](stores::AuditRecord record) { audit->submit(std::move(record)); });
    }
    server_ = std::make_unique<McpServer>(executor, config.server);
    server_->set_tool_invoker(pipeline_.invoker());
    // `access:`: checked before every call and listing, on every transport.
    server_->set_access_policy(config.access);
    for (const auto& warning : access_warnings(config)) spdlog::warn("{}", warning);
    if (audit_stage) {
        server_->set_served_listener(
            [audit_stage](const RequestContext& ctx, auto started, auto steady, std::exception_ptr error) {
                audit_stage->served(ctx, started, steady, std::move(error));
            });
    }
    // Task-supporting tools run as tasks for clients that declared the tasks extension; the
    // records live in the store (shared between replicas with Redis).
    auto tasks = std::make_shared<TaskEngine>(*server_, stores_->tasks());
    tasks->install();
    server_->set_tasks(std::move(tasks));
    // Each session's calls are summed up when it ends (the orchestration_summary event),
    // with the health of the services it used.
    server_->set_session_closed_listener([observe, breakers, &executor](const CallerIdentity& caller) {
        // A session that made no call has nothing to sum up (every stateless request's, ended
        // with its answer): no summary is written, so no health is gathered for one.
        if (!observe->tallies().count(caller.session_id)) return;
        Json services = Json::array();
        for (const auto& s : breakers->snapshot(executor.now())) {
            services.push_back({{"server_id", s.service},
                                {"healthy", s.state == CircuitBreaker::State::closed},
                                {"total_calls", s.total_calls},
                                {"failure_rate", s.total_calls ? s.failed_calls * 100 / s.total_calls : 0},
                                {"avg_response_ms", s.avg_response_ms}});
        }
        observe->session_ended(caller, Json{{"server_health", std::move(services)}});
    });
    for (const auto& pack : config.packs) {
        const auto* kind = providers::find_source_kind(pack);
        // (--packs: the configuration file's packs: are checked where they are read.)
        if (!kind) throw ConfigError(providers::unknown_pack_message(pack));
        auto settings = config.pack_settings.find(pack);
        try {
            sources_.push_back(providers::start_source(
                *kind, *server_,
                settings != config.pack_settings.end() ? settings->second
                                                       : providers::SourceSettings({}, "packs." + pack),
                providers::SourceServices{&health_, downstream_.get(), &pipeline_.policies(), network, pins_.get()}));
        } catch (const providers::SettingsError& e) {
            throw ConfigError(e.what());
        } catch (const providers::SourceError& e) {
            throw ConfigError(fmt::format("pack {}: {}", pack, e.what()));
        }
        spdlog::info("pack {} loaded", pack);
    }
    for (const auto& instance : config.instances) {
        const auto* kind = providers::find_instance_kind(instance.kind);
        if (!kind) throw ConfigError(fmt::format("unknown source kind \"{}\"", instance.kind));
        if (std::find(config.packs.begin(), config.packs.end(), instance.name) != config.packs.end()) {
            throw ConfigError(fmt::format("{} source \"{}\" has the name of a pack; name it differently", instance.kind,
                                          instance.name));
        }
        try {
            sources_.push_back(
                providers::start_source(*kind, *server_, instance.settings,
                                        providers::SourceServices{&health_, downstream_.get(), &pipeline_.policies(),
                                                                  network, pins_.get()},
                                        instance.name));
        } catch (const providers::SettingsError& e) {
            throw ConfigError(e.what());
        } catch (const providers::SourceError& e) {
            throw ConfigError(fmt::format("{} {}: {}", instance.kind, instance.name, e.what()));
        }
    }
    // The first lists wait (a bounded while) for the sources that load in the background;
    // one still loading then is named in the log, and /health says how it stands.
    server_->set_sources_gate(
        [this] { return sources_settled(); },
        [this, wait = config.server.wait_for_sources] {
            std::vector<std::string> waiting;
            for (auto& running : sources_) {
                if (!running.source().settled()) waiting.push_back(running.context().source_name());
            }
            if (waiting.empty()) return;
            spdlog::warn(
                "source(s) {} still loading after {} ms (server.wait_for_sources_ms): the first lists go out "
                "without their tools, which are announced with list_changed once loaded; GET /health shows why",
                fmt::join(waiting, ", "), wait.count());
        });
    // The server itself: up while the runtime lives (the report is answered on the same
    // event loop as MCP, so an answer means that loop is serving); at capacity when the
    // session limit would refuse new HTTP clients.
    const std::size_t max_sessions = config.transport == Config::Transport::http ? config.http.max_sessions : 0;
    health_.add("server", [this, max_sessions]() -> observability::ComponentHealth {
        if (max_sessions > 0 && server_->session_count() >= max_sessions) {
            return {"at-capacity", observability::Severity::degraded};
        }
        return {"available", observability::Severity::ok};
    });
    // The shared store: Redis connected, or serving from local fallbacks while it is away.
    health_.add("store", [this]() -> observability::ComponentHealth {
        const std::string backend(stores_->backend());
        switch (stores_->state()) {
            case stores::StoreState::available:
                return {backend == "redis" ? "reachable" : "available", observability::Severity::ok};
            case stores::StoreState::degraded:
                return {"unreachable (local fallback)", observability::Severity::degraded};
            case stores::StoreState::unavailable: return {"unreachable", observability::Severity::unhealthy};
        }
        return {"unknown", observability::Severity::degraded};
    });
    // The pins: read, or (the Redis store away) judging listings against the pins read last.
    if (pins_) {
        health_.add("pins", [this]() -> observability::ComponentHealth {
            const std::string backend(pins_->store().backend());
            if (!pins_->store_error().empty() && !pins_->loaded()) {
                return {"unread (" + backend + " store unreachable): quarantined sources withheld",
                        observability::Severity::degraded};
            }
            if (!pins_->store_error().empty()) {
                return {backend + " store unreachable: listings judged against the pins read last",
                        observability::Severity::degraded};
            }
            if (!pins_->loaded()) return {"reading the " + backend + " store", observability::Severity::degraded};
            return {backend, observability::Severity::ok};
        });
    }
    // Each downstream service, as its circuit breaker sees it: the configured ones from
    // the start, others from their first call.
    // Weak: the breaker stage keeps this function, which must not keep the stage alive.
    std::weak_ptr<CircuitBreakerStage> weak_breakers = breakers;
    auto add_service_probe = [this, weak_breakers, &executor](const std::string& service) {
        // A REST catalog's, OpenAPI document's or gateway upstream's service has the
        // source's name: the report shows one state for both (HealthRegistry::add_breaker).
        // The server's own components keep theirs: a service named like one shows as
        // service:<name>.
        const bool reserved = service == "server" || service == "store" || service == "sessions" || service == "pins";
        health_.add_breaker(reserved ? "service:" + service : service,
                            [weak_breakers, &executor, service]() -> observability::ComponentHealth {
                                auto breakers = weak_breakers.lock();
                                if (!breakers) return {"unknown", observability::Severity::degraded};
                                switch (breakers->state_of(service, executor.now())) {
                                    case CircuitBreaker::State::closed:
                                        return {"reachable", observability::Severity::ok};
                                    case CircuitBreaker::State::half_open:
                                        return {"half-open", observability::Severity::degraded};
                                    case CircuitBreaker::State::open:
                                        return {"open-circuit", observability::Severity::degraded};
                                }
                                return {"unknown", observability::Severity::degraded};
                            });
    };
    // Configured services and the ones sources declared (with their defaults) are on
    // /health from the start.
    for (const auto& [service, policy] : pipeline_.policies().config().services) add_service_probe(service);
    breakers->on_new_service = add_service_probe;
}

Json Runtime::orchestration_summary() {
    Json services = Json::array();
    for (const auto& s : breakers_->snapshot(executor_.now())) {
        const char* state = s.state == pipeline::CircuitBreaker::State::closed ? "closed"
                            : s.state == pipeline::CircuitBreaker::State::open ? "open"
                                                                               : "half_open";
        Json entry = {{"server_id", s.service},
                      {"breaker", state},
                      {"healthy", s.state == pipeline::CircuitBreaker::State::closed},
                      {"total_calls", s.total_calls},
                      {"failed_calls", s.failed_calls},
                      {"failure_rate", s.total_calls ? s.failed_calls * 100 / s.total_calls : 0},
                      {"avg_response_ms", s.avg_response_ms},
                      {"consecutive_failures", s.consecutive_failures}};
        if (!s.last_error.empty()) entry["last_error"] = s.last_error;
        services.push_back(std::move(entry));
    }
    return {{"server_health", std::move(services)}, {"sessions", server_->session_count()}};
}

Runtime::~Runtime() {
    if (cancel_reload_watch_) cancel_reload_watch_();
    // The tracer is the process's; this runtime's exporter goes with the runtime.
    if (span_exporter_) observability::tracer().configure(observability::Sampler(), nullptr);
}

std::shared_ptr<observability::SpanProcessor> Runtime::span_processor() const { return span_exporter_; }

void Runtime::flush_telemetry(int timeout_ms) {
    if (span_exporter_) span_exporter_->flush(timeout_ms);
}

void Runtime::stop_sources() {
    if (cancel_reload_watch_) {
        cancel_reload_watch_();
        cancel_reload_watch_ = nullptr;
    }
    for (auto& running : sources_) running.source().stop();
    if (guards_) guards_->terminate();
    if (pins_) pins_->stop();
}

bool Runtime::background_busy() const { return pins_ && pins_->busy(); }

bool Runtime::sources_settled() {
    return std::all_of(sources_.begin(), sources_.end(),
                       [](providers::RunningSource& running) { return running.source().settled(); });
}

namespace {
std::string seconds_text(std::chrono::milliseconds d) { return fmt::format("{:.1f} s", d.count() / 1000.0); }
}  // namespace

std::string ReloadOutcome::summary() const {
    if (started) return fmt::format("asked {} source(s) to fetch their definitions again", sources.size());
    if (running) {
        return fmt::format("not started: the reload started {} ago is still running; it answers for this one",
                           seconds_text(age));
    }
    return fmt::format(
        "not started: the last reload started {} ago (reload.min_interval_s); it answers for this "
        "one, and the next may start in {}",
        seconds_text(age), seconds_text(wait));
}

std::string ReloadOutcome::json() const {
    nlohmann::json body{{"reloading", sources}, {"started", started}};
    if (!started) {
        body["running"] = running;
        body["started_ms_ago"] = age.count();
        body["retry_after_ms"] = wait.count();
        body["message"] = summary();
    }
    return body.dump();
}

// A reload asked while the last one runs, or within reload.min_interval_s of its start,
// starts nothing: a storm of requests (or signals) costs the upstream APIs one fetch per
// interval at most, and every request is told which reload answers for it.
ReloadOutcome Runtime::reload() {
    using namespace std::chrono;
    ReloadOutcome outcome;
    const auto now = executor_.now();
    auto& metrics = observability::metrics();
    metrics.describe("toolport_reloads_total",
                     "Reloads asked (SIGHUP, POST /admin/reload), by outcome: started, or answered by the running or "
                     "last one (coalesced).");
    // Exact now, not as of the last look of the watch (a reload that just ended is over).
    if (reload_running_ && !sources_fetching()) reload_running_ = false;
    if (last_reload_) {
        outcome.age = duration_cast<milliseconds>(now - *last_reload_);
        if (reload_running_ || outcome.age < reload_min_interval_) {
            outcome.running = reload_running_;
            outcome.sources = last_reload_sources_;
            outcome.wait = std::max<milliseconds>(reload_min_interval_ - outcome.age, reload_running_ ? 1s : 0ms);
            metrics.increment("toolport_reloads_total", {{"outcome", "coalesced"}});
            return outcome;
        }
    }
    outcome.started = true;
    outcome.age = 0ms;
    reload_access();
    for (auto& running : sources_) {
        if (!running.source().reloads()) continue;
        running.source().reload();
        outcome.sources.push_back(running.context().source_name());
    }
    metrics.increment("toolport_reloads_total", {{"outcome", "started"}});
    last_reload_ = now;
    last_reload_sources_ = outcome.sources;
    reload_running_ = !outcome.sources.empty();
    spdlog::info("reload: {}", outcome.summary());
    if (reload_running_) {
        if (cancel_reload_watch_) cancel_reload_watch_();
        watch_reload();
    }
    return outcome;
}

void Runtime::reload_access() {
    if (config_file_.empty()) return;
    try {
        // The whole file is read and checked as `config check` would: rules are taken only
        // from a file that loads, never half of one.
        auto fresh = load_config(config_file_);
        server_->set_access_policy(fresh.access);
        for (const auto& warning : access_warnings(fresh)) spdlog::warn("{}", warning);
        spdlog::info("reload: access rules: {}",
                     fresh.access ? fmt::format("{} rule(s), default {}", fresh.access->rules().size(),
                                                auth::effect_name(fresh.access->default_effect()))
                                  : std::string("none"));
    } catch (const ConfigError& e) {
        spdlog::warn("reload: the access rules in force are kept: {}", e.what());
    }
}

bool Runtime::sources_fetching() {
    return std::any_of(sources_.begin(), sources_.end(), [](providers::RunningSource& running) {
        return running.source().reloads() && running.source().fetching();
    });
}

// Until none of the sources is fetching; the sources' own fetches are on this loop.
void Runtime::watch_reload() {
    cancel_reload_watch_ = executor_.schedule_after(std::chrono::milliseconds(100), [this] {
        cancel_reload_watch_ = nullptr;
        if (sources_fetching()) return watch_reload();
        reload_running_ = false;
        spdlog::info("reload: done in {}", seconds_text(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               executor_.now() - *last_reload_)));
    });
}

}  // namespace toolport
