// Checks shared by the local and Redis stores, so both refuse the same bad arguments with
// the same message (std::invalid_argument: a caller's mistake, not store trouble).
#pragma once

#include <chrono>
#include <cstdint>

#include "stores/rate_limit_store.hpp"

namespace toolport::stores {

// min_spacing and max_wait >= 0; rate and burst finite and >= 0.
void check_rule(const RateLimitRule& rule);
// amount >= 0 (a reservation never gives budget back; settle does) and ttl > 0.
void check_reservation(std::int64_t amount, std::chrono::milliseconds ttl);
// reserved and actual >= 0, ttl > 0.
void check_settlement(std::int64_t reserved, std::int64_t actual, std::chrono::milliseconds ttl);

// Durations beyond this (a year) are cut to it: it is longer than any useful TTL or
// spacing, and keeps `now + duration` far from overflowing the clock.
inline constexpr std::chrono::milliseconds longest_duration{366LL * 24 * 3600 * 1000};
inline std::chrono::milliseconds clamp_duration(std::chrono::milliseconds d) {
    return d > longest_duration ? longest_duration : d;
}

// The bucket's effective size: a bucket that cannot hold one token would refuse every call
// forever, so a rate with burst < 1 saves up one token.
inline double effective_burst(const RateLimitRule& rule) { return rule.burst < 1 ? 1.0 : rule.burst; }

}  // namespace toolport::stores
