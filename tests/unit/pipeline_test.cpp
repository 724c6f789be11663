#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "async/cancel_token.hpp"
#include "manual_executor.hpp"
#include "observability/metrics.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stages/audit.hpp"
#include "pipeline/stages/meta_accounting.hpp"
#include "pipeline/stages/observe.hpp"
#include "server/session.hpp"
#include "server/tool_error.hpp"

using namespace toolport;
using namespace toolport::pipeline;

namespace {

// Records the order stages run in, and can answer without calling next.
class Recorder final : public Stage {
public:
    Recorder(std::string name, std::vector<std::string>& log, bool short_circuit = false)
        : name_(std::move(name)), log_(log), short_circuit_(short_circuit) {}
    std::string_view name() const override { return name_; }
    Task<ToolResult> handle(Call& call, const Next& next) override {
        log_.push_back(name_ + ">");
        if (short_circuit_) {
            call.cache_status = CacheStatus::hit;
            call.downstream_api_calls = 0;
            co_return ToolResult::text("from " + name_);
        }
        ToolResult r = co_await next(call);
        log_.push_back("<" + name_);
        co_return r;
    }

private:
    std::string name_;
    std::vector<std::string>& log_;
    bool short_circuit_;
};

class PipelineTest : public ::testing::Test {
protected:
    PipelineTest() : server(exec, ServerOptions{}) {
        ToolSpec t;
        t.name = "echo";
        t.description = "echo";
        t.handler = [this](RequestContext&, const Json& args) -> Task<ToolResult> {
            log.push_back("handler");
            if (args.value("fail", false)) throw ToolError(ToolErrorCode::upstream_error, "down");
            ToolResult r = ToolResult::text(args.value("text", ""));
            if (args.contains("reported")) r.meta = {{"downstream_api_calls", args["reported"]}};
            co_return r;
        };
        server.registry().add_tool(std::move(t));
        server.set_tool_invoker(pipeline.invoker());
        session = server.open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); });
        session->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        session->receive(protocol::Notification{"notifications/initialized", nullptr});
        exec.run();
    }

    Json call(Json args) {
        out.clear();
        session->receive(protocol::Request{1, "tools/call", {{"name", "echo"}, {"arguments", std::move(args)}}});
        exec.run();
        return out.empty() ? Json() : out.back()["result"];
    }

    test_support::ManualExecutor exec;
    Pipeline pipeline;
    McpServer server;
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
    std::vector<std::string> log;
};

TEST_F(PipelineTest, StagesRunInOrderAroundTheHandler) {
    pipeline.add_always(std::make_shared<Recorder>("a", log));
    pipeline.add_always(std::make_shared<Recorder>("b", log));
    auto r = call({{"text", "hi"}});
    EXPECT_EQ(r["content"][0]["text"], "hi");
    EXPECT_EQ(log, (std::vector<std::string>{"a>", "b>", "handler", "<b", "<a"}));
}

TEST_F(PipelineTest, AStageCanAnswerWithoutTheHandler) {
    pipeline.add_always(std::make_shared<MetaAccounting>());
    pipeline.add_always(std::make_shared<Recorder>("cache", log, true));
    auto r = call({{"text", "hi"}});
    EXPECT_EQ(r["content"][0]["text"], "from cache");
    EXPECT_EQ(log, (std::vector<std::string>{"cache>"}));
    EXPECT_EQ(r["_meta"]["cache_status"], "hit");
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 0);
}

TEST_F(PipelineTest, MetaAccountingReportsSizeTokensDurationAndCalls) {
    pipeline.add_always(std::make_shared<MetaAccounting>());
    EXPECT_EQ(call({{"reported", 7}})["_meta"]["downstream_api_calls"], 7);  // as the source reported it
    auto r = call({{"text", std::string(400, 'x')}});
    const Json& meta = r["_meta"];
    EXPECT_EQ(meta["cache_status"], "bypass");
    EXPECT_EQ(meta["downstream_api_calls"], 0);
    Json without_meta = r;
    without_meta.erase("_meta");
    const auto size = without_meta.dump().size();
    EXPECT_EQ(meta["response_size_bytes"], size);
    EXPECT_EQ(meta["tokens_estimate"], static_cast<long long>(std::ceil(size / 4.0 * 1.1)));
    EXPECT_GE(meta["duration_ms"].get<double>(), 0.0);
}

TEST_F(PipelineTest, FailuresAreAccountedToo) {
    pipeline.add_always(std::make_shared<MetaAccounting>());
    auto r = call({{"fail", true}});
    EXPECT_EQ(r["isError"], true);
    EXPECT_EQ(r["structuredContent"]["error_code"], "UPSTREAM_ERROR");
    EXPECT_TRUE(r["_meta"].contains("response_size_bytes"));
}

TEST_F(PipelineTest, ObserveRecordsTheMcpOperationMetricOfToolCalls) {
    // mcp_server_operation_duration_seconds (observability/mcp_metrics.hpp) for tools/call
    // comes from the observe stage, which knows the tool and the outcome.
    pipeline.add_always(std::make_shared<ObserveStage>());
    auto& m = observability::metrics();
    const observability::Labels ok = {{"mcp_method_name", "tools/call"}, {"gen_ai_tool_name", "echo"}};
    const observability::Labels failed = {{"mcp_method_name", "tools/call"},
                                          {"gen_ai_tool_name", "echo"},
                                          {"error_type", "tool_error"}};
    const double ok_before = m.value("mcp_server_operation_duration_seconds", ok).value_or(0);
    const double failed_before = m.value("mcp_server_operation_duration_seconds", failed).value_or(0);
    call(Json::object());
    call({{"fail", true}});
    EXPECT_EQ(m.value("mcp_server_operation_duration_seconds", ok).value_or(0), ok_before + 1);
    EXPECT_EQ(m.value("mcp_server_operation_duration_seconds", failed).value_or(0), failed_before + 1);
}

TEST_F(PipelineTest, ACancelledCallIsCountedAsCancelledNotAsAnError) {
    // A call its client gives up on gets no answer, but /metrics counts it: a stateless
    // client cancels by closing the request's stream, a session client by
    // notifications/cancelled; both end the handler with OperationCancelled.
    pipeline.add_always(std::make_shared<ObserveStage>());
    ToolSpec t;
    t.name = "observe_cancel_probe";
    t.handler = [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.executor().sleep(std::chrono::hours(1), &ctx.cancel_token());
        co_return ToolResult::text("never");
    };
    server.registry().add_tool(std::move(t));
    out.clear();
    session->receive(
        protocol::Request{7, "tools/call", {{"name", "observe_cancel_probe"}, {"arguments", Json::object()}}});
    exec.run();
    session->receive(
        protocol::Notification{"notifications/cancelled", {{"requestId", 7}, {"reason", "the user gave up"}}});
    exec.run();
    for (const auto& m : out) EXPECT_FALSE(m.contains("id") && m["id"] == 7) << "a cancelled request gets no response";
    const observability::Labels cancelled = {{"tool", "observe_cancel_probe"}, {"code", ObserveStage::kCancelled}};
    EXPECT_EQ(observability::metrics().value("toolport_tool_calls_total", cancelled), 1.0);
    EXPECT_FALSE(observability::metrics().value("toolport_tool_errors_total", cancelled)) << "not the tool's error";
    EXPECT_EQ(observability::metrics().value("toolport_tool_call_duration_seconds", {{"tool", "observe_cancel_probe"}}),
              1.0);
}

TEST(MetaAccountingFormula, TokensEstimateRoundsUp) {
    EXPECT_EQ(MetaAccounting::tokens_estimate(0), 0);
    EXPECT_EQ(MetaAccounting::tokens_estimate(1), 1);
    EXPECT_EQ(MetaAccounting::tokens_estimate(40), 11);
    EXPECT_EQ(MetaAccounting::tokens_estimate(41), 12);
    EXPECT_EQ(MetaAccounting::tokens_estimate(4000000), 1100000);
}

}  // namespace

namespace {
TEST_F(PipelineTest, ResponseSizeMatchesTheSerializedResultExactly) {
    pipeline.add_always(std::make_shared<MetaAccounting>());
    for (Json args : {Json{{"text", "é\"\\\n"}}, Json{{"fail", true}}, Json{{"reported", 3}, {"text", "x"}}}) {
        auto r = call(args);
        // Without its _meta, the source's own (a reported count) included.
        Json without = r;
        without.erase("_meta");
        EXPECT_EQ(r["_meta"]["response_size_bytes"], without.dump().size()) << args.dump();
    }
}
}  // namespace

namespace {

// Configurable stages run where the tool's policy lists them, in the policy's order, with
// per-source and per-tool switches.
class PolicyOrderTest : public ::testing::Test {
protected:
    Json run(PipelineConfig config, const std::string& source = "") {
        Pipeline pipeline{PolicyResolver(std::move(config))};
        for (auto name : {"validate", "cache", "timeout"}) pipeline.add(std::make_shared<Recorder>(name, log));
        McpServer server(exec, ServerOptions{});
        ToolSpec t;
        t.name = "echo";
        t.source = source;
        t.handler = [this](RequestContext&, const Json&) -> Task<ToolResult> {
            log.push_back("handler");
            co_return ToolResult::text("ok");
        };
        server.registry().add_tool(std::move(t));
        server.set_tool_invoker(pipeline.invoker());
        std::vector<Json> out;
        auto session = server.open_session([&](const Json& m, const protocol::RequestId*) { out.push_back(m); });
        session->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        session->receive(protocol::Notification{"notifications/initialized", nullptr});
        session->receive(protocol::Request{1, "tools/call", {{"name", "echo"}, {"arguments", Json::object()}}});
        exec.run();
        session->close();
        return out.back();
    }
    test_support::ManualExecutor exec;
    std::vector<std::string> log;
};

TEST_F(PolicyOrderTest, DefaultOrderRunsRegisteredStagesOnly) {
    run(PipelineConfig{});
    EXPECT_EQ(log, (std::vector<std::string>{"validate>", "cache>", "timeout>", "handler", "<timeout", "<cache",
                                             "<validate"}));
}

TEST_F(PolicyOrderTest, GlobalOrderAndPerToolAndPerSourceSwitches) {
    PipelineConfig config;
    config.defaults.stages = {"timeout", "validate", "cache"};
    run(config);
    EXPECT_EQ(log[0], "timeout>");
    EXPECT_EQ(log[1], "validate>");

    log.clear();
    PolicyOverride off_cache;
    off_cache.disable = {"cache"};
    config.tools["echo"] = off_cache;
    run(config);
    EXPECT_EQ(log, (std::vector<std::string>{"timeout>", "validate>", "handler", "<validate", "<timeout"}));

    log.clear();
    PipelineConfig by_source;
    PolicyOverride only_validate;
    only_validate.stages = std::vector<std::string>{"validate"};
    by_source.sources["pack-a"] = only_validate;
    run(by_source, "pack-a");
    EXPECT_EQ(log, (std::vector<std::string>{"validate>", "handler", "<validate"}));
    log.clear();
    run(by_source, "pack-b");  // another source keeps the defaults
    EXPECT_EQ(log.size(), 7u);
}

TEST(PolicyResolverTest, LayersApplyDefaultsThenSourceThenToolAndServiceComesFromConfig) {
    PipelineConfig config;
    config.defaults.timeout = std::chrono::milliseconds(1000);
    PolicyOverride src;
    src.timeout = std::chrono::milliseconds(2000);
    src.service = "tango";
    config.sources["tango-pack"] = src;
    PolicyOverride tool;
    tool.timeout = std::chrono::milliseconds(3000);
    config.tools["slow_tool"] = tool;
    ServicePolicy svc;
    svc.breaker_failure_threshold = 5;
    config.services["tango"] = svc;
    PolicyResolver resolver(config);

    ToolSpec a;
    a.name = "fast_tool";
    a.source = "tango-pack";
    ToolSpec b = a;
    b.name = "slow_tool";
    ToolSpec c;
    c.name = "other";
    auto pa = resolver.resolve(a), pb = resolver.resolve(b), pc = resolver.resolve(c);
    EXPECT_EQ(pa->timeout.count(), 2000);
    EXPECT_EQ(pb->timeout.count(), 3000);
    EXPECT_EQ(pc->timeout.count(), 1000);
    EXPECT_EQ(pa->service, "tango");
    EXPECT_EQ(pa->service_policy.breaker_failure_threshold, 5);
    EXPECT_EQ(pc->service, "");
    EXPECT_EQ(resolver.resolve(a).get(), pa.get());  // computed once
}

TEST(PolicyResolverTest, ASourcesOwnDeadlineShortensThePipelinesButNeverLengthensIt) {
    // An upstream's timeout_ms (60 s by default) under pipeline.timeout_ms: 5000 used to
    // replace it, so its calls ran for a minute. The shorter deadline wins.
    PipelineConfig config;
    config.defaults.timeout = std::chrono::milliseconds(5000);
    PolicyOverride operator_says;
    operator_says.timeout = std::chrono::milliseconds(120000);
    config.sources["patient"] = operator_says;
    PolicyResolver resolver(config);
    for (const char* source : {"long", "short", "patient"}) {
        PolicyOverride own;
        own.timeout = std::chrono::milliseconds(std::string(source) == "short" ? 800 : 60000);
        resolver.add_source_default(source, own);
    }
    auto policy_of = [&](const char* source) {
        ToolSpec tool;
        tool.name = std::string(source) + "_tool";
        tool.source = source;
        return resolver.resolve(tool)->timeout.count();
    };
    EXPECT_EQ(policy_of("long"), 5000);
    EXPECT_EQ(policy_of("short"), 800);
    EXPECT_EQ(policy_of("patient"), 120000) << "the configuration's sources: entry still says what it says";

    PipelineConfig none;  // timeout_ms: 0 turns the pipeline's deadline off: the source's applies
    none.defaults.timeout = std::chrono::milliseconds(0);
    PolicyResolver unbounded(none);
    PolicyOverride own;
    own.timeout = std::chrono::milliseconds(60000);
    unbounded.add_source_default("up", own);
    ToolSpec tool;
    tool.name = "t";
    tool.source = "up";
    EXPECT_EQ(unbounded.resolve(tool)->timeout.count(), 60000);
}

}  // namespace

// The audit stage without a log: idle (skipped by the chain, no record made) while nobody
// follows its feed; each call's record goes to the feed's subscribers while someone does.
TEST_F(PipelineTest, TheAuditFeedGetsRecordsOnlyWhileFollowed) {
    auto feed = std::make_shared<stores::AuditFeed>();
    auto stage = std::make_shared<AuditStage>(nullptr, feed, "host:1");
    EXPECT_TRUE(stage->sometimes_idle());
    EXPECT_TRUE(stage->idle());
    pipeline.add_always(stage);
    pipeline.add_always(std::make_shared<Recorder>("inner", log));
    call({{"text", "unseen"}});
    std::vector<Json> records;
    const auto id = feed->subscribe([&](const std::string& line) { records.push_back(Json::parse(line)); });
    EXPECT_FALSE(stage->idle());
    call({{"text", "seen"}});
    call({{"fail", true}});
    feed->unsubscribe(id);
    call({{"text", "unseen again"}});
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0]["target"], "echo");
    EXPECT_EQ(records[0]["outcome"], "ok");
    EXPECT_EQ(records[0]["replica"], "host:1");
    EXPECT_TRUE(records[0].contains("args_sha256"));
    EXPECT_FALSE(records[0].contains("arguments"));
    EXPECT_EQ(records[1]["outcome"], "tool_error");
    EXPECT_EQ(records[1]["code"], "UPSTREAM_ERROR");
    // The stages inside ran for every call, skipped audit stage or not.
    EXPECT_EQ(std::count(log.begin(), log.end(), "handler"), 4);
}

// A live view gets at most kLivePerSecond records a second; past that the stage is idle for
// it (no record made), until the next second.
TEST_F(PipelineTest, TheAuditFeedSendsAtMostItsRatePerSecond) {
    auto feed = std::make_shared<stores::AuditFeed>();
    auto stage = std::make_shared<AuditStage>(nullptr, feed, "host:1");
    pipeline.add_always(stage);
    pipeline.add_always(std::make_shared<Recorder>("inner", log));
    std::size_t records = 0;
    feed->subscribe([&](const std::string&) { ++records; });
    const std::size_t calls = stores::AuditFeed::kLivePerSecond + 50;
    for (std::size_t i = 0; i < calls; ++i) call({{"text", "x"}});
    // (A second may pass on a slow machine: then a few more go out, never all.)
    EXPECT_GE(records, std::size_t{stores::AuditFeed::kLivePerSecond});
    EXPECT_LT(records, calls);
    EXPECT_EQ(std::count(log.begin(), log.end(), "handler"), static_cast<long>(calls));
}
