// RateLimitStore: one atomic "may this call go now?" per key, combining a minimum spacing
// between calls and a token bucket. Keys name what is limited: "svc:<service>" for a
// downstream service, "client:<identity>" for a caller's quota. Local (in-process) and
// Redis (one Lua script, so replicas share the limit) implementations.
#pragma once

#include <chrono>
#include <string>

#include "async/task.hpp"
#include "stores/store_health.hpp"

namespace toolport::stores {

struct RateLimitRule {
    // Calls under this key start at least this far apart (0: no spacing). A call that
    // arrives early is given a start time (`wait`) rather than refused, unless it would
    // wait longer than max_wait.
    std::chrono::milliseconds min_spacing{0};
    // Token bucket: `rate` tokens a second, at most `burst` saved up (rate 0: no bucket).
    double rate = 0;
    double burst = 0;
    std::chrono::milliseconds max_wait{0};
};

struct RateDecision {
    bool allowed = true;
    // When allowed: how long the caller must wait before starting (min spacing).
    std::chrono::milliseconds wait{0};
    // When refused: when trying again has a chance.
    std::chrono::milliseconds retry_after{0};
};

class RateLimitStore {
public:
    virtual ~RateLimitStore() = default;
    virtual std::string_view backend() const = 0;
    // Takes a slot (and a token) under `key` when the rule allows one. When the store is
    // away, answers by its fail-open / fail-closed policy (never throws for store trouble).
    virtual Task<RateDecision> acquire(const std::string& key, const RateLimitRule& rule) = 0;
    virtual StoreState state() const = 0;
};

}  // namespace toolport::stores
