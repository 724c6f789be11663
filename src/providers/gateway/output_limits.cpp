#include "providers/gateway/output_limits.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "observability/metrics.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

WindowLimiter::Verdict WindowLimiter::admit(std::size_t bytes, Clock::time_point now) {
    if (!started_ || now - window_start_ >= window_) {
        started_ = true;
        window_start_ = now;
        items_ = 0;
        bytes_ = 0;
    }
    if (items_ < max_items_ && bytes <= max_bytes_ - bytes_) {
        ++items_;
        bytes_ += bytes;
        return {true, false};
    }
    const bool first = dropped_.items == 0;
    ++dropped_.items;
    dropped_.bytes += bytes;
    return {false, first};
}

WindowLimiter::Dropped WindowLimiter::take_dropped() { return std::exchange(dropped_, Dropped{}); }

namespace {

const char* stream_label(bool stderr_stream) { return stderr_stream ? "stderr" : "log"; }

void count_drop(const std::string& upstream, const char* stream, std::size_t bytes) {
    auto& m = observability::metrics();
    m.increment("toolport_upstream_output_dropped_total", {{"upstream", upstream}, {"stream", stream}});
    m.increment("toolport_upstream_output_dropped_bytes_total", {{"upstream", upstream}, {"stream", stream}},
                static_cast<double>(bytes));
}

}  // namespace

UpstreamOutputGuard::UpstreamOutputGuard(std::string upstream, OutputLimits limits, Schedule schedule)
    : upstream_(std::move(upstream)),
      limits_(limits),
      schedule_(std::move(schedule)),
      stderr_(limits.stderr_lines, limits.stderr_bytes, limits.window),
      log_(limits.log_messages, limits.log_bytes, limits.window) {
    auto& m = observability::metrics();
    m.describe("toolport_upstream_output_dropped_total",
               "Upstream stderr lines, log messages and call notifications dropped over their limits");
    m.describe("toolport_upstream_output_dropped_bytes_total", "Bytes of the upstream output dropped over its limits");
}

UpstreamOutputGuard::~UpstreamOutputGuard() {
    if (cancel_stderr_summary_) cancel_stderr_summary_();
    if (cancel_log_summary_) cancel_log_summary_();
}

void UpstreamOutputGuard::stderr_line(std::string_view line) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) return;
    // The cost of a line is what it would add to the log: cut lines count as cut.
    const std::size_t bytes = std::min(line.size(), limits_.line_bytes);
    WindowLimiter::Verdict verdict;
    {
        std::lock_guard lock(mutex_);
        verdict = stderr_.admit(bytes, WindowLimiter::Clock::now());
    }
    if (!verdict.pass) return dropped(Stream::stderr_lines, bytes, verdict.first_drop);
    spdlog::info("upstream {} stderr: {}", upstream_, util::sanitize_for_message(line, limits_.line_bytes));
}

bool UpstreamOutputGuard::admit_log_message(std::size_t bytes) {
    WindowLimiter::Verdict verdict;
    {
        std::lock_guard lock(mutex_);
        verdict = log_.admit(bytes, WindowLimiter::Clock::now());
    }
    if (!verdict.pass) dropped(Stream::log, bytes, verdict.first_drop);
    return verdict.pass;
}

void UpstreamOutputGuard::count_call_drop(std::size_t bytes) { count_drop(upstream_, "call", bytes); }

void UpstreamOutputGuard::dropped(Stream stream, std::size_t bytes, bool first_drop) {
    count_drop(upstream_, stream_label(stream == Stream::stderr_lines), bytes);
    if (!first_drop || !schedule_) return;
    // One summary line at the end of the window, whatever was dropped in it.
    std::weak_ptr<UpstreamOutputGuard> weak = weak_from_this();
    auto cancel = schedule_(limits_.window, [weak, stream]() {
        if (auto self = weak.lock()) self->summarize(stream);
    });
    std::lock_guard lock(mutex_);
    (stream == Stream::stderr_lines ? cancel_stderr_summary_ : cancel_log_summary_) = std::move(cancel);
}

void UpstreamOutputGuard::summarize(Stream stream) {
    WindowLimiter::Dropped dropped;
    {
        std::lock_guard lock(mutex_);
        if (stream == Stream::stderr_lines) {
            dropped = stderr_.take_dropped();
            cancel_stderr_summary_ = nullptr;
        } else {
            dropped = log_.take_dropped();
            cancel_log_summary_ = nullptr;
        }
    }
    if (dropped.items == 0) return;
    const double seconds = static_cast<double>(limits_.window.count()) / 1000.0;
    if (stream == Stream::stderr_lines) {
        spdlog::warn(
            "upstream {}: dropped {} stderr lines ({} bytes) in the last {} s (limits: {} lines, {} bytes "
            "per {} s; upstreams.{}.output_limits)",
            upstream_, dropped.items, dropped.bytes, seconds, limits_.stderr_lines, limits_.stderr_bytes, seconds,
            upstream_);
    } else {
        spdlog::warn(
            "upstream {}: dropped {} log messages ({} bytes) in the last {} s (limits: {} messages, {} bytes "
            "per {} s; upstreams.{}.output_limits)",
            upstream_, dropped.items, dropped.bytes, seconds, limits_.log_messages, limits_.log_bytes, seconds,
            upstream_);
    }
}

bool CallNotificationBudget::admit(std::size_t bytes) {
    if (bytes <= limit_ - used_ && used_ <= limit_) {
        used_ += bytes;
        return true;
    }
    ++dropped_;
    return false;
}

}  // namespace toolport::gateway
