// CircuitBreaker: the health of one downstream service, inferred from real calls (no
// pings). Closed: calls pass; `failure_threshold` consecutive failures open it. Open:
// calls fail fast until `cooldown` has passed. Half-open: exactly one probe call goes
// through; its success closes the circuit, its failure re-opens it for another cooldown.
// (The design this follows had no way back from open within a request; this one does.)
//
// Time comes from the caller, so tests drive it with a fake clock.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

namespace toolport::pipeline {

class CircuitBreaker {
public:
    using Clock = std::chrono::steady_clock;
    enum class State { closed, open, half_open };

    CircuitBreaker(int failure_threshold, std::chrono::milliseconds cooldown)
        : threshold_(failure_threshold), cooldown_(cooldown) {}

    struct Permit {
        bool allowed = false;
        bool probe = false;                        // this call is the half-open probe
        std::chrono::milliseconds retry_after{0};  // when refused
    };
    // Asks to make a call now. A granted probe must be followed by record_success,
    // record_failure or release.
    Permit try_acquire(Clock::time_point now);
    // `elapsed`: how long the successful call took (for the mean response time).
    void record_success(std::chrono::steady_clock::duration elapsed = {});
    void record_failure(Clock::time_point now, std::string error);
    // A permitted call ended without telling anything about the service (cancelled, or
    // refused before reaching it): a probe slot is given back.
    void release(const Permit& permit);

    State state(Clock::time_point now) const;
    int consecutive_failures() const { return consecutive_failures_; }
    long long total_calls() const { return total_calls_; }
    long long failed_calls() const { return failed_calls_; }
    const std::string& last_error() const { return last_error_; }
    // Mean duration of the successful calls, in ms (0 before the first).
    long long mean_success_ms() const;

private:
    int threshold_;
    std::chrono::milliseconds cooldown_;
    int consecutive_failures_ = 0;
    bool open_ = false;
    bool probe_in_flight_ = false;
    Clock::time_point opened_at_{};
    long long total_calls_ = 0;
    long long failed_calls_ = 0;
    std::string last_error_;
    std::chrono::steady_clock::duration success_time_{};
};

std::string_view to_string(CircuitBreaker::State state);

}  // namespace toolport::pipeline
