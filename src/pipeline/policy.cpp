#include "pipeline/policy.hpp"

#include <algorithm>

#include "server/registry.hpp"

namespace toolport::pipeline {

const std::vector<std::string>& default_stage_order() {
    // Cheap refusals first (bad arguments, an over-quota client), then the external guards
    // (outside the cache, so a cached result is checked as a fresh one is), then the cache
    // (a hit costs nothing downstream), then what guards the downstream service. The content
    // scan sits inside the cache, so that what is kept there is redacted and labelled already.
    static const std::vector<std::string> order = {"validate",     "client_quota",    "guard",  "cache",
                                                   "content_scan", "circuit_breaker", "budget", "rate_limit",
                                                   "timeout",      "size_cap"};
    return order;
}

bool CallPolicy::stage_enabled(std::string_view name) const {
    return std::find(stages.begin(), stages.end(), name) != stages.end();
}

void PolicyOverride::apply_to(CallPolicy& p) const {
    if (stages) p.stages = *stages;
    for (const auto& off : disable) std::erase(p.stages, off);
    if (cache_enabled) p.cache.enabled = *cache_enabled;
    if (cache_mode) p.cache.mode = *cache_mode;
    if (cache_ttl) p.cache.ttl = *cache_ttl;
    if (cache_per_user) p.cache.per_user = *cache_per_user;
    if (timeout) p.timeout = *timeout;
    if (max_response_bytes) p.max_response_bytes = *max_response_bytes;
    if (max_downstream_calls_per_request) p.budget.max_downstream_calls_per_request = *max_downstream_calls_per_request;
    if (default_downstream_per_call) p.budget.default_downstream_per_call = *default_downstream_per_call;
    if (budget_scope_ttl) p.budget.scope_ttl = *budget_scope_ttl;
    if (budget_session_idle) p.budget.session_idle = *budget_session_idle;
    if (client_quota_per_minute) p.client_quota.per_minute = *client_quota_per_minute;
    if (client_quota_burst) p.client_quota.burst = *client_quota_burst;
    if (service) p.service = *service;
    for (const auto& g : guards) {
        if (std::find(p.guards.begin(), p.guards.end(), g) == p.guards.end()) p.guards.push_back(g);
    }
    if (redact_results) p.content_scan.results = *redact_results;
    if (redact_payloads) p.content_scan.payloads = *redact_payloads;
    if (injection_scan) p.content_scan.injection = *injection_scan;
    if (injection_warning) p.content_scan.injection_warning = *injection_warning;
}

PolicyResolver::PolicyResolver(PipelineConfig config) : config_(std::move(config)) {}

std::shared_ptr<const CallPolicy> PolicyResolver::resolve(const ToolSpec& tool) {
    std::string key = tool.source + '\n' + tool.name + '\n' + tool.service;
    if (auto it = by_key_.find(key); it != by_key_.end()) return it->second;

    auto policy = std::make_shared<CallPolicy>(config_.defaults);
    policy->service = tool.service;
    if (auto d = source_defaults_.find(tool.source); !tool.source.empty() && d != source_defaults_.end()) {
        const auto configured = policy->timeout;
        d->second.apply_to(*policy);
        // A source's own deadline (an upstream's timeout_ms) shortens the pipeline's, never
        // lengthens it: the shorter one wins. The configuration's `sources:` and `tools:`
        // entries, applied next, still set it as they say.
        if (d->second.timeout && configured.count() > 0 && d->second.timeout->count() > 0) {
            policy->timeout = std::min(configured, *d->second.timeout);
        }
    }
    if (auto s = config_.sources.find(tool.source); !tool.source.empty() && s != config_.sources.end())
        s->second.apply_to(*policy);
    if (auto t = config_.tools.find(tool.name); t != config_.tools.end()) t->second.apply_to(*policy);
    if (!policy->content_scan.injection) policy->content_scan.injection = untrusted_.count(tool.source) > 0;
    if (!policy->service.empty()) {
        if (auto svc = config_.services.find(policy->service); svc != config_.services.end())
            policy->service_policy = svc->second;
    }
    by_key_.emplace(std::move(key), policy);
    return policy;
}

void PolicyResolver::add_source_default(const std::string& source, PolicyOverride layer) {
    source_defaults_[source] = std::move(layer);
}

bool PolicyResolver::add_service_default(const std::string& service, ServicePolicy policy) {
    return config_.services.emplace(service, std::move(policy)).second;
}

}  // namespace toolport::pipeline
