#include "pipeline/stages/rate_limit.hpp"

#include <fmt/format.h>

#include "observability/metrics.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"

namespace toolport::pipeline {

namespace {

ToolError rate_limited(std::string message, std::chrono::milliseconds retry_after) {
    return ToolError(ToolErrorCode::rate_limited, std::move(message))
        .retry_after(retry_after)
        .suggest(fmt::format("Wait {} ms, then retry the same call.", retry_after.count()));
}

}  // namespace

Task<ToolResult> RateLimitStage::handle(Call& call, const Next& next) {
    const auto& rule = call.policy->service_policy.rate_limit;
    const bool limited = rule.min_spacing.count() > 0 || rule.rate > 0;
    if (call.service().empty() || !limited) co_return co_await next(call);

    // One slot under the service's key: refused past the limit, waited for under spacing.
    auto take_slot = [this, &call, &rule]() -> Task<void> {
        auto decision = co_await store_.acquire("svc:" + call.service(), rule);
        if (!decision.allowed) {
            if (auto& span = call.ctx.span(); span.recording()) {
                span.add_event("rate_limit.refused", {{"toolport.service", call.service()},
                                                      {"retry_after_ms", std::int64_t{decision.retry_after.count()}}});
            }
            observability::metrics().increment("toolport_rate_limited_total",
                                               {{"scope", "service"}, {"service", call.service()}});
            throw rate_limited(fmt::format("Too many requests to {}: the limit is reached for now", call.service()),
                               decision.retry_after);
        }
        if (decision.wait.count() > 0) {
            if (auto& span = call.ctx.span(); span.recording()) {
                span.add_event("rate_limit.wait",
                               {{"toolport.service", call.service()}, {"wait_ms", std::int64_t{decision.wait.count()}}});
            }
            observability::metrics().observe("toolport_rate_limit_wait_seconds", {{"service", call.service()}},
                                             decision.wait.count() / 1000.0);
            co_await call.ctx.sleep(decision.wait);  // cancellable
        }
    };
    // A tool that paces its own requests takes its first slot when it sends its first
    // request; any other takes it now, for the one request it is assumed to make. Each
    // further request (pages, retries) takes a slot of its own through the pacer.
    if (!call.tool->paces_downstream) co_await take_slot();
    int requests = call.tool->paces_downstream ? 1 : 0;
    call.ctx.set_downstream_pacer([&take_slot, &requests]() -> Task<void> {
        if (requests++ == 0) co_return;  // the slot taken above
        co_await take_slot();
    });
    std::exception_ptr failure;
    ToolResult result;
    try {
        result = co_await next(call);
    } catch (...) {
        failure = std::current_exception();
    }
    // The pacer refers to this frame: it must not outlive it.
    call.ctx.set_downstream_pacer(nullptr);
    if (failure) std::rethrow_exception(failure);
    co_return result;
}

std::string ClientQuotaStage::client_identity(const CallerIdentity& caller) {
    // Hashed: the key is stored (Redis) and may be logged; the raw values are credentials.
    if (!caller.principal.empty()) return util::named_digest("token:", caller.principal);
    if (!caller.session_id.empty()) return util::named_digest("session:", caller.session_id);
    return {};
}

Task<ToolResult> ClientQuotaStage::handle(Call& call, const Next& next) {
    const auto& quota = call.policy->client_quota;
    if (quota.per_minute <= 0) co_return co_await next(call);
    const std::string identity = client_identity(call.ctx.caller());
    if (identity.empty()) co_return co_await next(call);

    stores::RateLimitRule rule;
    rule.rate = quota.per_minute / 60.0;
    rule.burst = quota.burst > 0 ? quota.burst : quota.per_minute;
    auto decision = co_await store_.acquire("client:" + identity, rule);
    if (!decision.allowed) {
        observability::metrics().increment("toolport_rate_limited_total", {{"scope", "client"}, {"service", ""}});
        throw rate_limited(fmt::format("This client's quota of {} calls a minute is used up", quota.per_minute),
                           decision.retry_after);
    }
    co_return co_await next(call);
}

}  // namespace toolport::pipeline
