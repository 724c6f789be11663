#include "pipeline/stages/circuit_breaker_stage.hpp"

#include <fmt/format.h>

#include "async/executor.hpp"
#include "observability/events.hpp"
#include "observability/metrics.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

namespace {

enum class Verdict { success, failure, neutral };

Verdict verdict_of(ToolErrorCode code) {
    switch (code) {
        case ToolErrorCode::upstream_error:
        case ToolErrorCode::timeout:
        case ToolErrorCode::internal_error: return Verdict::failure;
        case ToolErrorCode::rate_limited:
        case ToolErrorCode::budget_exceeded:
        case ToolErrorCode::missing_api_key:
        case ToolErrorCode::server_unhealthy:
        case ToolErrorCode::upstream_credentials_unavailable:
        case ToolErrorCode::upstream_authorization_failed:
            return Verdict::neutral;       // refused on our side: the service was never asked
        default: return Verdict::success;  // the service answered; the call itself was wrong
    }
}

void report_state(const std::string& service, CircuitBreaker::State state) {
    observability::metrics().set("toolport_circuit_state", {{"service", service}},
                                 state == CircuitBreaker::State::closed      ? 0
                                 : state == CircuitBreaker::State::half_open ? 1
                                                                             : 2);
}

}  // namespace

CircuitBreaker& CircuitBreakerStage::breaker_for(const std::string& service, const ServicePolicy& policy) {
    auto it = breakers_.find(service);
    if (it == breakers_.end()) {
        it = breakers_.emplace(service, CircuitBreaker(policy.breaker_failure_threshold, policy.breaker_cooldown)).first;
        if (on_new_service) on_new_service(service);
    }
    return it->second;
}

Task<ToolResult> CircuitBreakerStage::handle(Call& call, const Next& next) {
    const std::string& service = call.service();
    if (service.empty() || call.policy->service_policy.breaker_failure_threshold <= 0) co_return co_await next(call);

    Executor& executor = call.ctx.executor();
    CircuitBreaker& breaker = breaker_for(service, call.policy->service_policy);
    const auto permit = breaker.try_acquire(executor.now());
    if (!permit.allowed) {
        if (auto& span = call.ctx.span(); span.recording()) {
            span.add_event("circuit_breaker.refused",
                           {{"toolport.service", service},
                            {"consecutive_failures", std::int64_t{breaker.consecutive_failures()}},
                            {"retry_after_ms", std::int64_t{permit.retry_after.count()}}});
        }
        observability::metrics().increment("toolport_circuit_rejections_total", {{"service", service}});
        observability::log_event(observability::EventLevel::warn, "mcp_server_unhealthy",
                                 {{"tool_name", call.tool->name},
                                  {"server_id", service},
                                  {"consecutive_failures", breaker.consecutive_failures()},
                                  {"retry_after_ms", permit.retry_after.count()}},
                                 call.ctx.trace_context());
        throw ToolError(ToolErrorCode::server_unhealthy,
                        fmt::format("Service {} is currently unhealthy ({} consecutive failures); calls to it are "
                                    "paused",
                                    service, breaker.consecutive_failures()))
            .retry_after(permit.retry_after)
            .suggest(fmt::format("Wait {} ms and retry, use another tool or source for this data, or check the "
                                 "service's status.",
                                 permit.retry_after.count()));
    }

    const auto before = breaker.state(executor.now());
    const auto started = std::chrono::steady_clock::now();
    // Per service, beside the per-tool series: what /metrics shows of each upstream.
    ServiceSeries& series = series_.get(service, [] { return ServiceSeries{}; });
    auto count = [&service, &series](bool success) {
        observability::Counter& counter = success ? series.success : series.failure;
        if (!counter) {
            counter = observability::metrics().counter("toolport_service_calls_total",
                                                       {{"service", service},
                                                        {"outcome", success ? "success" : "failure"}});
        }
        counter.increment();
    };
    ToolResult result;
    try {
        result = co_await next(call);
    } catch (const ToolError& e) {
        switch (verdict_of(e.code())) {
            case Verdict::failure:
                breaker.record_failure(executor.now(), e.what());
                count(false);
                break;
            case Verdict::success:
                breaker.record_success(std::chrono::steady_clock::now() - started);
                count(true);
                break;
            case Verdict::neutral: breaker.release(permit); break;
        }
        if (auto after = breaker.state(executor.now()); after != before) report_state(service, after);
        throw;
    } catch (...) {
        breaker.release(permit);  // cancelled, or answered as a JSON-RPC error by the engine
        throw;
    }
    const auto elapsed = std::chrono::steady_clock::now() - started;
    breaker.record_success(elapsed);
    count(true);
    if (!series.response) {
        series.response = observability::metrics().histogram("toolport_service_response_seconds",
                                                             {{"service", service}});
    }
    series.response.observe(std::chrono::duration<double>(elapsed).count());
    if (before != CircuitBreaker::State::closed) report_state(service, CircuitBreaker::State::closed);
    co_return result;
}

CircuitBreaker::State CircuitBreakerStage::state_of(const std::string& service,
                                                    CircuitBreaker::Clock::time_point now) const {
    auto it = breakers_.find(service);
    return it == breakers_.end() ? CircuitBreaker::State::closed : it->second.state(now);
}

std::vector<CircuitBreakerStage::ServiceHealth> CircuitBreakerStage::snapshot(CircuitBreaker::Clock::time_point now) const {
    std::vector<ServiceHealth> out;
    for (const auto& [service, b] : breakers_)
        out.push_back({service, b.state(now), b.consecutive_failures(), b.total_calls(), b.failed_calls(),
                       b.mean_success_ms(), b.last_error()});
    return out;
}

}  // namespace toolport::pipeline
