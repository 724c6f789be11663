#include "stores/argument_checks.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace toolport::stores {

void check_rule(const RateLimitRule& rule) {
    if (rule.min_spacing.count() < 0)
        throw std::invalid_argument("rate limit min_spacing must not be negative (got " +
                                    std::to_string(rule.min_spacing.count()) + " ms)");
    if (rule.max_wait.count() < 0)
        throw std::invalid_argument("rate limit max_wait must not be negative (got " +
                                    std::to_string(rule.max_wait.count()) + " ms)");
    if (!std::isfinite(rule.rate) || rule.rate < 0)
        throw std::invalid_argument("rate limit rate must be a finite number >= 0 tokens per second");
    if (!std::isfinite(rule.burst) || rule.burst < 0)
        throw std::invalid_argument("rate limit burst must be a finite number >= 0 tokens");
}

void check_reservation(std::int64_t amount, std::chrono::milliseconds ttl) {
    if (amount < 0)
        throw std::invalid_argument("budget reservation amount must not be negative (got " + std::to_string(amount) +
                                    ")");
    if (ttl.count() <= 0) throw std::invalid_argument("budget ttl must be positive");
}

void check_settlement(std::int64_t reserved, std::int64_t actual, std::chrono::milliseconds ttl) {
    if (reserved < 0) throw std::invalid_argument("budget settle: reserved must not be negative");
    if (actual < 0) throw std::invalid_argument("budget settle: actual must not be negative");
    if (ttl.count() <= 0) throw std::invalid_argument("budget ttl must be positive");
}

}  // namespace toolport::stores
