#include "pipeline/stages/timeout.hpp"

#include <fmt/format.h>

#include "async/executor.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

namespace {

ToolError timeout_error(std::chrono::milliseconds limit) {
    return ToolError(ToolErrorCode::timeout,
                     fmt::format("The tool did not finish within {} ms and was cancelled", limit.count()))
        .suggest("Retry with a narrower request: a lower limit, more specific filters, or fewer items at once.");
}

// The deadline of one call. Time spent waiting for the client's answers (an elicitation
// a person fills in) is not the tool's work: when the timer fires during or after such a
// wait, it re-arms for the work time that is left.
struct Deadline {
    RequestContext& ctx;
    Executor& executor;
    std::chrono::milliseconds limit;
    Executor::Clock::time_point start;
    bool expired = false;
    std::function<void()> cancel_timer;

    void arm(std::chrono::milliseconds delay) {
        cancel_timer = executor.schedule_after(delay, [this]() { fire(); });
    }
    void fire() {
        const auto worked = executor.now() - start - ctx.client_wait();
        if (worked < limit) {
            arm(std::chrono::ceil<std::chrono::milliseconds>(limit - worked));
            return;
        }
        expired = true;
        ctx.cancel_token().cancel(TimeoutStage::kCancelReason);
    }
    void disarm() {
        if (cancel_timer) cancel_timer();
        cancel_timer = nullptr;
    }
};

}  // namespace

Task<ToolResult> TimeoutStage::handle(Call& call, const Next& next) {
    const auto limit = call.policy->timeout;
    if (limit.count() <= 0) co_return co_await next(call);

    // Lives in this frame, which outlives the timer: it is disarmed on every path out.
    Deadline deadline{call.ctx, call.ctx.executor(), limit, call.ctx.executor().now(), false, nullptr};
    deadline.arm(limit);
    // For downstream clients (retry backoff, Retry-After): a wall-clock bound. Time spent
    // waiting for the user (which the timer does not count) can only extend the real one.
    call.ctx.set_deadline(std::chrono::steady_clock::now() + limit);
    ToolResult result = unassigned_result();
    try {
        result = co_await next(call);
    } catch (...) {
        deadline.disarm();
        // A handler that failed because its work was cancelled at the deadline timed out.
        if (deadline.expired) {
            call.ctx.span().add_event("timeout.expired", {{"timeout_ms", std::int64_t{limit.count()}}});
            throw timeout_error(limit);
        }
        throw;
    }
    deadline.disarm();
    // Finished after the deadline anyway (it ignored the cancellation): still late.
    if (deadline.expired) {
        call.ctx.span().add_event("timeout.expired", {{"timeout_ms", std::int64_t{limit.count()}}});
        throw timeout_error(limit);
    }
    co_return result;
}

}  // namespace toolport::pipeline
