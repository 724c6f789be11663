// Policies: what the pipeline's stages do for one tool. The configuration sets defaults
// for every tool (`pipeline:`), overrides per source (`sources: {<provider>: …}`) and per
// tool (`tools: {<name>: …}`), and per downstream service (`services: {<name>: …}`: rate
// limits and circuit breakers belong to the service a tool calls, shared by all its tools).
// The PolicyResolver folds these layers into one CallPolicy per tool, once, and hands the
// same object to every call of that tool.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "pipeline/guard.hpp"
#include "stores/rate_limit_store.hpp"
#include "util/redaction/detectors.hpp"

namespace toolport {
struct ToolSpec;
}

namespace toolport::pipeline {

// The stage names, in their default order (outermost first).
const std::vector<std::string>& default_stage_order();

enum class CacheMode { read_only, all, off };

struct CachePolicy {
    // Whether results of this tool are cached. Unset: decided by the cache mode (read_only:
    // tools whose annotations say readOnlyHint: true).
    std::optional<bool> enabled;
    CacheMode mode = CacheMode::read_only;
    std::chrono::seconds ttl{300};
    // Results differ per caller (the source answers with the caller's credentials): the
    // caller's identity is part of the key.
    bool per_user = false;
};

struct BudgetPolicy {
    std::int64_t max_downstream_calls_per_request = 120;  // MAX_DOWNSTREAM_CALLS_PER_REQUEST
    std::int64_t default_downstream_per_call = 12;        // DEFAULT_DOWNSTREAM_PER_MCP_CALL
    std::chrono::seconds scope_ttl{3600};                 // a request's tally is forgotten after this
    // A session's tally (no traceparent or toolport/request marks its user requests) is
    // forgotten after this long without calls: the gap between two of the user's turns.
    std::chrono::seconds session_idle{60};
};

struct ClientQuotaPolicy {
    double per_minute = 0;  // calls a minute per client identity (0: unlimited)
    double burst = 0;       // saved-up calls (0: same as per_minute)
};

// Per downstream service.
struct ServicePolicy {
    stores::RateLimitRule rate_limit;   // spacing + token bucket; all zero: unlimited
    int breaker_failure_threshold = 3;  // consecutive failures that open the circuit (0: no breaker)
    std::chrono::milliseconds breaker_cooldown{30000};
};

// The built-in content scan (stages/content_scan.hpp, util/redaction/).
struct ContentScanPolicy {
    // Detectors run on the tool's results (none by default: a result is the tool's answer).
    util::redaction::DetectorSet results = 0;
    // Detectors run on what is written down about a call: the audit record's arguments and
    // the payloads on trace spans (every one by default: logs keep no secrets).
    util::redaction::DetectorSet payloads = util::redaction::kAllDetectors;
    // Label results that hold prompt-injection markers. Unset: on for the sources Toolport
    // does not own (gateway upstreams, REST catalogs, OpenAPI documents).
    std::optional<bool> injection;
    // The label includes a leading text block that warns the model.
    bool injection_warning = true;

    bool injection_on() const { return injection.value_or(false); }
};

// Everything the stages need to know for one tool.
struct CallPolicy {
    std::vector<std::string> stages = default_stage_order();  // in order; a stage not listed is off
    CachePolicy cache;
    std::chrono::milliseconds timeout{30000};
    std::size_t max_response_bytes = 1u << 20;  // MAX_MCP_RESPONSE_SIZE_BYTES
    BudgetPolicy budget;
    ClientQuotaPolicy client_quota;
    std::string service;  // downstream service ("" : none)
    ServicePolicy service_policy;
    // The guards (`guards:` by name) its calls pass, in the order their layers name them.
    std::vector<std::string> guards;
    ContentScanPolicy content_scan;

    bool stage_enabled(std::string_view name) const;
};

// One layer of overrides, as read from the configuration (unset fields inherit).
struct PolicyOverride {
    std::optional<std::vector<std::string>> stages;
    std::vector<std::string> disable;  // stage names switched off at this layer
    std::optional<bool> cache_enabled;
    std::optional<CacheMode> cache_mode;
    std::optional<std::chrono::seconds> cache_ttl;
    std::optional<bool> cache_per_user;
    std::optional<std::chrono::milliseconds> timeout;
    std::optional<std::size_t> max_response_bytes;
    std::optional<std::int64_t> max_downstream_calls_per_request;
    std::optional<std::int64_t> default_downstream_per_call;
    std::optional<std::chrono::seconds> budget_scope_ttl;
    std::optional<std::chrono::seconds> budget_session_idle;
    std::optional<double> client_quota_per_minute;
    std::optional<double> client_quota_burst;
    std::optional<std::string> service;
    // Guards added at this layer: they add to those of the layers below (pipeline:, the
    // source), never replace them, so a tool's entry cannot drop its source's guard.
    std::vector<std::string> guards;
    std::optional<util::redaction::DetectorSet> redact_results;
    std::optional<util::redaction::DetectorSet> redact_payloads;
    std::optional<bool> injection_scan;
    std::optional<bool> injection_warning;
    // `tools: {<name>: {task_support: ...}}` only: "forbidden", "optional" or "required",
    // replacing the tool's own execution.taskSupport when it is registered (not a call
    // policy: apply_to leaves it out).
    std::optional<std::string> task_support;

    void apply_to(CallPolicy& policy) const;
};

struct PipelineConfig {
    CallPolicy defaults;
    std::map<std::string, PolicyOverride> sources;  // by provider name (ToolSpec::source)
    std::map<std::string, PolicyOverride> tools;    // by tool name
    std::map<std::string, ServicePolicy> services;  // by service name
    std::map<std::string, GuardSettings> guards;    // by guard name
};

class PolicyResolver {
public:
    explicit PolicyResolver(PipelineConfig config);
    // The policy of `tool` (computed on first use, then shared).
    std::shared_ptr<const CallPolicy> resolve(const ToolSpec& tool);
    const PipelineConfig& config() const { return config_; }
    // A source's own default for `service` (Tango's 100 ms between requests): used unless
    // the configuration has an entry for that service. Returns whether it was taken. Must
    // come before the service's tools are first resolved (a source sets it in start(),
    // before adding them): resolved policies are shared and never change.
    bool add_service_default(const std::string& service, ServicePolicy policy);
    // A source's own defaults for its tools (the context pack's: no cache, since its
    // files change under it), applied before the configuration's `sources:` entry for it,
    // which may override them. Same timing rule as add_service_default.
    void add_source_default(const std::string& source, PolicyOverride layer);
    // A source Toolport does not own (its tools' results are scanned for prompt-injection
    // markers unless the configuration says otherwise). Same timing rule.
    void add_untrusted_source(const std::string& source) { untrusted_.insert(source); }

private:
    PipelineConfig config_;
    std::map<std::string, PolicyOverride> source_defaults_;
    std::set<std::string> untrusted_;
    std::unordered_map<std::string, std::shared_ptr<const CallPolicy>> by_key_;
};

}  // namespace toolport::pipeline
