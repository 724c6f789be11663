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
//     redact: {results: [email, card, ...], payloads: [all]}   # content_scan, util/redaction/
//     injection_scan: {enabled: BOOL, warning: true}
//   sources: {<provider>: <same keys as pipeline> + service}
//   tools:   {<tool name>: <same keys as pipeline> + service + task_support}
//            task_support: forbidden | optional | required   (the tool's execution.taskSupport)
//   services:
//     <name>: {min_spacing_ms: 100, rate_per_s: 10, burst: 20, max_wait_ms: 5000,
//              breaker: {failure_threshold: 3, cooldown_s: 30}}
//   guards: {<name>: {webhook: {...} | mcp: {...}, timeout_ms, failure_mode, ...}}  (guard_config.hpp)
//           attached with guards: [<name>, ...] in pipeline:, sources.<name> and tools.<name>
//   store: memory | redis://host:port/db      # or a mapping:
//   store: {url, memory_cache_max_bytes, memory_cache_max_entries, key_prefix,
//           rate_limit_fail_open, redis_timeout_ms, reconnect_interval_ms}
#include <algorithm>

#include <fmt/format.h>

#include "app/config_table.hpp"
#include "app/guard_config.hpp"
#include "app/pipeline_config.hpp"
#include "util/redaction/detectors.hpp"

namespace toolport {

namespace {

using namespace std::chrono;
namespace k = config_table;
namespace kp = config_table::pipeline;
using config::Key;
using config::Section;
using config::Settings;

std::vector<std::string> stage_names(const Settings& s, const Key& key) {
    auto names = *s.list(key);
    const auto& known = pipeline::default_stage_order();
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (std::find(known.begin(), known.end(), names[i]) == known.end()) {
            std::string list;
            for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
            s.fail_item(key.name, i, fmt::format("unknown stage \"{}\" (known: {})", names[i], list));
        }
    }
    return names;
}

util::redaction::DetectorSet detectors(const Settings& s, const Key& key) {
    const auto names = *s.list(key);
    std::string unknown;
    if (auto set = util::redaction::parse_detectors(names, &unknown)) return *set;
    const auto at = std::find(names.begin(), names.end(), unknown) - names.begin();
    std::string known = "secrets, personal, all";
    for (auto name : util::redaction::detector_names()) known += ", " + std::string(name);
    s.fail_item(key.name, static_cast<std::size_t>(at),
                fmt::format("unknown detector \"{}\" (known: {})", unknown, known));
}

// `section`: the keys this layer accepts (pipeline:, sources.<name> or tools.<name>).
// `guards`: those `guards:` declares, which its guards list may name.
pipeline::PolicyOverride read_override(const Settings& n, const Section& section,
                                       const std::map<std::string, pipeline::GuardSettings>& guards) {
    n.check_keys(section);
    pipeline::PolicyOverride o;
    if (n.has(kp::stages)) o.stages = stage_names(n, kp::stages);
    if (n.has(kp::disable)) o.disable = stage_names(n, kp::disable);
    if (auto v = n.duration<milliseconds>(kp::timeout_ms)) o.timeout = *v;
    if (auto v = n.integer(kp::max_response_bytes)) o.max_response_bytes = *v;
    if (n.has(kp::cache_key)) {
        namespace kc = kp::cache;
        auto c = n.section(kp::cache_key);
        c.check_keys(kc::section);
        if (auto mode = c.one_of(kc::mode)) {
            o.cache_mode = *mode == "all"   ? pipeline::CacheMode::all
                           : *mode == "off" ? pipeline::CacheMode::off
                                            : pipeline::CacheMode::read_only;
        }
        if (auto v = c.boolean(kc::enabled)) o.cache_enabled = *v;
        if (auto v = c.duration<seconds>(kc::ttl_s)) o.cache_ttl = *v;
        if (auto v = c.boolean(kc::per_user)) o.cache_per_user = *v;
    }
    // The pipeline's own budget section is the one environment variables may set.
    const Key& budget_key = &section == &kp::section ? kp::budget_defaults_key : kp::budget_key;
    if (n.has(budget_key)) {
        namespace kb = kp::budget;
        auto b = n.section(budget_key);
        b.check_keys(*budget_key.section);
        if (auto v = b.integer(kb::max_downstream_calls_per_request)) o.max_downstream_calls_per_request = *v;
        if (auto v = b.integer(kb::default_downstream_per_call)) o.default_downstream_per_call = *v;
        if (auto v = b.duration<seconds>(kb::scope_ttl_s)) o.budget_scope_ttl = *v;
        if (auto v = b.duration<seconds>(kb::session_idle_s)) o.budget_session_idle = *v;
    }
    if (n.has(kp::client_quota_key)) {
        namespace kq = kp::client_quota;
        auto q = n.section(kp::client_quota_key);
        q.check_keys(kq::section);
        if (auto v = q.number(kq::per_minute)) o.client_quota_per_minute = *v;
        if (auto v = q.number(kq::burst)) o.client_quota_burst = *v;
    }
    if (n.has(kp::redact_key)) {
        namespace kr = kp::redact;
        auto r = n.section(kp::redact_key);
        r.check_keys(kr::section);
        if (r.has(kr::results)) o.redact_results = detectors(r, kr::results);
        if (r.has(kr::payloads)) o.redact_payloads = detectors(r, kr::payloads);
    }
    if (n.has(kp::injection_scan_key)) {
        namespace ki = kp::injection_scan;
        auto i = n.section(kp::injection_scan_key);
        i.check_keys(ki::section);
        if (auto v = i.boolean(ki::enabled)) o.injection_scan = *v;
        if (auto v = i.boolean(ki::warning)) o.injection_warning = *v;
    }
    // OAuth scopes of a tool or source: read by config.cpp (read_scope_requirements).
    if (auto v = n.string(kp::service)) o.service = *v;
    if (auto v = n.one_of(kp::task_support)) o.task_support = *v;
    if (auto names = n.list(kp::guards)) {
        for (std::size_t i = 0; i < names->size(); ++i) {
            if (!guards.count((*names)[i])) {
                std::string known;
                for (const auto& [name, g] : guards) known += (known.empty() ? "" : ", ") + name;
                n.fail_item(kp::guards.name, i,
                            fmt::format("no guard \"{}\" under guards: (declared: {})", (*names)[i],
                                        known.empty() ? "none" : known));
            }
        }
        o.guards = *names;
    }
    // Redaction asked for where the same layer leaves its stage out would silently not
    // happen: said at once instead.
    if (o.redact_results && *o.redact_results) {
        const bool listed = !o.stages ||
                            std::find(o.stages->begin(), o.stages->end(), "content_scan") != o.stages->end();
        const bool disabled = std::find(o.disable.begin(), o.disable.end(), "content_scan") != o.disable.end();
        if (!listed || disabled) {
            n.fail(disabled ? kp::disable : kp::stages,
                   "leaves out content_scan, the stage that does what redact.results asks");
        }
    }
    return o;
}

pipeline::ServicePolicy read_service(const Settings& n) {
    namespace ks = k::service;
    n.check_keys(ks::section);
    pipeline::ServicePolicy p;
    if (auto v = n.duration<milliseconds>(ks::min_spacing_ms)) p.rate_limit.min_spacing = *v;
    if (auto v = n.number(ks::rate_per_s)) p.rate_limit.rate = *v;
    if (auto v = n.number(ks::burst)) p.rate_limit.burst = *v;
    if (p.rate_limit.rate > 0 && p.rate_limit.burst <= 0) p.rate_limit.burst = std::max(1.0, p.rate_limit.rate);
    p.rate_limit.max_wait = milliseconds(5000);
    if (auto v = n.duration<milliseconds>(ks::max_wait_ms)) p.rate_limit.max_wait = *v;
    if (n.has(ks::breaker_key)) {
        auto b = n.section(ks::breaker_key);
        b.check_keys(ks::breaker::section);
        if (auto v = b.integer(ks::breaker::failure_threshold)) p.breaker_failure_threshold = static_cast<int>(*v);
        if (auto v = b.duration<seconds>(ks::breaker::cooldown_s)) p.breaker_cooldown = *v;
    }
    return p;
}

void read_store(const Settings& root, stores::StoreOptions& o) {
    namespace ks = k::store;
    auto n = root.section(k::store_key);
    if (n.is_scalar()) {  // `store: redis://...`: the url alone
        o.url = n.scalar();
        return;
    }
    n.check_keys(ks::section);
    if (auto v = n.string(ks::url)) o.url = *v;
    if (auto v = n.integer(ks::memory_cache_max_bytes)) o.memory_cache_max_bytes = *v;
    if (auto v = n.integer(ks::memory_cache_max_entries)) o.memory_cache_max_entries = *v;
    if (auto v = n.string(ks::key_prefix)) o.key_prefix = *v;
    if (auto v = n.boolean(ks::rate_limit_fail_open)) o.rate_limit_fail_open = *v;
    if (auto v = n.duration<milliseconds>(ks::redis_timeout_ms)) o.redis_timeout = *v;
    if (auto v = n.duration<milliseconds>(ks::reconnect_interval_ms)) o.reconnect_interval = *v;
}

// Guards attached at a layer whose stage list (its own, or the one below it) leaves out
// "guard" would never run: refused, unless a layer says so with `disable: [guard]`. (A
// `stages:` list written before guards existed is the usual way to get there.)
void check_guards_run(const Settings& n, const pipeline::CallPolicy& defaults,
                      const std::vector<const pipeline::PolicyOverride*>& layers) {
    pipeline::CallPolicy policy = defaults;
    for (const auto* layer : layers) {
        layer->apply_to(policy);
        if (std::find(layer->disable.begin(), layer->disable.end(), "guard") != layer->disable.end()) return;
    }
    if (policy.guards.empty() || policy.stage_enabled("guard")) return;
    n.fail(kp::stages.name,
           "leaves out the guard stage, so the guards attached here would never run: add guard to the list "
           "(or say disable: [guard] to switch them off on purpose)");
}

}  // namespace

void read_pipeline_sections(const Settings& root, Config& config) {
    auto& pc = config.pipeline;
    pc.guards = read_guards(root);
    if (root.has(k::pipeline_key)) {
        auto n = root.section(k::pipeline_key);
        auto o = read_override(n, kp::section, pc.guards);
        check_guards_run(n, pc.defaults, {&o});
        o.apply_to(pc.defaults);
    }
    if (root.has(k::services)) {
        auto s = root.section(k::services);
        if (!s.is_mapping()) root.fail(k::services, "must be a mapping of service names");
        for (const auto& name : s.names()) {
            // /health reports the server and the store beside the services, by name.
            if (name == "server" || name == "store") {
                s.fail_at_key(name, "\"" + name + "\" names a component of /health; give the service another name");
            }
            pc.services[name] = read_service(s.entry(name));
        }
    }
    if (root.has(k::sources_key)) {
        auto s = root.section(k::sources_key);
        if (!s.is_mapping()) root.fail(k::sources_key, "must be a mapping of source names");
        for (const auto& name : s.names()) {
            auto entry = s.entry(name);
            pc.sources[name] = read_override(entry, kp::source_section, pc.guards);
            check_guards_run(entry, pc.defaults, {&pc.sources[name]});
            if (auto v = entry.one_of(kp::pinning)) config.pinning.sources[name] = *pins::parse_pin_policy(*v);
        }
    }
    if (root.has(k::tools)) {
        auto t = root.section(k::tools);
        if (!t.is_mapping()) root.fail(k::tools, "must be a mapping of tool names");
        for (const auto& name : t.names()) {
            pc.tools[name] = read_override(t.entry(name), kp::tool_section, pc.guards);
            check_guards_run(t.entry(name), pc.defaults, {&pc.tools[name]});
        }
    }
    if (root.has(k::store_key)) {
        read_store(root, config.store);
        const auto& url = config.store.url;
        if (url != "memory" && url.rfind("redis://", 0) != 0)
            root.fail(k::store_key, "must be \"memory\" or a redis://host:port[/db] URL");
    }
}

}  // namespace toolport
