// CircuitBreakerStage ("circuit_breaker"): one CircuitBreaker per downstream service
// (policy.service; tools without one pass straight through). While a service's circuit is
// open, its tools fail fast with SERVER_UNHEALTHY and retry_after_ms, and the event
// mcp_server_unhealthy is logged. Failures are what says the service is in trouble —
// UPSTREAM_ERROR, TIMEOUT, INTERNAL_ERROR from its source; a tool result with isError or
// an error about the call itself (NOT_FOUND, INVALID_ARGUMENT, ...) proves the service
// answered and counts as success.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "observability/metrics.hpp"
#include "pipeline/circuit_breaker.hpp"
#include "pipeline/pipeline.hpp"

namespace toolport::pipeline {

class CircuitBreakerStage final : public Stage {
public:
    std::string_view name() const override { return "circuit_breaker"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    struct ServiceHealth {
        std::string service;
        CircuitBreaker::State state;
        int consecutive_failures;
        long long total_calls;
        long long failed_calls;
        long long avg_response_ms;  // mean of the successful calls
        std::string last_error;
    };
    // Every service seen so far, for /health and the orchestration summary.
    std::vector<ServiceHealth> snapshot(CircuitBreaker::Clock::time_point now) const;
    // One service's state: closed (also for a service not called yet), open or half-open.
    CircuitBreaker::State state_of(const std::string& service, CircuitBreaker::Clock::time_point now) const;
    // Called once for each service the first time a call goes to it (to add it to /health).
    std::function<void(const std::string& service)> on_new_service;

private:
    CircuitBreaker& breaker_for(const std::string& service, const ServicePolicy& policy);
    std::map<std::string, CircuitBreaker> breakers_;
    // A service's series, each made when first updated (a series shows in /metrics once it
    // exists): building the labels and looking them up by name cost more per call than the
    // rest of the stage.
    struct ServiceSeries {
        observability::Counter success;
        observability::Counter failure;
        observability::Histogram response;
    };
    observability::HandleCache<ServiceSeries> series_;  // by service
};

}  // namespace toolport::pipeline
