// The console's in-memory series: steps of 10 s over the last hour, the oldest forgotten as
// the hour moves on, latency percentiles from the bins, totals per tool.
#include <gtest/gtest.h>

#include "observability/call_series.hpp"

using namespace toolport::observability;

TEST(LatencyBins, BinsGrowWithTheDurationAndPercentilesLandNearTheTruth) {
    EXPECT_EQ(LatencyBins::bin_of(0), 0);
    EXPECT_EQ(LatencyBins::bin_of(-3), 0);
    int last = 0;
    for (double ms = 0.01; ms < 1e6; ms *= 1.1) {
        const int bin = LatencyBins::bin_of(ms);
        EXPECT_GE(bin, last) << ms;
        EXPECT_LT(bin, LatencyBins::kBins);
        last = bin;
        if (ms > 0.02 && ms < 100000) {
            const double v = LatencyBins::value_ms(bin);
            EXPECT_LT(v / ms, 1.6) << ms;
            EXPECT_GT(v / ms, 1 / 1.6) << ms;
        }
    }
    EXPECT_EQ(LatencyBins::bin_of(1e12), LatencyBins::kBins - 1);
    std::array<std::uint64_t, LatencyBins::kBins> counts{};
    EXPECT_FALSE(LatencyBins::quantile(counts, 0.5));
    for (int i = 0; i < 98; ++i) ++counts[LatencyBins::bin_of(2.0)];
    counts[LatencyBins::bin_of(500.0)] += 2;
    EXPECT_NEAR(*LatencyBins::quantile(counts, 0.5), 2.0, 0.8);
    EXPECT_NEAR(*LatencyBins::quantile(counts, 0.98), 2.0, 0.8);
    EXPECT_NEAR(*LatencyBins::quantile(counts, 0.99), 500.0, 200.0);
}

TEST(CallSeries, StepsOfTheLastHourOldestFirst) {
    CallSeries series;
    const std::int64_t now = 1000;
    series.record(now, LatencyBins::bin_of(5), false);
    series.record(now, LatencyBins::bin_of(7), true);
    series.record(now - 1, LatencyBins::bin_of(5), false);
    series.record(now - 359, LatencyBins::bin_of(1), false);
    series.record(now - 360, LatencyBins::bin_of(1), true);  // an hour ago: its cell holds a newer step, dropped
    auto steps = series.read(now);
    ASSERT_EQ(steps.size(), 360u);
    EXPECT_EQ(steps[359].calls, 2u);
    EXPECT_EQ(steps[359].errors, 1u);
    EXPECT_EQ(steps[358].calls, 1u);
    EXPECT_EQ(steps[0].calls, 1u);
    EXPECT_EQ(steps[0].errors, 0u);
    // An hour later, all of it is gone; the cell of a new step starts from nothing.
    auto later = series.read(now + 360);
    for (const auto& s : later) EXPECT_EQ(s.calls, 0u);
    series.record(now + 360, LatencyBins::bin_of(3), false);
    later = series.read(now + 360);
    EXPECT_EQ(later[359].calls, 1u);
    EXPECT_EQ(later[359].errors, 0u);
}

TEST(CallStats, NamesResolveOnceAndTotalsAddUp) {
    CallStats stats;
    auto& a = stats.tool("greet");
    EXPECT_EQ(&a, &stats.tool("greet"));
    a.record(LatencyBins::bin_of(3), false);
    a.record(LatencyBins::bin_of(4), true);
    auto t = stats.find_tool("greet")->read();
    EXPECT_EQ(t.calls, 2u);
    EXPECT_EQ(t.errors, 1u);
    EXPECT_EQ(stats.find_tool("nope"), nullptr);
    stats.source("demo");
    EXPECT_EQ(stats.sources(), std::vector<std::string>{"demo"});
    EXPECT_FALSE(stats.last_error("demo"));
    stats.set_last_error("demo", "greet: TOOL_ERROR", std::chrono::system_clock::time_point{});
    EXPECT_EQ(stats.last_error("demo")->message, "greet: TOOL_ERROR");
}

TEST(BudgetPressure, PeakOfTheLastMinuteAndRefusalsOfTheLastHour) {
    BudgetPressure pressure;
    const std::int64_t now = 1000;
    EXPECT_FALSE(pressure.read(now).any);
    pressure.note(now - 10, 9, 10);  // 100 s ago: past the minute, still in the hour
    pressure.note(now - 2, 3, 10);
    pressure.note(now - 2, 2, 10);  // a lower share does not lower the step's peak
    pressure.note(now, 5, 20);
    pressure.note(now, 50, 20);  // capped at the whole budget...
    pressure.note(now, 1, 0);    // ...and a call without a budget counts for nothing
    pressure.refused(now - 100);
    pressure.refused(now);
    auto reading = pressure.read(now);
    EXPECT_TRUE(reading.any);
    EXPECT_DOUBLE_EQ(reading.peak, 1.0);
    EXPECT_EQ(reading.refused, 2u);
    // A minute on, the minute's peak is what was noted since; an hour on, nothing is left.
    reading = pressure.read(now + 6);
    EXPECT_DOUBLE_EQ(reading.peak, 0.0);
    EXPECT_EQ(reading.refused, 2u);
    pressure.note(now + 6, 3, 10);
    EXPECT_DOUBLE_EQ(pressure.read(now + 6).peak, 0.3);
    EXPECT_FALSE(pressure.read(now + 6 + 360).any);
    // The cell of a step an hour later starts afresh.
    pressure.note(now + 360, 1, 10);
    reading = pressure.read(now + 360);
    EXPECT_DOUBLE_EQ(reading.peak, 0.1);
    EXPECT_EQ(reading.refused, 0u);
}
