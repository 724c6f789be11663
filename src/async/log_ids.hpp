// The trace and span ids of the request whose code is running on this thread, for log lines
// (observability/events.cpp writes them on every line while they are set). A request's
// coroutines carry them across suspensions: a Task takes the ids current where it is first
// awaited, puts them back each time it resumes, and clears them each time it suspends, so a
// line logged by whatever runs on the thread in between never names another request.
//
//   LogIdsScope scope(ids);          // the request's ids, current until the scope ends
//   spawn(handle(request), ...);     // its coroutines keep them wherever they resume
#pragma once

#include <array>
#include <cstdint>

namespace toolport {

struct LogIds {
    std::array<std::uint8_t, 16> trace_id{};
    std::array<std::uint8_t, 8> span_id{};
    bool set = false;
    // The trace is sampled (its spans are exported): only then may a metric name it as an
    // exemplar, which a reader follows to the trace. Log lines name it either way.
    bool sampled = false;
};

namespace detail {
inline thread_local LogIds current_log_ids;
}  // namespace detail

// The ids current on this thread (`set` false: none).
inline const LogIds& current_log_ids() { return detail::current_log_ids; }

// Makes `ids` current for the scope (and for the coroutines first awaited or spawned in it).
class LogIdsScope {
public:
    explicit LogIdsScope(const LogIds& ids) : saved_(detail::current_log_ids) { detail::current_log_ids = ids; }
    ~LogIdsScope() { detail::current_log_ids = saved_; }
    LogIdsScope(const LogIdsScope&) = delete;
    LogIdsScope& operator=(const LogIdsScope&) = delete;

private:
    LogIds saved_;
};

}  // namespace toolport
