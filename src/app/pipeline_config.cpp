// The configuration of the call pipeline:
//
//   pipeline:                 # defaults for every tool
//     stages: [validate, client_quota, cache, circuit_breaker, budget, rate_limit, timeout, size_cap]
//     disable: [cache]        # switch stages off without restating the order
//     timeout_ms: 30000
//     max_response_bytes: 1048576
//     cache: {mode: read_only | all | off, enabled: BOOL, ttl_s: 300, per_user: false}
//     budget: {max_downstream_calls_per_request: 120, default_downstream_per_call: 12, scope_ttl_s: 600}
//     client_quota: {per_minute: 0, burst: 0}
//   sources: {<provider>: <same keys as pipeline> + service}
//   tools:   {<tool name>: <same keys as pipeline> + service + task_support}
//            task_support: forbidden | optional | required   (the tool's execution.taskSupport)
//   services:
//     <name>: {min_spacing_ms: 100, rate_per_s: 10, burst: 20, max_wait_ms: 5000,
//              breaker: {failure_threshold: 3, cooldown_s: 30}}
//   store: memory | redis://host:port/db      # or a mapping:
//   store: {url, memory_cache_max_bytes, memory_cache_max_entries, key_prefix,
//           rate_limit_fail_open, redis_timeout_ms, reconnect_interval_ms}
#include <cstdlib>

#include "app/config_reader.hpp"

namespace toolport {

namespace {

using namespace std::chrono;

std::vector<std::string> stage_names(const ConfigReader& r, const YAML::Node& n, const std::string& key) {
    auto names = r.list(n, key);
    const auto& known = pipeline::default_stage_order();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (std::find(known.begin(), known.end(), names[i]) == known.end()) {
            std::string list;
            for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
            r.fail(n[i], key, fmt::format("unknown stage \"{}\" (known: {})", names[i], list));
        }
    }
    return names;
}

pipeline::PolicyOverride read_override(const ConfigReader& r, const YAML::Node& n, const std::string& section,
                                       bool allow_service, bool allow_task_support = false) {
    std::set<std::string> keys = {"stages", "disable", "timeout_ms", "max_response_bytes", "cache", "budget",
                                  "client_quota"};
    if (allow_service) keys.insert("service");
    // OAuth scopes of a tool or source: read by config.cpp (read_scope_requirements).
    if (allow_service) keys.insert("scopes");
    if (allow_task_support) keys.insert("task_support");
    r.only_keys(n, section, keys);
    pipeline::PolicyOverride o;
    if (n["stages"]) o.stages = stage_names(r, n["stages"], section + ".stages");
    if (n["disable"]) o.disable = stage_names(r, n["disable"], section + ".disable");
    if (n["timeout_ms"]) o.timeout = milliseconds(r.integer(n["timeout_ms"], section + ".timeout_ms", 0, 86400000));
    if (n["max_response_bytes"])
        o.max_response_bytes = r.integer(n["max_response_bytes"], section + ".max_response_bytes", 0, 1LL << 34);
    if (auto c = n["cache"]) {
        const std::string s = section + ".cache";
        r.only_keys(c, s, {"mode", "enabled", "ttl_s", "per_user"});
        if (c["mode"]) {
            auto mode = r.str(c["mode"], s + ".mode");
            if (mode == "read_only") o.cache_mode = pipeline::CacheMode::read_only;
            else if (mode == "all") o.cache_mode = pipeline::CacheMode::all;
            else if (mode == "off") o.cache_mode = pipeline::CacheMode::off;
            else r.fail(c["mode"], s + ".mode", fmt::format("must be read_only, all or off, got \"{}\"", mode));
        }
        if (c["enabled"]) o.cache_enabled = r.boolean(c["enabled"], s + ".enabled");
        if (c["ttl_s"]) o.cache_ttl = seconds(r.integer(c["ttl_s"], s + ".ttl_s", 1, 86400 * 30));
        if (c["per_user"]) o.cache_per_user = r.boolean(c["per_user"], s + ".per_user");
    }
    if (auto b = n["budget"]) {
        const std::string s = section + ".budget";
        r.only_keys(b, s, {"max_downstream_calls_per_request", "default_downstream_per_call", "scope_ttl_s",
                           "session_idle_s"});
        if (b["max_downstream_calls_per_request"]) {
            o.max_downstream_calls_per_request = r.integer(b["max_downstream_calls_per_request"],
                                                           s + ".max_downstream_calls_per_request", 0, 1000000000);
        }
        if (b["default_downstream_per_call"]) {
            o.default_downstream_per_call =
                r.integer(b["default_downstream_per_call"], s + ".default_downstream_per_call", 0, 1000000);
        }
        if (b["scope_ttl_s"]) o.budget_scope_ttl = seconds(r.integer(b["scope_ttl_s"], s + ".scope_ttl_s", 1, 86400 * 7));
        if (b["session_idle_s"]) {
            o.budget_session_idle = seconds(r.integer(b["session_idle_s"], s + ".session_idle_s", 1, 86400 * 7));
        }
    }
    if (auto q = n["client_quota"]) {
        const std::string s = section + ".client_quota";
        r.only_keys(q, s, {"per_minute", "burst"});
        if (q["per_minute"]) o.client_quota_per_minute = r.number(q["per_minute"], s + ".per_minute", 0, 1e9);
        if (q["burst"]) o.client_quota_burst = r.number(q["burst"], s + ".burst", 0, 1e9);
    }
    if (n["service"]) o.service = r.str(n["service"], section + ".service");
    if (n["task_support"]) {
        auto support = r.str(n["task_support"], section + ".task_support");
        if (support != "forbidden" && support != "optional" && support != "required") {
            r.fail(n["task_support"], section + ".task_support",
                   fmt::format("must be forbidden, optional or required, got \"{}\"", support));
        }
        o.task_support = std::move(support);
    }
    return o;
}

pipeline::ServicePolicy read_service(const ConfigReader& r, const YAML::Node& n, const std::string& section) {
    r.only_keys(n, section, {"min_spacing_ms", "rate_per_s", "burst", "max_wait_ms", "breaker"});
    pipeline::ServicePolicy p;
    if (n["min_spacing_ms"])
        p.rate_limit.min_spacing = milliseconds(r.integer(n["min_spacing_ms"], section + ".min_spacing_ms", 0, 3600000));
    if (n["rate_per_s"]) p.rate_limit.rate = r.number(n["rate_per_s"], section + ".rate_per_s", 0, 1e9);
    if (n["burst"]) p.rate_limit.burst = r.number(n["burst"], section + ".burst", 0, 1e9);
    if (p.rate_limit.rate > 0 && p.rate_limit.burst <= 0) p.rate_limit.burst = std::max(1.0, p.rate_limit.rate);
    p.rate_limit.max_wait = milliseconds(5000);
    if (n["max_wait_ms"])
        p.rate_limit.max_wait = milliseconds(r.integer(n["max_wait_ms"], section + ".max_wait_ms", 0, 3600000));
    if (auto b = n["breaker"]) {
        const std::string s = section + ".breaker";
        r.only_keys(b, s, {"failure_threshold", "cooldown_s"});
        if (b["failure_threshold"])
            p.breaker_failure_threshold = static_cast<int>(r.integer(b["failure_threshold"], s + ".failure_threshold", 0, 1000));
        if (b["cooldown_s"]) p.breaker_cooldown = seconds(r.integer(b["cooldown_s"], s + ".cooldown_s", 1, 86400));
    }
    return p;
}

void read_store(const ConfigReader& r, const YAML::Node& n, stores::StoreOptions& o) {
    if (n.IsScalar()) {
        o.url = r.str(n, "store");
        return;
    }
    r.only_keys(n, "store", {"url", "memory_cache_max_bytes", "memory_cache_max_entries", "key_prefix",
                             "rate_limit_fail_open", "redis_timeout_ms", "reconnect_interval_ms"});
    if (n["url"]) o.url = r.str(n["url"], "store.url");
    if (n["memory_cache_max_bytes"])
        o.memory_cache_max_bytes = r.integer(n["memory_cache_max_bytes"], "store.memory_cache_max_bytes", 0, 1LL << 40);
    if (n["memory_cache_max_entries"]) {
        o.memory_cache_max_entries =
            r.integer(n["memory_cache_max_entries"], "store.memory_cache_max_entries", 0, 1LL << 32);
    }
    if (n["key_prefix"]) o.key_prefix = r.str(n["key_prefix"], "store.key_prefix");
    if (n["rate_limit_fail_open"]) o.rate_limit_fail_open = r.boolean(n["rate_limit_fail_open"], "store.rate_limit_fail_open");
    if (n["redis_timeout_ms"])
        o.redis_timeout = milliseconds(r.integer(n["redis_timeout_ms"], "store.redis_timeout_ms", 1, 60000));
    if (n["reconnect_interval_ms"]) {
        o.reconnect_interval =
            milliseconds(r.integer(n["reconnect_interval_ms"], "store.reconnect_interval_ms", 10, 600000));
    }
}

void check_store_url(const ConfigReader& r, const YAML::Node& n, const std::string& url) {
    if (url != "memory" && url.rfind("redis://", 0) != 0)
        r.fail(n, "store", "must be \"memory\" or a redis://host:port[/db] URL");
}

}  // namespace

void read_pipeline_sections(const ConfigReader& r, const YAML::Node& root, Config& config) {
    auto& pc = config.pipeline;
    if (auto p = root["pipeline"]) read_override(r, p, "pipeline", false).apply_to(pc.defaults);
    if (auto s = root["services"]) {
        if (!s.IsMap()) r.fail(s, "services", "must be a mapping of service names");
        for (const auto& kv : s) {
            auto name = kv.first.as<std::string>();
            // /health reports the server and the store beside the services, by name.
            if (name == "server" || name == "store") {
                r.fail(kv.first, "services." + name,
                       "\"" + name + "\" names a component of /health; give the service another name");
            }
            pc.services[name] = read_service(r, kv.second, "services." + name);
        }
    }
    if (auto s = root["sources"]) {
        if (!s.IsMap()) r.fail(s, "sources", "must be a mapping of source names");
        for (const auto& kv : s) {
            auto name = kv.first.as<std::string>();
            pc.sources[name] = read_override(r, kv.second, "sources." + name, true);
        }
    }
    if (auto t = root["tools"]) {
        if (!t.IsMap()) r.fail(t, "tools", "must be a mapping of tool names");
        for (const auto& kv : t) {
            auto name = kv.first.as<std::string>();
            pc.tools[name] = read_override(r, kv.second, "tools." + name, true, true);
        }
    }
    if (auto s = root["store"]) {
        read_store(r, s, config.store);
        check_store_url(r, s, config.store.url);
    }
}

void apply_pipeline_env(Config& config) {
    auto read = [](const char* name, long long min, long long max) -> std::optional<long long> {
        const char* v = std::getenv(name);
        if (!v || !*v) return std::nullopt;
        try {
            std::size_t used = 0;
            long long n = std::stoll(v, &used);
            if (used != std::strlen(v) || n < min || n > max) throw std::out_of_range(name);
            return n;
        } catch (const std::logic_error&) {
            throw ConfigError(fmt::format("environment variable {} must be an integer from {} to {}", name, min, max));
        }
    };
    auto& d = config.pipeline.defaults;
    if (auto v = read("MAX_DOWNSTREAM_CALLS_PER_REQUEST", 0, 1000000000)) d.budget.max_downstream_calls_per_request = *v;
    if (auto v = read("DEFAULT_DOWNSTREAM_PER_MCP_CALL", 0, 1000000)) d.budget.default_downstream_per_call = *v;
    if (auto v = read("MAX_MCP_RESPONSE_SIZE_BYTES", 0, 1LL << 34)) d.max_response_bytes = static_cast<std::size_t>(*v);
    if (const char* store = std::getenv("TOOLPORT_STORE"); store && *store) {
        std::string url = store;
        if (url != "memory" && url.rfind("redis://", 0) != 0)
            throw ConfigError("environment variable TOOLPORT_STORE must be \"memory\" or a redis:// URL");
        config.store.url = url;
    }
}

}  // namespace toolport
