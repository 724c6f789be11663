// ISO-8601 UTC timestamps for the health report and the JSON log lines (internal to
// src/observability).
#pragma once

#include <chrono>
#include <string>

namespace toolport::observability {

// "2026-11-22T07:50:50Z", or "2026-11-22T07:50:50.123Z" with milliseconds.
std::string iso8601_utc(std::chrono::system_clock::time_point time, bool with_millis);

}  // namespace toolport::observability
