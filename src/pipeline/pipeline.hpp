// The call pipeline: every tools/call, whatever its source (built-in pack, REST catalog,
// upstream MCP server), passes through the same chain of stages around the tool's handler:
// accounting and observation on every call, then the configurable stages (validation,
// client quota, cache, circuit breaker, budget, rate limit, timeout, size cap) in the
// order, and with the switches, that the tool's policy (policy.hpp) says.
//
// A stage is a small class with one method. It does its part and calls `next` (or
// answers without it: a cache hit, a refusal). A refusal or failure is a thrown ToolError;
// any other exception from a handler reaches the stages as ToolError INTERNAL_ERROR.
//
//   Pipeline p(PolicyResolver(config));
//   p.add_always(std::make_shared<MetaAccounting>());
//   p.add(std::make_shared<ValidationStage>());
//   server.set_tool_invoker(p.invoker());
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pipeline/policy.hpp"
#include "server/server.hpp"
#include "stores/audit_record.hpp"

namespace toolport::pipeline {

// Whether a result came from the cache (reported in result._meta.cache_status).
enum class CacheStatus { hit, miss, partial, bypass };
std::string_view to_string(CacheStatus status);

class Stage;

// One tool call on its way through the stages.
struct Call {
    Call(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool, const Json& arguments,
         std::shared_ptr<const CallPolicy> policy)
        : ctx(ctx), tool(std::move(tool)), arguments(arguments), policy(std::move(policy)) {}

    RequestContext& ctx;
    std::shared_ptr<const ToolSpec> tool;
    const Json& arguments;
    std::shared_ptr<const CallPolicy> policy;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    // Accounting filled in by stages and sources, reported in result._meta.
    std::optional<int> downstream_api_calls;
    CacheStatus cache_status = CacheStatus::bypass;
    // What each guard said (the guard stage adds, the audit record lists them).
    std::vector<stores::GuardMark> guard_marks;

    // The stages this call runs through (set by the Pipeline from the policy).
    const std::vector<Stage*>* chain = nullptr;

    const std::string& service() const { return policy->service; }
};

using Next = std::function<Task<ToolResult>(Call&)>;

// The ToolResult a stage declares before it is assigned the next stage's (or an error's):
// unlike a default one, it makes no empty content array only to drop it.
inline ToolResult unassigned_result() {
    return ToolResult{.content = Json(), .structured_content = Json(), .is_error = false, .meta = Json()};
}

class Stage {
public:
    virtual ~Stage() = default;
    // The name configuration uses for it ("validate", "cache", ...).
    virtual std::string_view name() const = 0;
    virtual Task<ToolResult> handle(Call& call, const Next& next) = 0;
    // True when, under `policy`, handle() would only call `next`, whatever the call (no
    // quota, no budget, no rate limit): the pipeline then leaves the stage out of the
    // policy's chain, and a call skips its coroutine. Decided from the policy alone, since
    // chains are kept per policy.
    virtual bool passes_through(const CallPolicy& /*policy*/) const { return false; }
    // For a stage whose work comes and goes with the moment rather than the policy (the
    // audit stage, idle with no log while nobody follows its feed): when sometimes_idle(),
    // the chain asks idle() before each call and, while it is, skips the stage's coroutine.
    virtual bool sometimes_idle() const { return false; }
    virtual bool idle() const { return false; }
};

class Pipeline {
public:
    explicit Pipeline(PolicyResolver resolver = PolicyResolver(PipelineConfig{}));

    // Runs on every call, before the configurable stages, in the order added.
    void add_always(std::shared_ptr<Stage> stage);
    // A configurable stage: runs where a tool's policy lists its name.
    void add(std::shared_ptr<Stage> stage);

    PolicyResolver& policies() { return resolver_; }

    // Runs a call through the stages its policy selects, then the tool's handler.
    Task<ToolResult> run(RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool, const Json& arguments);
    // The McpServer hook that sends every tools/call through this pipeline. The pipeline
    // must outlive the server's use of it.
    ToolInvoker invoker();

private:
    // A policy's stages, and for each the `next` it is handed: next[i] runs stage i (the
    // last, the handler). Made once per policy, so a call allocates no std::function and
    // passes through no coroutine of the pipeline's own between two stages.
    struct Chain {
        std::vector<Stage*> stages;
        std::vector<Next> next;
    };
    const Chain& chain_for(const CallPolicy& policy);
    static Task<ToolResult> run_handler(Call& call);

    PolicyResolver resolver_;
    std::vector<std::shared_ptr<Stage>> always_;
    std::vector<std::shared_ptr<Stage>> configurable_;
    std::unordered_map<const CallPolicy*, std::unique_ptr<Chain>> chains_;
};

}  // namespace toolport::pipeline
