#include "pipeline/pipeline.hpp"

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

Task<ToolResult> Pipeline::run(Call& call) const { return run_from(0, call); }

Task<ToolResult> Pipeline::run_from(std::size_t index, Call& call) const {
    if (index == stages_.size()) co_return co_await call.tool->handler(call.ctx, call.arguments);
    const Next next = [this, index](Call& c) { return run_from(index + 1, c); };
    co_return co_await stages_[index]->handle(call, next);
}

ToolInvoker Pipeline::invoker() const {
    return [this](RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                  const Json& arguments) -> Task<ToolResult> {
        Call call{ctx, tool, arguments};
        co_return co_await run(call);
    };
}

}  // namespace toolport::pipeline
