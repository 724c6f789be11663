#include "app/console_setup.hpp"

#include <unistd.h>

#include <cctype>
#include <chrono>

#include <fmt/format.h>

#include "app/access_config.hpp"
#include "app/config.hpp"
#include "app/config_reference.hpp"
#include "app/runtime.hpp"
#include "async/worker_pool.hpp"
#include "console/console_api.hpp"
#include "console/replica_roster.hpp"
#include "document/document.hpp"
#include "providers/pin_api.hpp"
#include "providers/pin_guard.hpp"
#include "providers/source_table.hpp"
#include "stores/audit_query.hpp"
#include "toolport_version.hpp"

namespace toolport {

namespace {

// The sources this configuration starts, by kind: packs, REST catalogs, OpenAPI documents,
// and the gateway's upstreams (each a source of its own to an operator).
std::vector<console::SourceInfo> configured_sources(const Config& config) {
    std::vector<console::SourceInfo> sources;
    for (const auto& pack : config.packs) sources.push_back({pack, "pack"});
    for (const auto& instance : config.instances) {
        if (instance.kind != "gateway") {
            sources.push_back({instance.name, instance.kind});
            continue;
        }
        if (auto upstreams = instance.settings.value("upstreams"); upstreams && upstreams->is_object()) {
            for (const auto& [name, settings] : upstreams->items()) sources.push_back({name, "upstream"});
        }
    }
    return sources;
}

// What `toolport config check` says of the file now (it may have changed since the start).
Json check_findings(const std::string& file) {
    Json findings = Json::array();
    if (file.empty()) return findings;
    try {
        auto config = load_config(file);
        for (const auto& pack : config.packs) {
            if (!providers::find_source_kind(pack)) {
                findings.push_back(
                    {{"level", "error"},
                     {"path", "packs"},
                     {"message", fmt::format("unknown pack \"{}\" (known: {})", pack, providers::source_names())}});
            }
        }
        // "FILE:LINE: access.rules[N].sources: ...": the key's path after the location.
        for (const auto& warning : access_warnings(config)) {
            auto path_start = warning.find(": ");
            auto path_end = path_start == std::string::npos ? path_start : warning.find(": ", path_start + 2);
            findings.push_back(
                {{"level", "warning"},
                 {"path", path_end == std::string::npos ? std::string("access")
                                                        : warning.substr(path_start + 2, path_end - path_start - 2)},
                 {"message", warning}});
        }
    } catch (const ConfigError& e) {
        // "FILE:LINE: key.path: what": the key's path when the message names one.
        std::string message = e.what();
        std::string path;
        if (message.rfind(file + ":", 0) == 0) {
            auto rest = std::string_view(message).substr(file.size() + 1);
            auto colon = rest.find(": ");
            if (colon != std::string_view::npos) {
                auto after = rest.substr(colon + 2);
                auto key_end = after.find(": ");
                if (key_end != std::string_view::npos && after.substr(0, key_end).find(' ') == std::string_view::npos)
                    path = std::string(after.substr(0, key_end));
            }
        }
        findings.push_back({{"level", "error"}, {"path", path}, {"message", message}});
    }
    return findings;
}

// Every key's value as it takes effect, with where it came from (file, environment, default).
Json effective_keys(const Json& written) {
    Json rows = Json::array();
    for (auto& row : effective_configuration(written)) {
        rows.push_back({{"path", std::move(row.path)}, {"value", std::move(row.value)}, {"from", std::move(row.from)}});
    }
    return rows;
}

// `access`: the rules the server applies now (a reload may have replaced the file's first ones).
Json effective_config(const Config& config, const auth::AccessPolicy* access) {
    Json written = nullptr;
    Json settings = Json::object();
    if (!config.file.empty()) {
        try {
            auto doc = document::parse_document(document::read_text_file(config.file), config.file);
            if (doc.value.is_object()) {
                settings = config::redact_secrets(doc.value);
                written = std::move(doc.value);
            }
        } catch (const std::exception&) {
            // The check below says what is wrong with it.
        }
    }
    Json sources = Json::array();
    for (const auto& s : configured_sources(config)) sources.push_back({{"name", s.name}, {"kind", s.kind}});
    std::string store = config.store.url;
    // The access rules in force (the file's `access:` shows them as written).
    Json access_rules = nullptr;
    if (access) {
        Json rules = Json::array();
        for (const auto& rule : access->rules()) {
            rules.push_back({{"name", rule.name}, {"effect", std::string(auth::effect_name(rule.effect))}});
        }
        access_rules = {{"default", std::string(auth::effect_name(access->default_effect()))},
                        {"rules", std::move(rules)},
                        {"evaluation", "first match wins"}};
    }
    Json served = {{"transport", config.transport == Config::Transport::stdio ? "stdio" : "http"},
                   {"listen", fmt::format("{}:{}", config.http.host, config.http.port)},
                   {"path", config.http.path},
                   {"packs", config.packs},
                   {"sources", std::move(sources)},
                   {"store", config::redact_secrets(Json(store))},
                   {"sessions", config.shared_sessions ? "shared" : "local"},
                   {"authentication", !config.http.bearer_tokens.empty()  ? "bearer tokens"
                                      : !config.http.oauth.issuer.empty() ? "oauth"
                                                                          : "none"},
                   {"access", std::move(access_rules)},
                   {"audit", {{"enabled", config.audit.enabled}, {"path", config.audit.path}}},
                   {"console",
                    {{"enabled", config.http.console.enabled},
                     {"path", config.http.console.path},
                     {"operator_scope", config.http.console.operator_scope},
                     {"trace_viewer_url", config.http.console.trace_viewer_url}}}};
    return {{"file", config.file.empty() ? Json(nullptr) : Json(config.file)},
            {"settings", std::move(settings)},
            {"keys", effective_keys(written)},
            {"served", config::redact_secrets(served)}};
}

std::string this_replica() {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
    return fmt::format("{}:{}", host[0] ? host : "localhost", ::getpid());
}

}  // namespace

std::shared_ptr<ConsoleHandler> make_console(const Config& config, Runtime& runtime, Executor& executor,
                                             std::shared_ptr<stores::SharedSessions> shared) {
    console::ConsoleContext context;
    context.executor = &executor;
    context.trace_viewer_url = config.http.console.trace_viewer_url;
    auto& o = context.overview;
    o.name = config.server.name;
    o.version = kToolportVersion;
    o.transport = "http";
    o.replica = this_replica();
    o.server = &runtime.server();
    if (shared) {
        const auto started =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
        auto roster = std::make_shared<console::ReplicaRoster>(o.replica, Json{{"name", o.name},
                                                                               {"version", o.version},
                                                                               {"started", started}});
        roster->start(std::move(shared), executor, std::chrono::seconds(5));
        o.replicas = [roster] { return roster->json(); };
    }
    o.health = &runtime.health();
    o.sources = [sources = configured_sources(config)] { return sources; };
    if (auto* pins = runtime.pins()) {
        o.quarantined = [pins] {
            std::set<std::string> names;
            for (const auto& [source, state] : pins->snapshot()) {
                const auto policy = pins->policy(source);
                const bool withholds = policy == pins::PinPolicy::quarantine || policy == pins::PinPolicy::block_source;
                if (withholds && !state.pending.empty()) names.insert(source);
            }
            return names;
        };
        context.pins = [pins](std::string method, std::string path, std::string body, std::string who) {
            return pins::answer_pins_api(*pins, std::move(method), std::move(path), std::move(body), std::move(who));
        };
    }
    o.breakers = [&runtime] {
        std::vector<console::BreakerInfo> breakers;
        const Json summary = runtime.orchestration_summary();
        for (const auto& s : summary["server_health"]) {
            breakers.push_back({s.value("server_id", ""), s.value("breaker", ""), s.value("last_error", "")});
        }
        return breakers;
    };
    o.rate_limits = [&config = runtime.pipeline().policies().config()] {
        std::vector<console::RateLimitInfo> limits;
        for (const auto& [service, policy] : config.services) limits.push_back({service, policy.rate_limit.rate});
        return limits;
    };
    // GET calls reads what GET /audit reads, off the engine's loop, one query at a time.
    if (auto* audit = runtime.audit()) {
        auto readers = std::make_shared<WorkerPool>(1);
        context.audit_query = [readers, options = audit->options(),
                               &executor](std::string query) -> Task<std::pair<int, std::string>> {
            co_return co_await readers->run(executor, [options, query = std::move(query)] {
                return stores::audit_http_query(options, query);
            });
        };
    }
    context.audit_feed = runtime.audit_feed();
    context.record_action = [&runtime, replica = o.replica](stores::AuditRecord record) {
        record.replica = replica;
        if (auto* feed = runtime.audit_feed()) feed->publish(record);
        if (auto* audit = runtime.audit()) audit->submit(std::move(record));
    };
    context.reload = [&runtime] {
        auto outcome = runtime.reload();
        return console::ReloadStart{outcome.started, outcome.running, outcome.wait};
    };
    context.reloading = [&runtime] { return runtime.reloading(); };
    context.config = [config, &runtime] {
        auto findings = check_findings(config.file);
        bool ok = true;
        for (const auto& f : findings) ok = ok && f["level"] != "error";
        return Json{{"effective", effective_config(config, runtime.server().access_policy())},
                    {"check", {{"ok", ok}, {"findings", std::move(findings)}}}};
    };
    return std::make_shared<console::ConsoleApi>(std::move(context));
}

}  // namespace toolport
