// Calls over time, kept in memory for the operator console: per source (and per downstream
// service) the last hour in 10-second steps — calls, errors and a latency histogram per
// step — and per tool the totals since the start. Bounded: a series is 360 steps whatever
// the traffic, a step's latencies are 48 counters.
//
// The call pipeline's observe stage records every tools/call here (pipeline/stages/
// observe.cpp); recording is a few relaxed atomic additions on cells it resolved once per
// tool, without a lock, so it costs a call next to nothing. Readers (the console, on the
// engine's loop) take snapshots; a step being written while it is read may be off by the
// call in flight, which a chart does not show.
//
//   auto& stats = observability::call_stats();
//   auto& series = stats.source("tango");                 // once; the reference stays valid
//   series.record(CallSeries::step_of(now), LatencyBins::bin_of(12.5), false);
//   auto steps = series.read(CallSeries::step_of(now));   // oldest first, 360 steps
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace toolport::observability {

// Call durations in 48 bins, each √2 wider than the last: from 16 µs up (bin 0 holds
// everything faster, bin 47 everything past ~4.5 min). Percentiles read from them are
// within a factor √2 of the truth, enough for a chart and a glance.
struct LatencyBins {
    static constexpr int kBins = 48;
    static int bin_of(double ms);
    // A representative duration of the bin (its geometric middle), in ms.
    static double value_ms(int bin);
    // The duration at quantile q (0..1) of the counts, or nullopt when there are none.
    static std::optional<double> quantile(const std::array<std::uint64_t, kBins>& counts, double q);
};

struct StepCounts {
    std::uint64_t calls = 0;
    std::uint64_t errors = 0;
    std::array<std::uint64_t, LatencyBins::kBins> latency{};
    StepCounts& operator+=(const StepCounts& other);
};

// One source's (or service's) last hour.
class CallSeries {
public:
    static constexpr int kStepSeconds = 10;
    static constexpr int kSteps = 360;
    // The step a moment of the steady clock falls in.
    static std::int64_t step_of(std::chrono::steady_clock::time_point t) {
        return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count() / kStepSeconds;
    }

    CallSeries();
    // A call in `step` that took LatencyBins::bin_of(its ms), and whether it failed.
    void record(std::int64_t step, int bin, bool error);
    // The kSteps steps ending with `step` (that step last); steps without calls are zero.
    std::vector<StepCounts> read(std::int64_t step) const;

private:
    struct Cell {
        std::atomic<std::int64_t> step{-1};
        std::atomic<std::uint32_t> calls{0};
        std::atomic<std::uint32_t> errors{0};
        std::array<std::atomic<std::uint32_t>, LatencyBins::kBins> latency{};
    };
    std::unique_ptr<Cell[]> cells_;
};

// One tool's calls since the start.
class CallTotals {
public:
    void record(int bin, bool error);
    StepCounts read() const;

private:
    std::atomic<std::uint64_t> calls_{0};
    std::atomic<std::uint64_t> errors_{0};
    std::array<std::atomic<std::uint64_t>, LatencyBins::kBins> latency_{};
};

// How close calls come to their per-request budgets (seed 002), by 10-second step over the
// last hour: the highest share of its budget a request scope reached, and the calls refused.
class BudgetPressure {
public:
    BudgetPressure();
    // A scope now at `used` of `limit` downstream calls.
    void note(std::int64_t step, std::int64_t used, std::int64_t limit);
    void refused(std::int64_t step);

    struct Reading {
        double peak = 0;            // the highest used/limit over the last minute, capped at 1
        std::uint64_t refused = 0;  // calls refused over the last hour
        bool any = false;           // a budget was reserved or refused in the last hour
    };
    Reading read(std::int64_t step) const;

private:
    struct Cell {
        std::atomic<std::int64_t> step{-1};
        std::atomic<std::uint32_t> peak_permille{0};
        std::atomic<std::uint32_t> refused{0};
    };
    Cell& cell_for(std::int64_t step);
    std::unique_ptr<Cell[]> cells_;
};

// The last error of a source: what and when.
struct LastError {
    std::string message;
    std::chrono::system_clock::time_point at;
};

// The process's series by name. Looking a name up takes a lock (once per tool: the
// observe stage keeps what it found); what it returns lives as long as the process.
class CallStats {
public:
    CallSeries& source(const std::string& name);
    CallSeries& service(const std::string& name);
    CallTotals& tool(const std::string& name);
    BudgetPressure& budgets() { return budgets_; }
    const BudgetPressure& budgets() const { return budgets_; }
    void set_last_error(const std::string& source, std::string message, std::chrono::system_clock::time_point at);

    std::vector<std::string> sources() const;
    const CallSeries* find_source(const std::string& name) const;
    const CallSeries* find_service(const std::string& name) const;
    const CallTotals* find_tool(const std::string& name) const;
    std::optional<LastError> last_error(const std::string& source) const;

private:
    mutable std::mutex mutex_;
    std::map<std::string, std::unique_ptr<CallSeries>, std::less<>> sources_;
    std::map<std::string, std::unique_ptr<CallSeries>, std::less<>> services_;
    std::map<std::string, std::unique_ptr<CallTotals>, std::less<>> tools_;
    std::map<std::string, LastError, std::less<>> last_errors_;
    BudgetPressure budgets_;
};

CallStats& call_stats();

}  // namespace toolport::observability
