// The call pipeline's own cost, in process (Google Benchmark): one tools/call through the
// engine with every stage on (validation, client quota, cache miss with a store write,
// circuit breaker, budget reserve/settle, rate limit, timeout, size cap, accounting,
// observation), against the same call with no pipeline at all. The difference is the
// pipeline's overhead per call (target < 20 µs).
//
//   build-bench/bench/pipeline_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>

#include "app/runtime.hpp"
#include "async/asio_executor.hpp"
#include "async/executor.hpp"
#include "providers/source_table.hpp"
#include "server/session.hpp"

using namespace toolport;

namespace {

// The real event loop (Asio), polled until no work is ready: deadlines are real timers.
struct Loop {
    boost::asio::io_context io{1};
    AsioExecutor executor{io};
    void run() {
        io.restart();
        io.poll();
    }
};

struct Fixture {
    explicit Fixture(bool with_pipeline) {
        Config config;
        config.pipeline.defaults.cache.mode = pipeline::CacheMode::all;  // every call a cache miss + write
        config.pipeline.defaults.client_quota.per_minute = 1e9;
        pipeline::PolicyOverride metered;
        metered.service = "svc";
        config.pipeline.tools["test_counter"] = metered;
        config.pipeline.services["svc"].rate_limit.rate = 1e9;
        config.pipeline.services["svc"].rate_limit.burst = 1e9;
        config.pipeline.defaults.budget.max_downstream_calls_per_request = 1'000'000'000;
        runtime = std::make_unique<Runtime>(config, loop.executor);
        sources.push_back(providers::start_source("testing", runtime->server()));
        if (!with_pipeline) runtime->server().set_tool_invoker(nullptr);
        session = runtime->server().open_session([this](const Json&, const protocol::RequestId*) { ++replies; },
                                                 CallerIdentity{.session_id = "bench-session"});
        session->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        session->receive(protocol::Notification{"notifications/initialized", nullptr});
        loop.run();
        replies = 0;  // count tools/call replies only
    }
    ~Fixture() {
        session->close();
        loop.run();
    }

    void call(long long i) {
        // New arguments every time: a cache miss, a store write, a fresh key.
        session->receive(protocol::Request{i,
                                           "tools/call",
                                           {{"name", "test_counter"},
                                            {"arguments", {{"key", std::to_string(i)}, {"downstream_calls", 1}}}}});
        loop.run();
    }

    Loop loop;
    std::unique_ptr<Runtime> runtime;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::shared_ptr<ServerSession> session;
    long long replies = 0;
};

void run(benchmark::State& state, bool with_pipeline) {
    spdlog::set_level(spdlog::level::off);  // the tool_call event is measured as built, not written
    Fixture f(with_pipeline);
    long long i = 1;
    for (auto _ : state) f.call(++i);
    if (f.replies != i - 1) state.SkipWithError("a call got no reply");
    state.SetItemsProcessed(state.iterations());
}

void BM_ToolCall_NoPipeline(benchmark::State& state) { run(state, false); }
void BM_ToolCall_AllStages_CacheMiss(benchmark::State& state) { run(state, true); }

BENCHMARK(BM_ToolCall_NoPipeline)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ToolCall_AllStages_CacheMiss)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
