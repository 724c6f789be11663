#include "observability/iso_time.hpp"

#include <ctime>

#include <fmt/format.h>

namespace toolport::observability {

std::string iso8601_utc(std::chrono::system_clock::time_point time, bool with_millis) {
    using namespace std::chrono;
    // Floor, not truncation toward zero, so times before 1970 still get the right second.
    auto seconds = floor<std::chrono::seconds>(time);
    auto millis = duration_cast<milliseconds>(time - seconds).count();
    std::time_t t = system_clock::to_time_t(seconds);
    std::tm tm{};
    gmtime_r(&t, &tm);
    if (with_millis) {
        return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                           tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
    }
    return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                       tm.tm_min, tm.tm_sec);
}

}  // namespace toolport::observability
