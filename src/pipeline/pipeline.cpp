#include "pipeline/pipeline.hpp"

#include "async/completion.hpp"
#include "server/input_required.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

std::string_view to_string(CacheStatus status) {
    switch (status) {
        case CacheStatus::hit: return "hit";
        case CacheStatus::miss: return "miss";
        case CacheStatus::partial: return "partial";
        case CacheStatus::bypass: return "bypass";
    }
    return "bypass";
}

Pipeline::Pipeline(PolicyResolver resolver) : resolver_(std::move(resolver)) {}

void Pipeline::add_always(std::shared_ptr<Stage> stage) {
    always_.push_back(std::move(stage));
    chains_.clear();
}

void Pipeline::add(std::shared_ptr<Stage> stage) {
    configurable_.push_back(std::move(stage));
    chains_.clear();
}

const Pipeline::Chain& Pipeline::chain_for(const CallPolicy& policy) {
    // Policies live as long as the resolver, so their address names them.
    auto it = chains_.find(&policy);
    if (it != chains_.end()) return *it->second;
    auto chain = std::make_unique<Chain>();
    for (const auto& s : always_) chain->stages.push_back(s.get());
    for (const auto& name : policy.stages) {
        for (const auto& s : configurable_) {
            if (s->name() == name && !s->passes_through(policy)) chain->stages.push_back(s.get());
        }
    }
    // Sized first: each function refers to the next one's place, which must not move.
    const std::size_t n = chain->stages.size();
    chain->next.resize(n + 1);
    for (std::size_t i = 0; i < n; ++i) {
        Stage* stage = chain->stages[i];
        if (stage->sometimes_idle()) {
            chain->next[i] = [stage, &after = chain->next[i + 1]](Call& c) {
                return stage->idle() ? after(c) : stage->handle(c, after);
            };
            continue;
        }
        chain->next[i] = [stage, &after = chain->next[i + 1]](Call& c) { return stage->handle(c, after); };
    }
    chain->next[n] = [](Call& c) { return run_handler(c); };
    return *chains_.emplace(&policy, std::move(chain)).first->second;
}

Task<ToolResult> Pipeline::run(RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool, const Json& arguments) {
    Call call(ctx, tool, arguments, resolver_.resolve(*tool));
    const Chain& chain = chain_for(*call.policy);
    call.chain = &chain.stages;
    co_return co_await chain.next.front()(call);
}

Task<ToolResult> Pipeline::run_handler(Call& call) {
    try {
        co_return co_await call.tool->handler(call.ctx, call.arguments);
    } catch (const ToolError&) {
        throw;
    } catch (const RpcError& e) {
        // The engine answers the handler's own as JSON-RPC errors; one the client answered
        // a request of the handler's with (a refused sampling) is the tool's failure.
        if (!e.from_peer) throw;
        throw ToolError(ToolErrorCode::internal_error, e.what())
            .suggest("The client refused what the tool asked of it (e.g. the user declined)");
    } catch (const InputRequired&) {
        throw;  // the engine answers with an InputRequiredResult
    } catch (const OperationCancelled&) {
        throw;  // cancelled by the client, or by the timeout stage
    } catch (const std::exception& e) {
        // Stages see every handler failure in the one shape (a breaker counts it, the
        // accounting measures it).
        throw ToolError(ToolErrorCode::internal_error, e.what())
            .suggest("The tool failed unexpectedly; retrying may not help. Report it if it persists.")
            .recoverable(false);
    }
}

ToolInvoker Pipeline::invoker() {
    return [this](RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool, const Json& arguments) {
        return run(ctx, tool, arguments);
    };
}

}  // namespace toolport::pipeline
