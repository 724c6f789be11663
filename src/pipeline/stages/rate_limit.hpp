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
    Task<ToolResult> handle(Call& call, const Next& next) override;

private:
    stores::RateLimitStore& store_;
};

class ClientQuotaStage final : public Stage {
public:
    explicit ClientQuotaStage(stores::RateLimitStore& store) : store_(store) {}
    std::string_view name() const override { return "client_quota"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // "token:<hash>" or "session:<hash>"; empty when the caller cannot be told apart.
    static std::string client_identity(const CallerIdentity& caller);

private:
    stores::RateLimitStore& store_;
};

}  // namespace toolport::pipeline
