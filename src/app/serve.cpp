#include "app/serve.hpp"

#include <sys/resource.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "app/console_setup.hpp"
#include "app/discovery_setup.hpp"
#include "app/runtime.hpp"
#include "async/asio_executor.hpp"
#include "async/worker_pool.hpp"
#include "auth/authenticator.hpp"
#include "auth/key_source.hpp"
#include "server/tasks.hpp"
#include "providers/pin_api.hpp"
#include "stores/audit_query.hpp"
#include "stores/shared_sessions.hpp"
#include "transports/http_server.hpp"
#include "transports/io_threads.hpp"

namespace toolport {

namespace {

// Every connection, session stream and upstream costs a descriptor; the soft limit is often
// 1024 while the hard one is far higher. Raise it to the hard limit (what an unprivileged
// process may do) so that limit, not an accident of the shell, is what http.max_connections
// meets.
void raise_open_files_limit() {
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
    rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) == 0) {
        spdlog::debug("open files limit raised from {} to {}", before, limit.rlim_cur);
    }
}

// SIGHUP: the sources fetch their definitions again (REST catalogs, OpenAPI documents),
// under the same rule as POST /admin/reload (Runtime::reload); the handler re-arms itself
// for the next one.
void reload_on_hangup(boost::asio::signal_set& hangup, Runtime& runtime) {
    hangup.async_wait([&hangup, &runtime](const boost::system::error_code& ec, int) {
        if (ec) return;
        auto outcome = runtime.reload();
        if (!outcome.started) spdlog::warn("SIGHUP: reload {}", outcome.summary());
        reload_on_hangup(hangup, runtime);
    });
}

// The resource identifier when `auth.resource` is not set: the listen address and the MCP
// path (right for a client that reaches this address directly; behind a proxy or on a
// wildcard address, set auth.resource).
std::string default_resource(const HttpOptions& http) {
    std::string host = http.host;
    if (host == "0.0.0.0" || host == "::" || host.empty()) {
        spdlog::warn(
            "auth: no auth.resource set and listening on a wildcard address: tokens must name "
            "http://localhost:{}{} as their audience; set auth.resource to this server's public URL",
            http.port, http.path);
        host = "localhost";
    }
    if (host.find(':') != std::string::npos) host = "[" + host + "]";
    return "http://" + host + ":" + std::to_string(http.port) + http.path;
}

// `auth:`: the token verifier, with the issuer's keys discovered and fetched by the
// downstream HTTP client (on the engine's loop, where the endpoint verifies). Throws
// std::invalid_argument for settings the verifier or the key source refuses.
void enable_oauth(HttpOptions& http, Runtime& runtime) {
    auto& o = http.oauth;
    if (o.resource.empty()) o.resource = default_resource(http);
    auto* client = runtime.downstream();
    if (!client) throw std::invalid_argument("auth: no HTTP client to fetch the authorization server's keys with");
    std::shared_ptr<auth::KeySource> keys;
    if (!o.opaque_tokens) {
        auth::DiscoveryOptions discovery;
        discovery.issuer = o.issuer;
        discovery.allow_http = o.allow_http;
        discovery.refetch_floor = o.jwks_refetch_floor;
        keys = std::make_shared<auth::DiscoveredKeySource>(*client, std::move(discovery));
    }
    auth::AuthenticatorOptions options;
    options.verifier.issuer = o.issuer;
    options.verifier.audiences = {o.resource};
    options.verifier.skew = o.clock_skew;
    options.opaque_only = o.opaque_tokens;
    if (o.introspection.enabled) {
        const auto& i = o.introspection;
        auth::IntrospectionOptions io;
        io.endpoint = i.endpoint;
        io.issuer = o.issuer;
        io.audiences = {o.resource};
        io.skew = o.clock_skew;
        io.max_cache = i.cache_max;
        io.negative_cache = i.negative_cache;
        io.allow_http = o.allow_http;
        auto method = auth::parse_method(i.auth_method);
        if (!method) throw std::invalid_argument("auth.introspection.auth_method: unknown method " + i.auth_method);
        io.client.method = *method;
        io.client.client_id = i.client_id;
        io.client.client_secret = i.client_secret;
        options.introspector = std::make_shared<auth::TokenIntrospector>(*client, std::move(io));
        spdlog::info("auth: opaque{} access tokens checked by introspection at {}", o.opaque_tokens ? " (all)" : "",
                     i.endpoint.empty() ? "the issuer's introspection_endpoint" : i.endpoint);
    }
    o.authenticator = std::make_shared<auth::TokenAuthenticator>(std::move(options), std::move(keys));
    spdlog::info(
        "auth: OAuth access tokens from {} for the resource {}{}", o.issuer, o.resource,
        o.required_scopes.empty() ? "" : " (required scopes: " + [&] {
            std::string joined;
            for (const auto& s : o.required_scopes) joined += (joined.empty() ? "" : " ") + s;
            return joined;
        }() + ")");
}

}  // namespace

int serve(const Config& config) {
    raise_open_files_limit();
    // Declared first so it is destroyed last: work queued on the engine's loop (`io`) refers
    // to connections on these loops.
    std::unique_ptr<IoThreads> io_threads;
    boost::asio::io_context io(1);
    AsioExecutor executor(io);
    std::unique_ptr<Runtime> runtime;
    // Closed once the loop has stopped, while it still exists: suspended work may keep the
    // object itself alive until the loop is destroyed, and its sockets must not outlive it.
    std::shared_ptr<stores::SharedSessions> shared_sessions;
    try {
        // The audit log's default file and the store's Redis, filled in for serving only.
        Config served = config;
        served.audit = stores::resolve_audit_options(config.audit, config.store, config.audit_redis,
                                                     config.audit_stream);
        runtime = std::make_unique<Runtime>(served, executor);
    } catch (const ConfigError& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    McpServer& server = runtime->server();
    boost::asio::signal_set hangup(io, SIGHUP);
    reload_on_hangup(hangup, *runtime);

    if (config.transport == Config::Transport::stdio) {
        // SIGINT/SIGTERM end the process; stdin EOF ends the session normally.
        boost::asio::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([&runtime](const boost::system::error_code& ec, int) {
            if (ec) return;
            runtime->stop_sources();                             // upstream children and their process groups go first
            if (auto* audit = runtime->audit()) audit->flush();  // the records of the calls answered
            runtime->flush_telemetry();
            std::_Exit(0);
        });
        spdlog::info("serving MCP on stdio ({} tools)", server.registry().tools().size());
        const int status = serve_stdio(server, executor, config.stdio);
        runtime->flush_telemetry();
        return status;
    }

    HttpOptions http_options = config.http;
    if (config.shared_sessions) {
        auto shared = std::shared_ptr<stores::SharedSessions>(stores::make_redis_shared_sessions(config.store, executor));
        // While Redis is away sessions are this replica's own: degraded, not down.
        runtime->health().add(runtime->health().contains("sessions") ? "shared_sessions" : "sessions",
                              [shared]() -> observability::ComponentHealth {
                                  if (shared->ready()) return {"shared", observability::Severity::ok};
                                  return {"local only (Redis unreachable)", observability::Severity::degraded};
                              });
        // A client's answers for a task another replica runs go there through the bus.
        if (auto* tasks = server.tasks()) {
            tasks->set_relay([shared](const std::string& id, const nlohmann::json& responses) {
                spawn(shared->publish_task_answers(id, responses.dump()), [id](std::exception_ptr error) {
                    if (error) spdlog::warn("task {}…: answers not relayed (Redis unreachable)", id.substr(0, 8));
                });
            });
            // And a cancellation, to the replica that runs the call. (Its message is not JSON,
            // so a replica of an older version ignores it rather than taking it for answers.)
            static constexpr std::string_view kCancelled = "cancel:";
            tasks->set_cancel_relay([shared](const std::string& id, const std::string& why) {
                spawn(shared->publish_task_answers(id, std::string(kCancelled) + why), [id](std::exception_ptr error) {
                    if (error) spdlog::warn("task {}…: cancellation not relayed (Redis unreachable)", id.substr(0, 8));
                });
            });
            shared->set_task_listener([weak = tasks->weak_from_this()](std::string id, std::string data) {
                auto engine = weak.lock();
                if (!engine) return;
                if (data.rfind(kCancelled, 0) == 0) {
                    engine->cancelled_elsewhere(std::move(id), data.substr(kCancelled.size()));
                    return;
                }
                auto responses = nlohmann::json::parse(data, nullptr, false);
                if (responses.is_object()) engine->answers_from_elsewhere(std::move(id), std::move(responses));
            });
        }
        shared_sessions = shared;
        http_options.shared_sessions = std::move(shared);
        spdlog::info("sessions: shared through the Redis store");
    }
    http_options.health_report = [&health = runtime->health()]() { return health.http_response(); };
    // The endpoint answers on the engine's loop, where the sources live.
    http_options.reload = [&runtime]() {
        auto outcome = runtime->reload();
        if (!outcome.started) spdlog::debug("POST /admin/reload: {}", outcome.summary());
        return AdminReload{.started = outcome.started,
                           .body = outcome.json(),
                           .retry_after = std::chrono::duration_cast<std::chrono::seconds>(
                               outcome.wait + std::chrono::milliseconds(999))};
    };
    // GET /audit reads the log off the engine's loop; GET /orchestration is the breakers' now.
    if (auto* audit = runtime->audit()) {
        auto readers = std::make_shared<WorkerPool>(1);
        http_options.audit_query = [readers, options = audit->options(),
                                    &executor](std::string query) -> Task<std::pair<int, std::string>> {
            co_return co_await readers->run(executor, [options, query = std::move(query)] {
                return stores::audit_http_query(options, query);
            });
        };
    }
    http_options.orchestration = [&runtime]() { return runtime->orchestration_summary().dump(); };
    if (auto* guard = runtime->pins()) {
        http_options.pins = [guard](std::string method, std::string path, std::string body, std::string who) {
            return pins::answer_pins_api(*guard, std::move(method), std::move(path), std::move(body), std::move(who));
        };
    }
    if (http_options.console.enabled)
        http_options.console.handler = make_console(config, *runtime, executor, shared_sessions);
    try {
        http_options.discovery = make_discovery(config, server);
    } catch (const std::invalid_argument& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    if (!http_options.oauth.issuer.empty()) {
        try {
            enable_oauth(http_options, *runtime);
            if (!http_options.oauth.scopes.empty()) {
                server.set_scope_policy(std::make_shared<const auth::ScopePolicy>(http_options.oauth.scopes));
            }
        } catch (const std::invalid_argument& e) {
            spdlog::error("{}", e.what());
            return 2;
        }
    }
    std::size_t thread_count = config.http.io_threads == HttpOptions::kAutoIoThreads
                                   ? IoThreads::automatic()
                                   : static_cast<std::size_t>(std::max(config.http.io_threads, 0));
    std::unique_ptr<HttpServer> http;
    try {
        if (thread_count > 0) io_threads = std::make_unique<IoThreads>(thread_count);
        http = std::make_unique<HttpServer>(server, executor, std::move(http_options), io_threads.get());
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
    http->start();
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("signal {}: shutting down", sig);
        hangup.cancel();
        http->stop();
        // Upstream connections end now (children killed, HTTP exchanges cancelled); the
        // loop runs a moment longer so what awaited them finishes instead of being left
        // suspended (and its memory with it).
        runtime->stop_sources();
        // Tasks still running are cancelled now, while the loop can still run their calls to
        // their end (a call left suspended keeps its session and memory for ever); the loop
        // stops once none runs, or after two seconds.
        if (auto* tasks = server.tasks()) tasks->shutdown();
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        // The check holds itself weakly; the timer waiting to run it holds it.
        auto stop_when_idle = std::make_shared<std::function<void()>>();
        std::weak_ptr<std::function<void()>> itself = stop_when_idle;
        *stop_when_idle = [&io, &executor, &server, &runtime, deadline, itself]() {
            auto* tasks = server.tasks();
            const bool busy = (tasks && tasks->running() > 0) || runtime->background_busy();
            if (busy && std::chrono::steady_clock::now() < deadline) {
                if (auto again = itself.lock()) {
                    executor.schedule_after(std::chrono::milliseconds(20), [again]() { (*again)(); });
                    return;
                }
            }
            io.stop();
        };
        executor.schedule_after(std::chrono::milliseconds(100), [stop_when_idle]() { (*stop_when_idle)(); });
    });
    spdlog::info("serving MCP on http://{}:{}{} ({} tools, {} I/O threads){}", config.http.host, http->port(),
                 config.http.path, server.registry().tools().size(), thread_count,
                 config.http.bearer_tokens.empty() && server.view_tokens().empty() && config.http.oauth.issuer.empty()
                     ? ""
                     : ", bearer auth on");
    if (io_threads) run_polling(io);
    else io.run();
    // No connection work may run while the engine's objects are torn down below.
    if (io_threads) io_threads->stop();
    if (shared_sessions) shared_sessions->shutdown();
    // The spans of the last requests, before the runtime (and its exporter) goes.
    runtime->flush_telemetry();
    // The connections' coroutine frames still parked on the I/O threads' loops hold the HTTP
    // endpoint, and through it the console, whose tool catalog listens to the runtime's
    // registry: they go now, while the runtime is alive (declared after the threads, it
    // would go first).
    http.reset();
    io_threads.reset();
    return 0;
}

}  // namespace toolport
