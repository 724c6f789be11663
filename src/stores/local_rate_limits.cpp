#include "stores/local_rate_limits.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "stores/argument_checks.hpp"

namespace toolport::stores {

using std::chrono::ceil;
using std::chrono::milliseconds;
using Seconds = std::chrono::duration<double>;

LocalRateLimits::LocalRateLimits(Executor& executor) : executor_(executor) {}

namespace {
// Rounded up: a caller that waits this long is never early. At least 1 ms for a refusal,
// so "retry after 0" never invites a busy loop.
milliseconds round_up(Executor::Clock::duration d) { return ceil<milliseconds>(d); }
milliseconds retry_delay(Executor::Clock::duration d) { return std::max(milliseconds(1), round_up(d)); }
// Token arithmetic is in seconds (double); rounded up to the clock's tick for the same
// reason (less a thousandth of a tick, so floating-point noise such as 1.0000000000000009 ms
// does not add a whole tick), and cut to a year (a near-zero rate would otherwise overflow).
Executor::Clock::duration clock_ticks_up(double seconds) {
    const double longest = Seconds(longest_duration).count();
    const double ticks = std::min(seconds, longest) * Executor::Clock::period::den / Executor::Clock::period::num;
    return Executor::Clock::duration(static_cast<Executor::Clock::rep>(std::ceil(ticks - 1e-3)));
}
// Token counts within this of a whole token count as it (floating-point noise again).
constexpr double token_tolerance = 1e-9;
}  // namespace

// The coroutine takes copies, so a task may outlive the caller's arguments.
Task<RateDecision> LocalRateLimits::acquire(const std::string& key, const RateLimitRule& rule) {
    return acquire_copy(key, rule);
}

Task<RateDecision> LocalRateLimits::acquire_copy(std::string key, RateLimitRule rule) { co_return decide(key, rule); }

RateDecision LocalRateLimits::decide(const std::string& key, const RateLimitRule& rule) {
    check_rule(rule);
    const auto min_spacing = clamp_duration(rule.min_spacing);
    const auto max_wait = clamp_duration(rule.max_wait);
    const bool spaced = min_spacing.count() > 0;
    const bool bucket = rule.rate > 0;
    if (!spaced && !bucket) return {};  // the rule limits nothing

    const auto now = executor_.now();
    sweep_if_due(now);
    const double burst = effective_burst(rule);

    auto found = keys_.find(key);
    KeyState state = found != keys_.end() && found->second.forget_at > now
                         ? found->second
                         : KeyState{now, burst, now, now};  // fresh: no slot taken, bucket full

    // Spacing: how long until this call's slot.
    auto slot_delay = Executor::Clock::duration::zero();
    if (spaced && state.next_start > now) slot_delay = state.next_start - now;
    // Bucket: refill for the time since the last take (a rule may have shrunk the burst).
    double tokens = state.tokens;
    if (bucket) tokens = std::min(burst, tokens + Seconds(now - state.refilled_at).count() * rule.rate);

    bool refused = false;
    auto retry = Executor::Clock::duration::zero();
    if (slot_delay > max_wait) {
        refused = true;
        retry = slot_delay - max_wait;
    }
    if (bucket && tokens + token_tolerance < 1) {
        refused = true;
        retry = std::max(retry, clock_ticks_up((1 - tokens) / rule.rate));
    }
    if (refused) return RateDecision{false, milliseconds(0), retry_delay(retry)};

    // Allowed: take the slot and the token.
    const auto start = now + slot_delay;
    state.next_start = spaced ? start + min_spacing : now;
    state.tokens = bucket ? tokens - 1 : burst;
    state.refilled_at = now;
    state.forget_at = state.next_start;
    if (bucket) {
        state.forget_at = std::max(state.forget_at, now + clock_ticks_up((burst - state.tokens) / rule.rate));
    }
    if (state.forget_at > now) {
        keys_.insert_or_assign(key, state);
    } else if (found != keys_.end()) {
        keys_.erase(found);
    }
    return RateDecision{true, round_up(slot_delay), milliseconds(0)};
}

// Amortised: a full pass every max(64, size) decisions costs O(1) per decision and keeps
// the map to the keys whose state still matters.
void LocalRateLimits::sweep_if_due(TimePoint now) {
    if (++decisions_since_sweep_ < std::max<std::size_t>(64, keys_.size())) return;
    decisions_since_sweep_ = 0;
    std::erase_if(keys_, [now](const auto& entry) { return entry.second.forget_at <= now; });
}

}  // namespace toolport::stores
