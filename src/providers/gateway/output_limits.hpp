// Bounds on what an upstream makes us write and relay. An upstream is a program we run or
// a server we reach, not code we trust: left alone, a child writing 100 KB lines to its
// stderr grew our log by 537 MB in 9 s, and its log messages reached the caller of a call
// without limit. Per upstream:
//
//   - its stderr lines and its log messages (notifications/message, over any transport)
//     pass at most `stderr_lines` lines / `stderr_bytes` bytes and `log_messages` messages
//     / `log_bytes` bytes per window of `window_ms`; what is beyond is dropped, counted in
//     /metrics (toolport_upstream_output_dropped_total and _bytes_total, by upstream and
//     stream: stderr, log), and told in one summary line per window;
//   - a line of its stderr, or a log message written to our log, is cut to `line_bytes`;
//   - one call's notifications relayed to its caller (log messages and progress) take at
//     most `call_notification_bytes` in all; the rest are dropped for that call (counted
//     under stream="call").
//
//   upstreams:
//     chatty:
//       command: ...
//       output_limits: {window_ms: 10000, stderr_lines: 100, stderr_bytes: 65536,
//                       log_messages: 200, log_bytes: 262144, line_bytes: 2000,
//                       call_notification_bytes: 1048576}
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace toolport::gateway {

struct OutputLimits {
    std::chrono::milliseconds window{std::chrono::seconds(10)};
    std::size_t stderr_lines = 100;
    std::size_t stderr_bytes = 64 * 1024;
    std::size_t log_messages = 200;
    std::size_t log_bytes = 256 * 1024;
    std::size_t line_bytes = 2000;
    std::size_t call_notification_bytes = 1024 * 1024;
};

// At most `max_items` items and `max_bytes` bytes per window of `window`; the window starts
// with the first item after the last one ended. The caller supplies the time, so it is
// tested without waiting.
class WindowLimiter {
public:
    using Clock = std::chrono::steady_clock;
    struct Dropped {
        std::size_t items = 0;
        std::size_t bytes = 0;
    };
    struct Verdict {
        bool pass = false;
        // The first item dropped since the last take_dropped(): time to plan a summary.
        bool first_drop = false;
    };

    WindowLimiter(std::size_t max_items, std::size_t max_bytes, std::chrono::milliseconds window)
        : max_items_(max_items), max_bytes_(max_bytes), window_(window) {}

    Verdict admit(std::size_t bytes, Clock::time_point now);
    // What was dropped since the last call (then zero again).
    Dropped take_dropped();

private:
    std::size_t max_items_;
    std::size_t max_bytes_;
    std::chrono::milliseconds window_;
    bool started_ = false;
    Clock::time_point window_start_{};
    std::size_t items_ = 0;
    std::size_t bytes_ = 0;
    Dropped dropped_;
};

// One upstream's stderr and log message limits, kept across its reconnections (each
// connection's transport holds it). Thread-safe; in practice called on the event loop.
class UpstreamOutputGuard : public std::enable_shared_from_this<UpstreamOutputGuard> {
public:
    // `schedule(delay, fn)` runs fn later (the summary line at the end of a window);
    // its cancel function is kept until the guard goes.
    using Schedule = std::function<std::function<void()>(std::chrono::milliseconds, std::function<void()>)>;

    UpstreamOutputGuard(std::string upstream, OutputLimits limits, Schedule schedule);
    ~UpstreamOutputGuard();

    const OutputLimits& limits() const { return limits_; }

    // A line of the child's stderr: written to our log (cut to line_bytes), or dropped.
    void stderr_line(std::string_view line);
    // A log message of `bytes` (its data as JSON): whether it may be relayed or logged.
    bool admit_log_message(std::size_t bytes);
    // A call's notification dropped for being over its budget (counted, no summary line:
    // the call's end is its bound).
    void count_call_drop(std::size_t bytes);

private:
    enum class Stream { stderr_lines, log };
    void dropped(Stream stream, std::size_t bytes, bool first_drop);
    void summarize(Stream stream);

    const std::string upstream_;
    const OutputLimits limits_;
    Schedule schedule_;
    std::mutex mutex_;
    WindowLimiter stderr_;
    WindowLimiter log_;
    std::function<void()> cancel_stderr_summary_;
    std::function<void()> cancel_log_summary_;
};

// The relayed notifications of one call: at most `limit` bytes; what is beyond is dropped
// (and counted with the upstream's guard).
class CallNotificationBudget {
public:
    explicit CallNotificationBudget(std::size_t limit) : limit_(limit) {}
    // Whether a notification of `bytes` may still go to the caller.
    bool admit(std::size_t bytes);
    std::size_t dropped() const { return dropped_; }

private:
    std::size_t limit_;
    std::size_t used_ = 0;
    std::size_t dropped_ = 0;
};

}  // namespace toolport::gateway
