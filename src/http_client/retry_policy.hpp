// When to try a request again, and how long to wait first (Asio-free, for tests).
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace toolport::http_client {

// GET, HEAD, PUT, DELETE, OPTIONS, TRACE: sending them twice does no more than once.
bool idempotent(std::string_view method);
// 502, 503 and 504: the service (or a gateway in front of it) had trouble, not the request.
bool retryable_status(unsigned status);

// Retry-After as seconds ("120") or an HTTP-date; nullopt when absent or unreadable.
// `now` is the wall clock (for dates). Never negative.
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now);

// The pause before attempt `attempt` (2 = the first retry): 100 ms doubling up to 5 s, the
// upper half jittered so that many clients do not retry in step; at least `retry_after`.
// `random01` is a number in [0, 1).
std::chrono::milliseconds backoff(int attempt, double random01,
                                  std::optional<std::chrono::milliseconds> retry_after = std::nullopt);

}  // namespace toolport::http_client
