// observability::Metrics: Prometheus text rendering (exact text), label escaping, histogram
// buckets, type fixed by first use, misuse dropped without throwing, thread safety.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "async/log_ids.hpp"
#include "observability/metrics.hpp"

using namespace toolport::observability;

TEST(Metrics, EmptyRegistryRendersNothing) {
    Metrics m;
    EXPECT_EQ(m.render(), "");
}

TEST(Metrics, RendersASmallRegistryExactly) {
    Metrics m;
    m.describe("toolport_tool_calls_total", "Tool calls, by tool and result code.");
    m.increment("toolport_tool_calls_total", {{"tool", "echo"}, {"code", "OK"}});
    m.increment("toolport_tool_calls_total", {{"tool", "echo"}, {"code", "OK"}}, 2);
    m.increment("toolport_tool_calls_total", {{"tool", "add"}, {"code", "INVALID_ARGUMENT"}});
    m.set("toolport_sessions_open", {}, 3);
    m.observe("toolport_tool_call_duration_seconds", {{"tool", "echo"}}, 0.0625);
    m.observe("toolport_tool_call_duration_seconds", {{"tool", "echo"}}, 0.25);

    const std::string expected =
        "# HELP toolport_sessions_open MCP sessions open on the HTTP transports (Streamable HTTP and legacy SSE).\n"
        "# TYPE toolport_sessions_open gauge\n"
        "toolport_sessions_open 3\n"
        "# HELP toolport_tool_call_duration_seconds Time from a tool call's arrival to its answer, by tool.\n"
        "# TYPE toolport_tool_call_duration_seconds histogram\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.0005\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.001\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.0025\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.005\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.01\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.025\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.05\"} 0\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.1\"} 1\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.25\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.5\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"1\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"2.5\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"5\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"10\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"30\"} 2\n"
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"+Inf\"} 2\n"
        "toolport_tool_call_duration_seconds_sum{tool=\"echo\"} 0.3125\n"
        "toolport_tool_call_duration_seconds_count{tool=\"echo\"} 2\n"
        "# HELP toolport_tool_calls_total Tool calls, by tool and result code.\n"
        "# TYPE toolport_tool_calls_total counter\n"
        "toolport_tool_calls_total{code=\"INVALID_ARGUMENT\",tool=\"add\"} 1\n"
        "toolport_tool_calls_total{code=\"OK\",tool=\"echo\"} 3\n";
    EXPECT_EQ(m.render(), expected);
}

// OpenMetrics: counter families without _total, `# EOF`, and on a histogram bucket the
// exemplar of its last observation made while a request of a sampled trace ran; none in the
// 0.0.4 text, none for observations made outside a request or in an unsampled trace.
TEST(Metrics, OpenMetricsCarriesExemplarsOfTracedObservations) {
    Metrics m;
    m.increment("toolport_tool_calls_total", {{"tool", "echo"}});
    m.increment("toolport_odd_counter", {});
    m.observe("toolport_tool_call_duration_seconds", {{"tool", "echo"}}, 0.0625);  // untraced: le=0.1
    toolport::LogIds ids;
    ids.trace_id.fill(0xab);
    ids.span_id.fill(0x01);
    ids.set = true;
    {
        // A trace that is not sampled has no spans to open: no exemplar names it.
        toolport::LogIdsScope scope(ids);
        m.observe("toolport_tool_call_duration_seconds", {{"tool", "echo"}}, 0.7);  // le=1
    }
    ids.sampled = true;
    {
        toolport::LogIdsScope scope(ids);
        m.observe("toolport_tool_call_duration_seconds", {{"tool", "echo"}}, 0.2);  // le=0.25
    }
    const std::string text = m.render_openmetrics();
    EXPECT_NE(text.find("# TYPE toolport_tool_calls counter\n"), std::string::npos) << text;
    EXPECT_NE(text.find("\ntoolport_tool_calls_total{tool=\"echo\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE toolport_odd_counter unknown\n"), std::string::npos) << text;
    const std::string bucket =
        "toolport_tool_call_duration_seconds_bucket{tool=\"echo\",le=\"0.25\"} 2 # {trace_id=\""
        "abababababababababababababababab\",span_id=\"0101010101010101\"} 0.2 ";
    EXPECT_NE(text.find(bucket), std::string::npos) << text;
    EXPECT_NE(text.find("le=\"0.1\"} 1\n"), std::string::npos) << "the untraced bucket has none: " << text;
    EXPECT_NE(text.find("le=\"1\"} 3\n"), std::string::npos) << "the unsampled trace's bucket has none: " << text;
    EXPECT_EQ(text.substr(text.size() - 6), "# EOF\n");
    EXPECT_EQ(m.render().find("trace_id"), std::string::npos);
    EXPECT_EQ(m.render().find("# EOF"), std::string::npos);
}

// Every metric Toolport records has a help text of its own (the names are those the sources
// record: grep -rhoE '"toolport_[a-z_]+"' src), and the circuit state says what its values mean.
TEST(Metrics, EveryMetricToolportRecordsHasARealHelpText) {
    const std::vector<std::string> recorded = {
        "toolport_budget_downstream_calls_total",
        "toolport_budget_rejections_total",
        "toolport_cache_requests_total",
        "toolport_circuit_rejections_total",
        "toolport_circuit_state",
        "toolport_http_connections_open",
        "toolport_http_connections_refused_total",
        "toolport_http_requests_total",
        "toolport_rate_limit_wait_seconds",
        "toolport_rate_limited_total",
        "toolport_reloads_total",
        "toolport_service_calls_total",
        "toolport_service_response_seconds",
        "toolport_sessions_open",
        "toolport_tool_call_duration_seconds",
        "toolport_tool_calls_total",
        "toolport_tool_errors_total",
        "toolport_upstream_connections_total",
        "toolport_upstream_output_dropped_bytes_total",
        "toolport_upstream_output_dropped_total",
        "toolport_upstream_up",
    };
    Metrics m;
    for (const auto& name : recorded) m.set(name, {}, 1);
    const std::string text = m.render();
    for (const auto& name : recorded) {
        const std::string help = "# HELP " + name + " ";
        auto at = text.find(help);
        ASSERT_NE(at, std::string::npos) << name;
        const std::string line = text.substr(at + help.size(), text.find('\n', at) - at - help.size());
        EXPECT_EQ(line.find("Toolport metric"), std::string::npos) << name << ": " << line;
        EXPECT_GT(line.size(), 15u) << name << ": " << line;
    }
    EXPECT_NE(text.find("# HELP toolport_circuit_state Circuit breaker state of each downstream service: 0 = closed"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("1 = half-open"), std::string::npos);
    EXPECT_NE(text.find("2 = open"), std::string::npos);
}

TEST(Metrics, FamiliesSortedByNameAndSeriesByLabels) {
    Metrics m;
    m.increment("zeta_total", {});
    m.increment("alpha_total", {{"k", "b"}});
    m.increment("alpha_total", {{"k", "a"}});
    m.set("mid", {}, 1);
    auto text = m.render();
    auto alpha = text.find("# TYPE alpha_total");
    auto mid = text.find("# TYPE mid");
    auto zeta = text.find("# TYPE zeta_total");
    ASSERT_NE(alpha, std::string::npos);
    ASSERT_NE(mid, std::string::npos);
    ASSERT_NE(zeta, std::string::npos);
    EXPECT_LT(alpha, mid);
    EXPECT_LT(mid, zeta);
    EXPECT_LT(text.find("alpha_total{k=\"a\"} 1"), text.find("alpha_total{k=\"b\"} 1"));
}

TEST(Metrics, EscapesLabelValuesAndHelp) {
    Metrics m;
    m.describe("escapes_total", "Help with a backslash \\ and a\nnewline and \"quotes\".");
    m.increment("escapes_total", {{"path", "C:\\dir"}, {"quote", "say \"hi\""}, {"text", "two\nlines"}});
    const std::string expected =
        "# HELP escapes_total Help with a backslash \\\\ and a\\nnewline and \"quotes\".\n"
        "# TYPE escapes_total counter\n"
        "escapes_total{path=\"C:\\\\dir\",quote=\"say \\\"hi\\\"\",text=\"two\\nlines\"} 1\n";
    EXPECT_EQ(m.render(), expected);
}

TEST(Metrics, HistogramBucketsCountObservationsUpToTheirBound) {
    Metrics m;
    // On a bound: counted in that bucket (le means "less than or equal").
    m.observe("h", {}, 0.0005);
    m.observe("h", {}, 0.00051);  // just above: the next bucket
    m.observe("h", {}, 1);
    m.observe("h", {}, 30);
    m.observe("h", {}, 31);  // above every bound: +Inf only
    m.observe("h", {}, -2);  // negative values land in the first bucket
    auto text = m.render();
    auto line = [&](const std::string& le) {
        auto key = "h_bucket{le=\"" + le + "\"} ";
        auto at = text.find(key);
        EXPECT_NE(at, std::string::npos) << key << "\n" << text;
        return std::stoi(text.substr(at + key.size()));
    };
    EXPECT_EQ(line("0.0005"), 2);
    EXPECT_EQ(line("0.001"), 3);
    EXPECT_EQ(line("0.5"), 3);
    EXPECT_EQ(line("1"), 4);
    EXPECT_EQ(line("10"), 4);
    EXPECT_EQ(line("30"), 5);
    EXPECT_EQ(line("+Inf"), 6);
    EXPECT_NE(text.find("h_count 6\n"), std::string::npos) << text;
    auto sum_at = text.find("h_sum ");
    ASSERT_NE(sum_at, std::string::npos) << text;
    EXPECT_NEAR(std::stod(text.substr(sum_at + 6)), 60.00101, 1e-9);
    EXPECT_EQ(m.value("h"), 6);
}

TEST(Metrics, LabelOrderDoesNotMakeANewSeries) {
    Metrics m;
    m.increment("c_total", {{"a", "1"}, {"b", "2"}});
    m.increment("c_total", {{"b", "2"}, {"a", "1"}});
    EXPECT_EQ(m.value("c_total", {{"a", "1"}, {"b", "2"}}), 2);
    EXPECT_EQ(m.value("c_total", {{"b", "2"}, {"a", "1"}}), 2);
    EXPECT_EQ(m.render(),
              "# HELP c_total Toolport metric c_total.\n# TYPE c_total counter\nc_total{a=\"1\",b=\"2\"} 2\n");
}

TEST(Metrics, TypeIsFixedByFirstUse) {
    Metrics m;
    m.increment("calls_total", {{"tool", "x"}});
    m.set("calls_total", {{"tool", "x"}}, 100);      // same series as a gauge: dropped
    m.set("calls_total", {{"tool", "y"}}, 100);      // new series of the counter family as a gauge: dropped
    m.observe("calls_total", {{"tool", "x"}}, 0.1);  // as a histogram: dropped
    m.set("level", {}, 5);
    m.increment("level", {});  // a gauge stays a gauge
    EXPECT_EQ(m.value("calls_total", {{"tool", "x"}}), 1);
    EXPECT_EQ(m.value("calls_total", {{"tool", "y"}}), std::nullopt);
    EXPECT_EQ(m.value("level"), 5);
    auto text = m.render();
    EXPECT_NE(text.find("# TYPE calls_total counter\n"), std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE level gauge\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("histogram"), std::string::npos) << text;
    EXPECT_EQ(text.find("calls_total_bucket"), std::string::npos) << text;
}

TEST(Metrics, MisuseIsDroppedNotThrown) {
    Metrics m;
    EXPECT_NO_THROW(m.increment("bad-name", {}));
    EXPECT_NO_THROW(m.increment("", {}));
    EXPECT_NO_THROW(m.increment("9lives", {}));
    EXPECT_NO_THROW(m.increment("ok_total", {{"bad-label", "x"}}));
    EXPECT_NO_THROW(m.increment("ok_total", {{"__reserved", "x"}}));
    EXPECT_NO_THROW(m.increment("ok_total", {{"dup", "1"}, {"dup", "2"}}));
    EXPECT_NO_THROW(m.increment("ok_total", {}, -1));  // counters never go down
    EXPECT_NO_THROW(m.increment("ok_total", {}, std::nan("")));
    EXPECT_NO_THROW(m.increment("ok_total", {}, std::numeric_limits<double>::infinity()));
    EXPECT_NO_THROW(m.observe("h_seconds", {{"le", "1"}}, 0.1));  // "le" belongs to the buckets
    EXPECT_NO_THROW(m.observe("h_seconds", {}, std::nan("")));
    EXPECT_NO_THROW(m.describe("bad name", "x"));
    EXPECT_EQ(m.render(), "");
    // Valid updates still work afterwards.
    m.increment("ok_total", {}, 2.5);
    EXPECT_EQ(m.value("ok_total"), 2.5);
    EXPECT_EQ(m.render(), "# HELP ok_total Toolport metric ok_total.\n# TYPE ok_total counter\nok_total 2.5\n");
}

TEST(Metrics, GaugesRenderSpecialValues) {
    Metrics m;
    m.set("g_nan", {}, std::nan(""));
    m.set("g_pinf", {}, std::numeric_limits<double>::infinity());
    m.set("g_ninf", {}, -std::numeric_limits<double>::infinity());
    m.set("g_neg", {}, -1.5);
    m.set("g_big", {}, 12345678901.0);
    auto text = m.render();
    EXPECT_NE(text.find("g_nan NaN\n"), std::string::npos) << text;
    EXPECT_NE(text.find("g_pinf +Inf\n"), std::string::npos) << text;
    EXPECT_NE(text.find("g_ninf -Inf\n"), std::string::npos) << text;
    EXPECT_NE(text.find("g_neg -1.5\n"), std::string::npos) << text;
    EXPECT_NE(text.find("g_big 12345678901\n"), std::string::npos) << text;
}

TEST(Metrics, SetReplacesTheGaugeValue) {
    Metrics m;
    m.set("open", {{"kind", "http"}}, 4);
    m.set("open", {{"kind", "http"}}, 1);
    EXPECT_EQ(m.value("open", {{"kind", "http"}}), 1);
    EXPECT_EQ(m.value("open", {{"kind", "sse"}}), std::nullopt);
    EXPECT_EQ(m.value("missing"), std::nullopt);
}

TEST(Metrics, DescribeBeforeOrAfterFirstUse) {
    Metrics m;
    m.increment("late_total", {});
    m.describe("late_total", "Described after use.");
    m.describe("early_total", "Described before use.");
    m.increment("early_total", {});
    m.describe("unused_total", "Never used: not rendered (its type is unknown).");
    auto text = m.render();
    EXPECT_NE(text.find("# HELP late_total Described after use.\n"), std::string::npos) << text;
    EXPECT_NE(text.find("# HELP early_total Described before use.\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("unused_total"), std::string::npos) << text;
}

TEST(Metrics, AFamilyStopsGrowingAtItsSeriesLimit) {
    Metrics m;
    for (int i = 0; i < 10000; ++i) m.increment("wide_total", {{"id", std::to_string(i)}});
    m.increment("wide_total", {{"id", "one-too-many"}});
    EXPECT_EQ(m.value("wide_total", {{"id", "9999"}}), 1);
    EXPECT_EQ(m.value("wide_total", {{"id", "one-too-many"}}), std::nullopt);
    m.increment("wide_total", {{"id", "0"}});  // existing series keep counting
    EXPECT_EQ(m.value("wide_total", {{"id", "0"}}), 2);
}

TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
    Metrics m;
    constexpr int kThreads = 4;
    constexpr int kPerThread = 5000;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&m, t] {
            for (int i = 0; i < kPerThread; ++i) {
                m.increment("shared_total", {{"kind", "all"}});
                m.increment("per_thread_total", {{"thread", std::to_string(t)}});
                m.observe("latency_seconds", {}, 0.01);
                if (i % 100 == 0) (void)m.render();
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(m.value("shared_total", {{"kind", "all"}}), kThreads * kPerThread);
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(m.value("per_thread_total", {{"thread", std::to_string(t)}}), kPerThread);
    EXPECT_EQ(m.value("latency_seconds"), kThreads * kPerThread);
}

TEST(Metrics, ProcessWideInstanceIsOne) {
    EXPECT_EQ(&metrics(), &metrics());
    metrics().increment("toolport_metrics_test_probe_total", {});
    EXPECT_GE(metrics().value("toolport_metrics_test_probe_total").value_or(0), 1);
}

TEST(MetricsHandles, UpdateTheSameSeriesAsTheLabelledCalls) {
    Metrics m;
    Counter calls = m.counter("calls_total", {{"tool", "echo"}, {"code", "OK"}});
    ASSERT_TRUE(calls);
    calls.increment();
    calls.increment(2);
    // Label order does not matter: the same series as the handle's.
    m.increment("calls_total", {{"code", "OK"}, {"tool", "echo"}});
    EXPECT_EQ(m.value("calls_total", {{"tool", "echo"}, {"code", "OK"}}), 4);

    Gauge open = m.gauge("open", {{"kind", "http"}});
    open.set(7);
    EXPECT_EQ(m.value("open", {{"kind", "http"}}), 7);
    m.set("open", {{"kind", "http"}}, 2);
    EXPECT_EQ(m.value("open", {{"kind", "http"}}), 2);

    Histogram latency = m.histogram("latency_seconds", {{"tool", "echo"}});
    latency.observe(0.0625);
    m.observe("latency_seconds", {{"tool", "echo"}}, 0.25);
    EXPECT_EQ(m.value("latency_seconds", {{"tool", "echo"}}), 2);

    auto text = m.render();
    EXPECT_NE(text.find("calls_total{code=\"OK\",tool=\"echo\"} 4\n"), std::string::npos) << text;
    EXPECT_NE(text.find("open{kind=\"http\"} 2\n"), std::string::npos) << text;
    EXPECT_NE(text.find("latency_seconds_bucket{tool=\"echo\",le=\"0.1\"} 1\n"), std::string::npos) << text;
    EXPECT_NE(text.find("latency_seconds_bucket{tool=\"echo\",le=\"+Inf\"} 2\n"), std::string::npos) << text;
    EXPECT_NE(text.find("latency_seconds_sum{tool=\"echo\"} 0.3125\n"), std::string::npos) << text;
    EXPECT_NE(text.find("latency_seconds_count{tool=\"echo\"} 2\n"), std::string::npos) << text;
}

TEST(MetricsHandles, MakingAHandleCreatesTheSeriesAtZero) {
    Metrics m;
    [[maybe_unused]] Counter c = m.counter("made_total", {});
    EXPECT_EQ(m.value("made_total"), 0);
    EXPECT_NE(m.render().find("made_total 0\n"), std::string::npos);
}

TEST(MetricsHandles, RefusedSeriesGiveEmptyHandlesWhoseUpdatesAreDropped) {
    Metrics m;
    Counter defaulted;
    EXPECT_FALSE(defaulted);
    defaulted.increment();  // nothing to update, no crash

    EXPECT_FALSE(m.counter("bad name", {}));
    EXPECT_FALSE(m.histogram("h_seconds", {{"le", "1"}}));
    m.set("a_gauge", {}, 1);
    EXPECT_FALSE(m.counter("a_gauge", {}));  // a gauge already
    EXPECT_FALSE(m.histogram("a_gauge", {}));
    Gauge g = m.gauge("a_gauge", {});
    EXPECT_TRUE(g);

    Counter c = m.counter("c_total", {});
    c.increment(-1);
    c.increment(std::numeric_limits<double>::quiet_NaN());
    c.increment(std::numeric_limits<double>::infinity());
    EXPECT_EQ(m.value("c_total"), 0);
    Histogram h = m.histogram("h_seconds", {});
    h.observe(std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(m.value("h_seconds"), 0);
}

TEST(MetricsHandles, HandleCacheMakesEachEntryOnce) {
    Metrics m;
    HandleCache<Counter> cache;
    int made = 0;
    for (const char* tool : {"a", "b", "a", "a"}) {
        std::string name = tool;
        cache
            .get(name,
                 [&] {
                     ++made;
                     return m.counter("by_tool_total", {{"tool", name}});
                 })
            .increment();
    }
    EXPECT_EQ(made, 2);
    EXPECT_EQ(m.value("by_tool_total", {{"tool", "a"}}), 3);
    EXPECT_EQ(m.value("by_tool_total", {{"tool", "b"}}), 1);
}

TEST(MetricsHandles, ConcurrentUpdatesThroughHandlesAreAllCounted) {
    Metrics m;
    constexpr int kThreads = 4;
    constexpr int kPerThread = 20000;
    Counter shared = m.counter("shared_total", {{"kind", "all"}});
    Histogram latency = m.histogram("latency_seconds", {});
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&m, &shared, &latency, t] {
            // Handles made concurrently for the same series resolve to that one series.
            Counter mine = m.counter("per_thread_total", {{"thread", std::to_string(t)}});
            Counter again = m.counter("shared_total", {{"kind", "all"}});
            for (int i = 0; i < kPerThread; ++i) {
                shared.increment();
                again.increment(0.5);
                mine.increment();
                latency.observe(i % 2 ? 0.0078125 : 2);          // exact in binary: the sum is exact
                m.increment("shared_total", {{"kind", "all"}});  // the labelled path, mixed in
                if (i % 1000 == 0) {
                    // A render during updates always agrees with itself: _count == +Inf bucket.
                    auto text = m.render();
                    auto count_at = text.find("latency_seconds_count ");
                    auto inf_at = text.find("latency_seconds_bucket{le=\"+Inf\"} ");
                    ASSERT_NE(count_at, std::string::npos);
                    ASSERT_NE(inf_at, std::string::npos);
                    auto count = text.substr(count_at + 22, text.find('\n', count_at) - count_at - 22);
                    auto inf = text.substr(inf_at + 34, text.find('\n', inf_at) - inf_at - 34);
                    EXPECT_EQ(count, inf);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(m.value("shared_total", {{"kind", "all"}}), kThreads * kPerThread * 2.5);
    for (int t = 0; t < kThreads; ++t)
        EXPECT_EQ(m.value("per_thread_total", {{"thread", std::to_string(t)}}), kPerThread);
    EXPECT_EQ(m.value("latency_seconds"), kThreads * kPerThread);
    auto text = m.render();
    EXPECT_NE(text.find("latency_seconds_bucket{le=\"1\"} " + std::to_string(kThreads * kPerThread / 2) + "\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("latency_seconds_sum 80312.5\n"), std::string::npos) << text;
}
