// observability::HealthRegistry: aggregation of probe severities, the report's fields, the
// HTTP status, probes that throw.
#include <gtest/gtest.h>

#include <regex>
#include <stdexcept>

#include "observability/health.hpp"
#include "toolport_version.hpp"

using namespace toolport::observability;
using nlohmann::json;

namespace {
HealthRegistry::Probe fixed(std::string state, Severity severity) {
    return [state, severity] { return ComponentHealth{state, severity}; };
}
}  // namespace

TEST(Health, EmptyRegistryIsHealthyWithEveryField) {
    HealthRegistry h;
    auto r = h.report();
    EXPECT_EQ(r["status"], "healthy");
    EXPECT_EQ(r["version"], toolport::kToolportVersion);
    ASSERT_TRUE(r["timestamp"].is_string());
    EXPECT_TRUE(std::regex_match(r["timestamp"].get<std::string>(), std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)")))
        << r["timestamp"];
    ASSERT_TRUE(r["uptime_s"].is_number_integer());
    EXPECT_GE(r["uptime_s"].get<long long>(), 0);
    EXPECT_EQ(r["services"], json::object());
    EXPECT_EQ(h.http_status(), 200);
}

TEST(Health, StatusIsTheWorstSeverity) {
    HealthRegistry h;
    h.add("redis", fixed("reachable", Severity::ok));
    h.add("server", fixed("available", Severity::ok));
    EXPECT_EQ(h.report()["status"], "healthy");
    EXPECT_EQ(h.http_status(), 200);

    h.add("tango", fixed("open-circuit", Severity::degraded));
    auto r = h.report();
    EXPECT_EQ(r["status"], "degraded");
    EXPECT_EQ(r["services"], (json{{"redis", "reachable"}, {"server", "available"}, {"tango", "open-circuit"}}));
    EXPECT_EQ(h.http_status(), 200) << "degraded still serves";

    h.add("budget_store", fixed("unavailable", Severity::unhealthy));
    EXPECT_EQ(h.report()["status"], "unhealthy");
    EXPECT_EQ(h.http_status(), 503);

    h.remove("budget_store");
    EXPECT_EQ(h.report()["status"], "degraded");
    EXPECT_FALSE(h.report()["services"].contains("budget_store"));
}

TEST(Health, AddReplacesTheProbeOfTheSameName) {
    HealthRegistry h;
    h.add("redis", fixed("unreachable", Severity::unhealthy));
    h.add("redis", fixed("reachable", Severity::ok));
    auto r = h.report();
    EXPECT_EQ(r["status"], "healthy");
    EXPECT_EQ(r["services"], (json{{"redis", "reachable"}}));
    h.remove("not-there");  // harmless
    EXPECT_EQ(h.report()["services"].size(), 1u);
}

TEST(Health, AThrowingProbeIsAnUnhealthyError) {
    HealthRegistry h;
    h.add("server", fixed("available", Severity::ok));
    h.add("flaky", []() -> ComponentHealth { throw std::runtime_error("connection refused at /home/alice/x"); });
    h.add("weird", []() -> ComponentHealth { throw 42; });
    h.add("empty", HealthRegistry::Probe{});
    json r;
    ASSERT_NO_THROW(r = h.report());
    EXPECT_EQ(r["status"], "unhealthy");
    EXPECT_EQ(r["services"]["flaky"], "error");
    EXPECT_EQ(r["services"]["weird"], "error");
    EXPECT_EQ(r["services"]["empty"], "error");
    EXPECT_EQ(r["services"]["server"], "available");
    EXPECT_EQ(h.http_status(), 503);
}

TEST(Health, HttpResponseIsOneEvaluation) {
    HealthRegistry h;
    int calls = 0;
    // Alternates between healthy and unhealthy: status and body must come from the same run.
    h.add("toggle", [&calls] {
        ++calls;
        return calls % 2 ? ComponentHealth{"unreachable", Severity::unhealthy}
                         : ComponentHealth{"reachable", Severity::ok};
    });
    auto [status, body] = h.http_response();
    EXPECT_EQ(calls, 1);
    auto parsed = json::parse(body);
    EXPECT_EQ(status, 503);
    EXPECT_EQ(parsed["status"], "unhealthy");
    EXPECT_EQ(parsed["services"]["toggle"], "unreachable");
    EXPECT_EQ(HealthRegistry::http_status_of(parsed), 503);
    EXPECT_EQ(HealthRegistry::http_status_of(json{{"status", "degraded"}}), 200);
}

TEST(Health, AProbeMayChangeTheRegistryWhileItRuns) {
    HealthRegistry h;
    h.add("self", [&h] {
        h.add("later", [] { return ComponentHealth{"available", Severity::ok}; });
        return ComponentHealth{"available", Severity::ok};
    });
    EXPECT_EQ(h.report()["services"].size(), 1u);  // the copy taken before the probes ran
    EXPECT_EQ(h.report()["services"].size(), 2u);
}

TEST(Health, InvalidUtf8InAStateStillSerialises) {
    HealthRegistry h;
    h.add("odd", fixed(std::string("bad\xff"), Severity::ok));
    auto [status, body] = h.http_response();
    EXPECT_EQ(status, 200);
    EXPECT_NO_THROW((void)json::parse(body));
}
