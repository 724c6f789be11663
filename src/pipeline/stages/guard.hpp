// GuardStage ("guard"): sends each call's arguments, before it runs, and its result, after,
// to the guards its policy names (CallPolicy::guards, from `pipeline.guards`,
// `sources.<name>.guards` and `tools.<name>.guards`), one after the other in that order.
// Each guard allows, denies or allows with a replacement, which the next guard and the
// tool (before) or the client (after) then get.
//
// A denial is a tool error MCP_GUARD_DENIED with the guard's reason and suggestion. A guard
// that gives no verdict (unreachable, past its timeout_ms, at its max_concurrency for that
// long, a reply that is no verdict) fails the call with MCP_GUARD_UNAVAILABLE under
// failure_mode: closed, and lets it proceed with a warning under open. A verdict the guard
// marks cacheable is kept in the cache store, up to the guard's cache_verdicts_s, under a
// digest of the guard, phase, tool, caller and input, so the same question is not asked
// twice. Counted in toolport_guard_checks_total, timed in toolport_guard_check_seconds, and
// listed in the call's audit record ("guards": guard, phase, decision, cached).
//
// The stage sits where the policy's stage list puts it ("guard", after validate and
// client_quota, outside the cache: a cached result is checked as a fresh one is); a policy
// without guards leaves it out of the chain.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "observability/metrics.hpp"
#include "pipeline/guard.hpp"
#include "pipeline/pipeline.hpp"
#include "stores/cache_store.hpp"

namespace toolport::pipeline {

class GuardStage final : public Stage {
public:
    GuardStage(Executor& executor, stores::CacheStore& cache) : executor_(executor), cache_(cache) {}
    // Before the first call.
    void add_guard(GuardSettings settings, std::shared_ptr<Guard> guard);
    bool has_guard(const std::string& name) const { return guards_.count(name) > 0; }
    // Ends every guard's connections (shutdown).
    void terminate();

    std::string_view name() const override { return "guard"; }
    bool passes_through(const CallPolicy& policy) const override { return policy.guards.empty(); }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // The cache key of a verdict: the guard, phase, tool, caller and a digest of the input.
    static std::string verdict_key(const std::string& guard, const GuardInput& input, const Json& payload);

private:
    struct Entry {
        GuardSettings settings;
        std::shared_ptr<Guard> guard;
        std::unique_ptr<GuardLimiter> limiter;
    };
    // Asks one guard about `payload` (the arguments or the result), through its cache and
    // concurrency limit. Throws ToolError for a denial and a failure under closed mode.
    // Each verdict (or failure) is marked on `call` for its audit record.
    Task<GuardVerdict> ask(Entry& entry, const GuardInput& input, const Json& payload, Call& call);
    void count(const std::string& guard, GuardPhase phase, std::string_view outcome);

    Executor& executor_;
    stores::CacheStore& cache_;
    std::map<std::string, Entry> guards_;
    observability::HandleCache<observability::Counter> counters_;
    observability::HandleCache<observability::Histogram> durations_;
};

}  // namespace toolport::pipeline
