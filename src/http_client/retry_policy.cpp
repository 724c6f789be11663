#include "http_client/retry_policy.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <ctime>
#include <string>

namespace toolport::http_client {

using namespace std::chrono_literals;

bool idempotent(std::string_view method) {
    for (std::string_view m : {"GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"}) {
        if (method == m) return true;
    }
    return false;
}

bool retryable_status(unsigned status) { return status == 502 || status == 503 || status == 504; }

namespace {

// IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" (the form servers send today).
std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text) {
    static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (text.size() != 29 || text.substr(25) != " GMT" || text[3] != ',') return std::nullopt;
    auto number = [&](std::size_t at, std::size_t len) -> int {
        int n = 0;
        for (std::size_t i = at; i < at + len; ++i) {
            if (!std::isdigit(static_cast<unsigned char>(text[i]))) return -1;
            n = n * 10 + (text[i] - '0');
        }
        return n;
    };
    std::tm tm{};
    tm.tm_mday = number(5, 2);
    auto month = std::find_if(kMonths.begin(), kMonths.end(), [&](const char* m) { return text.substr(8, 3) == m; });
    if (month == kMonths.end()) return std::nullopt;
    tm.tm_mon = static_cast<int>(month - kMonths.begin());
    tm.tm_year = number(12, 4) - 1900;
    tm.tm_hour = number(17, 2);
    tm.tm_min = number(20, 2);
    tm.tm_sec = number(23, 2);
    if (tm.tm_mday < 1 || tm.tm_year < 70 || tm.tm_hour < 0 || tm.tm_min < 0 || tm.tm_sec < 0 || text[19] != ':' ||
        text[22] != ':') {
        return std::nullopt;
    }
    return std::chrono::system_clock::from_time_t(timegm(&tm));
}

}  // namespace

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value,
                                                           std::chrono::system_clock::time_point now) {
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (value.empty()) return std::nullopt;
    if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        if (value.size() > 9) return std::chrono::milliseconds(std::chrono::hours(24 * 365));
        return std::chrono::seconds(std::stol(std::string(value)));
    }
    auto when = parse_http_date(value);
    if (!when) return std::nullopt;
    return std::max(0ms, std::chrono::duration_cast<std::chrono::milliseconds>(*when - now));
}

std::chrono::milliseconds backoff(int attempt, double random01, std::optional<std::chrono::milliseconds> retry_after) {
    const int doublings = std::clamp(attempt - 2, 0, 10);
    const auto ceiling = std::min<std::chrono::milliseconds>(100ms * (1 << doublings), 5000ms);
    const auto pause = ceiling / 2 + std::chrono::milliseconds(static_cast<long long>(ceiling.count() / 2.0 * random01));
    return retry_after ? std::max(pause, *retry_after) : pause;
}

}  // namespace toolport::http_client
