// The overview's pieces: one state from a source's health and breaker, a series as JSON,
// the last minute's numbers.
#include <gtest/gtest.h>

#include "console/overview.hpp"
#include "console/replica_roster.hpp"

using namespace toolport;
using namespace toolport::console;
using observability::ComponentHealth;
using observability::LatencyBins;
using observability::Severity;
using observability::StepCounts;

TEST(ConsoleOverview, OneStateFromHealthAndBreaker) {
    EXPECT_EQ(source_state(std::nullopt, "none"), "healthy");
    EXPECT_EQ(source_state(std::nullopt, "closed"), "healthy");
    EXPECT_EQ(source_state(std::nullopt, "half_open"), "degraded");
    EXPECT_EQ(source_state(std::nullopt, "open"), "down");
    EXPECT_EQ(source_state(ComponentHealth{"connected (2025-11-25)", Severity::ok}, "closed"), "healthy");
    EXPECT_EQ(source_state(ComponentHealth{"connecting", Severity::degraded}, "none"), "degraded");
    EXPECT_EQ(source_state(ComponentHealth{"loading", Severity::degraded}, "none"), "degraded");
    EXPECT_EQ(source_state(ComponentHealth{"reconnecting in 2.0 s: refused", Severity::degraded}, "none"), "down");
    EXPECT_EQ(source_state(ComponentHealth{"stopped", Severity::degraded}, "none"), "down");
    EXPECT_EQ(source_state(ComponentHealth{"unreachable", Severity::unhealthy}, "none"), "down");
    EXPECT_EQ(source_state(ComponentHealth{"connected", Severity::ok}, "open"), "down");
}

TEST(ConsoleOverview, SeriesAndTheLastMinute) {
    std::vector<StepCounts> steps(360);
    steps[359].calls = 30;
    steps[359].errors = 3;
    steps[359].latency[LatencyBins::bin_of(10)] = 30;
    steps[100].calls = 1;
    steps[100].latency[LatencyBins::bin_of(1)] = 1;
    auto series = series_json(steps, 1795860000);
    EXPECT_EQ(series["step_s"], 10);
    EXPECT_EQ(series["end"], 1795860000);
    ASSERT_EQ(series["calls"].size(), 360u);
    EXPECT_EQ(series["calls"][359], 30);
    EXPECT_EQ(series["errors"][359], 3);
    EXPECT_TRUE(series["p50_ms"][0].is_null()) << "no calls, no latency";
    EXPECT_NEAR(series["p50_ms"][359].get<double>(), 10.0, 4.0);
    Json recent = Json::object();
    recent_numbers(steps, recent);
    EXPECT_DOUBLE_EQ(recent["calls_per_s"].get<double>(), 0.5);  // 30 in the last minute
    EXPECT_DOUBLE_EQ(recent["error_rate"].get<double>(), 0.1);
    EXPECT_NEAR(recent["p99_ms"].get<double>(), 10.0, 4.0);
    Json idle = Json::object();
    recent_numbers(std::vector<StepCounts>(360), idle);
    EXPECT_EQ(idle["calls_per_s"], 0.0);
    EXPECT_TRUE(idle["p50_ms"].is_null());
    EXPECT_EQ(idle["error_rate"], 0.0);
}

TEST(ConsoleOverview, ReplicasSeenThisOneFirstOthersWithTheirAge) {
    ReplicaRoster roster("host-a:1", Json{{"version", "1.2.3"}});
    auto alone = roster.json();
    ASSERT_EQ(alone.size(), 1u);
    EXPECT_EQ(alone[0]["id"], "host-a:1");
    EXPECT_EQ(alone[0]["self"], true);
    EXPECT_EQ(alone[0]["version"], "1.2.3");
    // What Redis answered: this replica too (skipped: it is listed first), and one whose
    // info is not JSON (listed by id alone).
    roster.heard({{"host-b:2", R"({"version":"1.2.4","started":17})", 4200},
                  {"host-a:1", R"({"version":"1.2.3"})", 0},
                  {"host-c:3", "not json", 0}});
    auto seen = roster.json();
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0]["id"], "host-a:1");
    EXPECT_EQ(seen[1],
              (Json{{"id", "host-b:2"}, {"self", false}, {"version", "1.2.4"}, {"started", 17}, {"last_seen_s", 4}}));
    EXPECT_EQ(seen[2], (Json{{"id", "host-c:3"}, {"self", false}, {"last_seen_s", 0}}));
}
