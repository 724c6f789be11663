#include "pipeline/stages/timeout.hpp"

#include <fmt/format.h>

#include "async/executor.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

namespace {

ToolError timeout_error(std::chrono::milliseconds limit) {
    return ToolError(ToolErrorCode::timeout, fmt::format("The tool did not finish within {} ms and was cancelled",
                                                         limit.count()))
        .suggest("Retry with a narrower request: a lower limit, more specific filters, or fewer items at once.");
}

}  // namespace

Task<ToolResult> TimeoutStage::handle(Call& call, const Next& next) {
    const auto limit = call.policy->timeout;
    if (limit.count() <= 0) co_return co_await next(call);

    // Both live in this frame, which outlives the timer: it is cancelled on every path out.
    bool expired = false;
    RequestContext& ctx = call.ctx;
    auto cancel_timer = ctx.executor().schedule_after(limit, [&expired, &ctx]() {
        expired = true;
        ctx.cancel_token().cancel(kCancelReason);
    });
    ToolResult result;
    try {
        result = co_await next(call);
    } catch (const OperationCancelled&) {
        cancel_timer();
        if (expired) throw timeout_error(limit);
        throw;
    } catch (...) {
        cancel_timer();
        // A handler that failed because its work was cancelled at the deadline timed out.
        if (expired) throw timeout_error(limit);
        throw;
    }
    cancel_timer();
    // Finished after the deadline anyway (it ignored the cancellation): still late.
    if (expired) throw timeout_error(limit);
    co_return result;
}

}  // namespace toolport::pipeline
