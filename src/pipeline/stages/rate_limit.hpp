// Rate limits, both backed by the shared RateLimitStore (local, or Redis so that replicas
// share one limit):
//  - RateLimitStage ("rate_limit"): per downstream service, a minimum spacing between
//    calls (the seed's 100 ms; an early call waits for its slot) and a token bucket.
//  - ClientQuotaStage ("client_quota"): per client identity (the bearer token's subject,
//    else the session), a quota of calls a minute.
// Over the limit → RATE_LIMITED with retry_after_ms.
#pragma once

#include "pipeline/pipeline.hpp"
#include "stores/rate_limit_store.hpp"

namespace toolport::pipeline {

class RateLimitStage final : public Stage {
public:
    explicit RateLimitStage(stores::RateLimitStore& store) : store_(store) {}
    std::string_view name() const override { return "rate_limit"; }
    // No service, or no limit on it.
    bool passes_through(const CallPolicy& policy) const override {
        const auto& rule = policy.service_policy.rate_limit;
        return policy.service.empty() || !(rule.min_spacing.count() > 0 || rule.rate > 0);
    }
    Task<ToolResult> handle(Call& call, const Next& next) override;

private:
    stores::RateLimitStore& store_;
};

class ClientQuotaStage final : public Stage {
public:
    explicit ClientQuotaStage(stores::RateLimitStore& store) : store_(store) {}
    std::string_view name() const override { return "client_quota"; }
    bool passes_through(const CallPolicy& policy) const override { return policy.client_quota.per_minute <= 0; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // "token:<hash>" or "session:<hash>"; empty when the caller cannot be told apart.
    static std::string client_identity(const CallerIdentity& caller);

private:
    stores::RateLimitStore& store_;
};

}  // namespace toolport::pipeline
