#include "pipeline/circuit_breaker.hpp"

#include <algorithm>

namespace toolport::pipeline {

std::string_view to_string(CircuitBreaker::State state) {
    switch (state) {
        case CircuitBreaker::State::closed: return "closed";
        case CircuitBreaker::State::open: return "open";
        case CircuitBreaker::State::half_open: return "half-open";
    }
    return "closed";
}

CircuitBreaker::State CircuitBreaker::state(Clock::time_point now) const {
    if (!open_) return State::closed;
    return now - opened_at_ >= cooldown_ ? State::half_open : State::open;
}

CircuitBreaker::Permit CircuitBreaker::try_acquire(Clock::time_point now) {
    switch (state(now)) {
        case State::closed: return {true, false, {}};
        case State::open: {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(opened_at_ + cooldown_ - now);
            return {false, false, std::max(left, std::chrono::milliseconds(1))};
        }
        case State::half_open:
            if (probe_in_flight_) {
                // One probe at a time; the others wait for its verdict.
                return {false, false, std::chrono::milliseconds(std::min<long long>(cooldown_.count(), 1000))};
            }
            probe_in_flight_ = true;
            return {true, true, {}};
    }
    return {true, false, {}};
}

long long CircuitBreaker::mean_success_ms() const {
    const long long successes = total_calls_ - failed_calls_;
    if (successes <= 0) return 0;
    return std::chrono::duration_cast<std::chrono::milliseconds>(success_time_).count() / successes;
}

void CircuitBreaker::record_success(std::chrono::steady_clock::duration elapsed) {
    success_time_ += elapsed;
    ++total_calls_;
    consecutive_failures_ = 0;
    open_ = false;
    probe_in_flight_ = false;
}

void CircuitBreaker::record_failure(Clock::time_point now, std::string error) {
    ++total_calls_;
    ++failed_calls_;
    ++consecutive_failures_;
    last_error_ = std::move(error);
    const bool probe_failed = open_;  // a failure while open can only be the probe's
    if (probe_failed || (threshold_ > 0 && consecutive_failures_ >= threshold_)) {
        open_ = true;
        opened_at_ = now;
    }
    probe_in_flight_ = false;
}

void CircuitBreaker::release(const Permit& permit) {
    if (permit.probe) probe_in_flight_ = false;
}

}  // namespace toolport::pipeline
