// LocalRateLimits: rate limits kept in this process (`store: memory`).
//
// One decision per call, under one key, combining both conditions of the rule:
//   - minimum spacing: calls start at least min_spacing apart. A call that arrives before
//     its slot is allowed with `wait` = the time until the slot, and takes the slot (the
//     next call's slot is one spacing later); if it would wait longer than max_wait it is
//     refused with retry_after = how much sooner it would have had to come.
//   - token bucket: `rate` tokens a second up to `burst` (at least 1); a call takes one
//     token; without one it is refused with retry_after = time until one has refilled.
// A call is allowed only if both allow it; a refused call takes nothing (no slot, no
// token). RedisRateLimits runs exactly these semantics in one Lua script.
//
// A key is forgotten once its state equals a fresh one (its last slot has passed and its
// bucket has refilled), so memory holds only keys in recent use.
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>

#include "async/executor.hpp"
#include "stores/rate_limit_store.hpp"

namespace toolport::stores {

class LocalRateLimits final : public RateLimitStore {
public:
    // `executor` supplies the clock (tests use a fake one).
    explicit LocalRateLimits(Executor& executor);

    std::string_view backend() const override { return "memory"; }
    // The decision, or std::invalid_argument for a rule with negative or non-finite values.
    Task<RateDecision> acquire(const std::string& key, const RateLimitRule& rule) override;
    StoreState state() const override { return StoreState::available; }

    RateDecision decide(const std::string& key, const RateLimitRule& rule);
    std::size_t tracked_keys() const { return keys_.size(); }

private:
    using TimePoint = Executor::Clock::time_point;
    struct KeyState {
        TimePoint next_start;  // the earliest start of the next call (min spacing)
        double tokens = 0;     // bucket content at refilled_at
        TimePoint refilled_at;
        TimePoint forget_at;  // from then on the state equals a fresh one
    };

    Task<RateDecision> acquire_copy(std::string key, RateLimitRule rule);
    void sweep_if_due(TimePoint now);

    Executor& executor_;
    std::unordered_map<std::string, KeyState> keys_;
    std::size_t decisions_since_sweep_ = 0;
};

}  // namespace toolport::stores
