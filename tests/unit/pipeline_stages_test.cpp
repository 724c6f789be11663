// The pipeline's stages, end to end through the engine: a Runtime built from a Config
// (memory stores, every stage on) with the `testing` pack's misbehaving tools, on a fake
// clock. Each test drives tools/call over a session and reads what the client receives.
#include <gtest/gtest.h>

#include "app/runtime.hpp"
#include "manual_executor.hpp"
#include "providers/source_table.hpp"
#include "pipeline/stages/budget.hpp"
#include "pipeline/stages/rate_limit.hpp"
#include "server/session.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"

using namespace toolport;
using namespace toolport::pipeline;
using namespace std::chrono_literals;

namespace {

class StagesTest : public ::testing::Test {
protected:
    void start(Config config = {}) {
        runtime = std::make_unique<Runtime>(config, exec);
        sources.push_back(providers::start_source("testing", runtime->server()));
        session = open_client();
    }

    std::shared_ptr<ServerSession> open_client(std::string principal = "") {
        auto s = runtime->server().open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                                CallerIdentity{.principal = principal,
                                                               .session_id = "session-" + std::to_string(++sessions)});
        s->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        s->receive(protocol::Notification{"notifications/initialized", nullptr});
        exec.run();
        out.clear();
        return s;
    }

    // Sends a call without waiting for it.
    void send(int id, const std::string& tool, Json args, Json meta = nullptr,
              std::shared_ptr<ServerSession> on = nullptr) {
        Json params = {{"name", tool}, {"arguments", std::move(args)}};
        if (!meta.is_null()) params["_meta"] = std::move(meta);
        (on ? on : session)->receive(protocol::Request{id, "tools/call", std::move(params)});
    }

    // The response to request `id`, if it has arrived.
    std::optional<Json> response(int id) const {
        for (const auto& m : out) {
            if (m.contains("id") && m["id"] == id && (m.contains("result") || m.contains("error"))) return m;
        }
        return std::nullopt;
    }

    Json call(const std::string& tool, Json args = Json::object(), Json meta = nullptr,
              std::shared_ptr<ServerSession> on = nullptr) {
        int id = ++next_id;
        send(id, tool, std::move(args), std::move(meta), std::move(on));
        exec.advance(0ms);  // runs posted work and zero-delay timers (test_sleep {ms: 0})
        auto r = response(id);
        EXPECT_TRUE(r.has_value()) << "no response to " << tool;
        return r ? (*r)["result"] : Json();
    }

    static std::string code(const Json& result) {
        const Json& sc = result.contains("structuredContent") ? result["structuredContent"] : Json();
        if (sc.is_object() && sc.contains("error_code")) return sc["error_code"];
        return result.value("isError", false) ? "TOOL_ERROR" : "OK";
    }

    void TearDown() override {
        if (session) session->close();
        exec.run();
    }

    test_support::ManualExecutor exec;
    std::unique_ptr<Runtime> runtime;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
    int next_id = 100;
    int sessions = 0;
};

// ---- validation ------------------------------------------------------------------------

TEST_F(StagesTest, ValidationNamesTheMissingParameter) {
    start();
    auto r = call("test_validate", {{"kind", "grant"}});
    EXPECT_EQ(r["isError"], true);
    const Json& e = r["structuredContent"];
    EXPECT_EQ(e["error_code"], "MISSING_PARAMETER");
    EXPECT_EQ(e["parameter"], "limit");
    EXPECT_EQ(e["example"], 10);  // the schema's default
    EXPECT_EQ(e["recoverable"], true);
    EXPECT_NE(r["content"][0]["text"].get<std::string>().find("limit"), std::string::npos);
}

TEST_F(StagesTest, ValidationReportsProvidedExpectedAndExample) {
    start();
    auto r = call("test_validate", {{"limit", "ten"}});
    const Json& e = r["structuredContent"];
    EXPECT_EQ(e["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(e["parameter"], "limit");
    EXPECT_EQ(e["provided"], "ten");
    EXPECT_NE(e["expected_format"].get<std::string>().find("integer"), std::string::npos);
    EXPECT_EQ(e["example"], 10);

    r = call("test_validate", {{"limit", 5}, {"filters", {{"naics", 541511}}}});
    EXPECT_EQ(r["structuredContent"]["parameter"], "filters.naics");
    EXPECT_EQ(r["structuredContent"]["example"], "541511");

    r = call("test_validate", {{"limit", 5}, {"award_date", "01/01/2024"}});
    EXPECT_EQ(r["structuredContent"]["parameter"], "award_date");
    EXPECT_EQ(r["structuredContent"]["example"], "2024-01-01");

    r = call("test_validate", {{"limit", 5}, {"kind", "loan"}});
    EXPECT_NE(r["structuredContent"]["expected_format"].get<std::string>().find("grant"), std::string::npos);
}

TEST_F(StagesTest, ValidArgumentsReachTheHandlerAndInvalidOnesNever) {
    start();
    auto ok = call("test_validate", {{"limit", 5}, {"kind", "grant"}});
    EXPECT_FALSE(ok.contains("isError"));
    EXPECT_EQ(ok["structuredContent"]["limit"], 5);
    Json args = {{"key", "v"}, {"downstream_calls", -1}};  // minimum 0
    EXPECT_EQ(code(call("test_counter", args)), "INVALID_ARGUMENT");
    EXPECT_EQ(call("test_counter", {{"key", "v"}})["structuredContent"]["invocation"], 1);  // the bad call never ran
}

TEST_F(StagesTest, ValidationCanBeSwitchedOffPerTool) {
    Config config;
    PolicyOverride off;
    off.disable = {"validate"};
    config.pipeline.tools["test_validate"] = off;
    start(config);
    auto r = call("test_validate", {{"limit", "ten"}});
    EXPECT_FALSE(r.contains("isError"));
    EXPECT_EQ(r["structuredContent"]["limit"], "ten");
}

// ---- timeouts ---------------------------------------------------------------------------

TEST_F(StagesTest, TimeoutCancelsTheWorkAndAnswersWithTimeout) {
    Config config;
    config.pipeline.defaults.timeout = 100ms;
    start(config);
    send(1, "test_sleep", {{"ms", 60000}});
    exec.advance(99ms);
    EXPECT_FALSE(response(1));
    exec.advance(1ms);
    auto r = response(1);
    ASSERT_TRUE(r);
    EXPECT_EQ(code((*r)["result"]), "TIMEOUT");
    EXPECT_EQ((*r)["result"]["structuredContent"]["transient"], true);
    EXPECT_FALSE((*r)["result"]["structuredContent"]["suggestion"].get<std::string>().empty());
    // The session keeps serving.
    EXPECT_EQ(call("test_sleep", {{"ms", 0}})["content"][0]["text"], "slept 0 ms");
}

TEST_F(StagesTest, TimeSpentWaitingForTheUsersAnswerDoesNotCount) {
    Config config;
    config.pipeline.defaults.timeout = 100ms;
    start(config);
    sources.push_back(providers::start_source("conformance", runtime->server()));
    auto s = runtime->server().open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                            CallerIdentity{.session_id = "elicit"});
    s->receive(
        protocol::Request{0,
                          "initialize",
                          {{"protocolVersion", "2025-11-25"}, {"capabilities", {{"elicitation", Json::object()}}}}});
    s->receive(protocol::Notification{"notifications/initialized", nullptr});
    exec.run();
    out.clear();
    send(1, "test_elicitation", {{"message", "Your name?"}}, nullptr, s);
    exec.run();
    ASSERT_FALSE(out.empty());
    const Json question = out.back();
    ASSERT_EQ(question["method"], "elicitation/create");
    exec.advance(5s);  // the person takes their time
    EXPECT_FALSE(response(1));
    s->receive(protocol::Response{question["id"], {{"action", "accept"}, {"content", {{"name", "Ada"}}}}});
    exec.run();
    ASSERT_TRUE(response(1));
    EXPECT_EQ(code((*response(1))["result"]), "OK");
    s->close();
}

TEST_F(StagesTest, AClientCancellationStillGetsNoResponse) {
    start();
    send(1, "test_sleep", {{"ms", 60000}});
    exec.run();
    session->receive(protocol::Notification{"notifications/cancelled", {{"requestId", 1}}});
    exec.advance(61s);
    EXPECT_FALSE(response(1));
}

// ---- size cap ----------------------------------------------------------------------------

TEST_F(StagesTest, ResponsesOverTheCapBecomeResponseTooLarge) {
    start();  // default cap: 1 MiB
    auto big = call("test_large", {{"bytes", 5 << 20}});
    EXPECT_EQ(code(big), "MCP_RESPONSE_TOO_LARGE");
    EXPECT_NE(big["structuredContent"]["error"].get<std::string>().find("1048576"), std::string::npos);
    EXPECT_LT(big.dump().size(), 4096u);
    auto small = call("test_large", {{"bytes", 1000}});
    EXPECT_EQ(small["content"][0]["text"].get<std::string>().size(), 1000u);
}

TEST_F(StagesTest, SizeCapIsConfigurablePerTool) {
    Config config;
    PolicyOverride tight;
    tight.max_response_bytes = 500;
    config.pipeline.tools["test_large"] = tight;
    start(config);
    EXPECT_EQ(code(call("test_large", {{"bytes", 1000}})), "MCP_RESPONSE_TOO_LARGE");
    EXPECT_EQ(code(call("test_large", {{"bytes", 100}})), "OK");
}

// ---- circuit breaker -----------------------------------------------------------------

Config flaky_service_config() {
    Config config;
    PolicyOverride on_flaky;
    on_flaky.service = "flaky";
    config.pipeline.tools["test_fail"] = on_flaky;
    config.pipeline.tools["test_sleep"] = on_flaky;
    ServicePolicy svc;
    svc.breaker_failure_threshold = 3;
    svc.breaker_cooldown = 30s;
    config.pipeline.services["flaky"] = svc;
    config.pipeline.defaults.budget.max_downstream_calls_per_request = 0;  // budgets off here
    return config;
}

TEST_F(StagesTest, BreakerOpensAfterThreeFailuresAndFailsFast) {
    start(flaky_service_config());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(code(call("test_fail", {{"code", "UPSTREAM_ERROR"}})), "UPSTREAM_ERROR");
    auto r = call("test_sleep", {{"ms", 0}});
    EXPECT_EQ(code(r), "SERVER_UNHEALTHY");
    EXPECT_EQ(r["structuredContent"]["retry_after_ms"], 30000);
    EXPECT_EQ(r["structuredContent"]["transient"], true);
}

TEST_F(StagesTest, BreakerLetsOneProbeThroughAfterTheCooldownAndClosesOnSuccess) {
    start(flaky_service_config());
    for (int i = 0; i < 3; ++i) call("test_fail", {{"code", "TIMEOUT"}});
    exec.advance(30s);
    // Half-open: one probe goes (a slow one), a second call meanwhile is refused.
    send(1, "test_sleep", {{"ms", 1000}});
    exec.run();
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "SERVER_UNHEALTHY");
    exec.advance(1s);
    ASSERT_TRUE(response(1));
    EXPECT_EQ(code((*response(1))["result"]), "OK");
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");  // closed again
}

TEST_F(StagesTest, AFailedProbeReopensTheCircuit) {
    start(flaky_service_config());
    for (int i = 0; i < 3; ++i) call("test_fail");
    exec.advance(30s);
    EXPECT_EQ(code(call("test_fail")), "UPSTREAM_ERROR");  // the probe
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "SERVER_UNHEALTHY");
    exec.advance(30s);
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
}

TEST_F(StagesTest, ErrorsAboutTheCallItselfDoNotTripTheBreaker) {
    start(flaky_service_config());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(code(call("test_fail", {{"code", "NOT_FOUND"}})), "NOT_FOUND");
    call("test_fail");
    call("test_fail");
    EXPECT_EQ(code(call("test_fail", {{"code", "NOT_FOUND"}})), "NOT_FOUND");  // resets the streak
    call("test_fail");
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
}

// ---- cache ---------------------------------------------------------------------------------

TEST_F(StagesTest, ReadOnlyToolsAreCachedByArguments) {
    start();
    auto first = call("test_counter", {{"key", "a"}, {"downstream_calls", 3}});
    EXPECT_EQ(first["structuredContent"]["invocation"], 1);
    EXPECT_EQ(first["_meta"]["cache_status"], "miss");
    EXPECT_EQ(first["_meta"]["downstream_api_calls"], 3);
    auto second = call("test_counter", {{"downstream_calls", 3}, {"key", "a"}});  // same arguments, other order
    EXPECT_EQ(second["structuredContent"]["invocation"], 1);
    EXPECT_EQ(second["_meta"]["cache_status"], "hit");
    EXPECT_EQ(second["_meta"]["downstream_api_calls"], 0);
    EXPECT_EQ(call("test_counter", {{"key", "b"}})["structuredContent"]["invocation"], 1);  // other arguments
}

// Credentials a client sends in a header (a per-user API key) scope the cache: another key
// never sees this key's results.
TEST_F(StagesTest, CachedResultsAreScopedByForwardedClientHeaders) {
    start();
    auto other = open_client();
    session->caller().client_headers = {{"x-api-key", "alice-key"}};
    other->caller().client_headers = {{"x-api-key", "bob-key"}};
    EXPECT_EQ(call("test_counter", {{"key", "k"}})["structuredContent"]["invocation"], 1);
    EXPECT_EQ(call("test_counter", {{"key", "k"}})["structuredContent"]["invocation"], 1);  // alice: cached
    EXPECT_EQ(call("test_counter", {{"key", "k"}}, nullptr, other)["structuredContent"]["invocation"], 2);
    other->close();
}

// A source whose envelope says whether the answer was cached corrects it on a hit.
TEST_F(StagesTest, ASourceMayAdjustAResultServedFromTheCache) {
    start();
    int runs = 0;
    providers::SourceContext probe("probe", runtime->server());
    probe.add_tool({.name = "envelope",
                    .annotations = {.read_only = true},
                    .handler = [&runs](RequestContext&, const Json&) -> Task<ToolResult> {
                        ++runs;
                        co_return ToolResult::structured(Json{{"execution", {{"cached", false}}}});
                    },
                    .on_cache_hit = [](ToolResult& r) { r.structured_content["execution"]["cached"] = true; }});
    EXPECT_EQ(call("envelope")["structuredContent"]["execution"]["cached"], false);
    EXPECT_EQ(call("envelope")["structuredContent"]["execution"]["cached"], true);
    EXPECT_EQ(runs, 1);
}

TEST_F(StagesTest, CacheEntriesExpireAfterTheirTtl) {
    Config config;
    config.pipeline.defaults.cache.ttl = 10s;
    start(config);
    call("test_counter", {{"key", "t"}});
    exec.advance(9s);
    EXPECT_EQ(call("test_counter", {{"key", "t"}})["_meta"]["cache_status"], "hit");
    exec.advance(2s);
    EXPECT_EQ(call("test_counter", {{"key", "t"}})["structuredContent"]["invocation"], 2);
}

TEST_F(StagesTest, ACallerCanBypassTheCache) {
    start();
    call("test_counter", {{"key", "k"}});
    auto r = call("test_counter", {{"key", "k"}}, {{"toolport/cache", "bypass"}});
    EXPECT_EQ(r["structuredContent"]["invocation"], 2);
    EXPECT_EQ(r["_meta"]["cache_status"], "bypass");
    EXPECT_EQ(call("test_counter", {{"key", "k"}})["structuredContent"]["invocation"], 2);  // refreshed
}

TEST_F(StagesTest, ToolsWithoutReadOnlyHintAndErrorsAreNotCached) {
    start();
    EXPECT_EQ(call("test_validate", {{"limit", 1}})["_meta"]["cache_status"], "bypass");
    Config all;
    all.pipeline.defaults.cache.mode = CacheMode::all;
    runtime.reset();
    start(all);
    call("test_fail", {{"code", "NOT_FOUND"}});
    EXPECT_EQ(call("test_fail", {{"code", "NOT_FOUND"}})["_meta"]["cache_status"], "miss");
    call("test_validate", {{"limit", 1}});
    EXPECT_EQ(call("test_validate", {{"limit", 1}})["_meta"]["cache_status"], "hit");
}

TEST_F(StagesTest, PerUserCachesKeepCallersApart) {
    Config config;
    config.pipeline.defaults.cache.per_user = true;
    start(config);
    call("test_counter", {{"key", "u"}});
    auto other = open_client("bearer:other");
    EXPECT_EQ(call("test_counter", {{"key", "u"}}, nullptr, other)["_meta"]["cache_status"], "miss");
    EXPECT_EQ(call("test_counter", {{"key", "u"}})["_meta"]["cache_status"], "hit");
    other->close();
}

// ---- budgets --------------------------------------------------------------------------------

Config budget_config() {
    Config config;
    PolicyOverride metered;
    metered.service = "metered";
    config.pipeline.tools["test_sleep"] = metered;
    PolicyOverride no_cache;
    no_cache.disable = {"cache"};
    no_cache.service = "metered";
    config.pipeline.tools["test_counter"] = no_cache;
    return config;  // limit 120, 12 per call without metadata
}

TEST_F(StagesTest, BudgetRefusesTheEleventhUnreportedCallInARequest) {
    start(budget_config());
    for (int i = 0; i < 10; ++i) ASSERT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK") << i;
    auto r = call("test_sleep", {{"ms", 0}});
    EXPECT_EQ(code(r), "MCP_BUDGET_EXCEEDED");
    EXPECT_EQ(r["structuredContent"]["recoverable"], true);
    EXPECT_NE(r["structuredContent"]["suggestion"].get<std::string>().find("narrow"), std::string::npos);
}

TEST_F(StagesTest, BudgetSettlesToTheReportedFigure) {
    start(budget_config());
    for (int i = 0; i < 100; ++i) ASSERT_EQ(code(call("test_counter", {{"downstream_calls", 1}})), "OK") << i;
    // 100 used; one more call may cost 12 → 112 ≤ 120.
    EXPECT_EQ(code(call("test_counter", {{"downstream_calls", 1}})), "OK");
    for (int i = 0; i < 7; ++i) call("test_counter", {{"downstream_calls", 1}});  // 108
    EXPECT_EQ(code(call("test_counter", {{"downstream_calls", 1}})), "OK");       // 109 (108 + 12 = 120 fits)
    EXPECT_EQ(code(call("test_counter", {{"downstream_calls", 1}})), "MCP_BUDGET_EXCEEDED");
}

TEST_F(StagesTest, ParallelCallsCannotOverspend) {
    start(budget_config());
    for (int i = 0; i < 20; ++i) send(i + 1, "test_sleep", {{"ms", 100}});
    exec.advance(200ms);
    int granted = 0, refused = 0;
    for (int i = 0; i < 20; ++i) {
        auto r = response(i + 1);
        ASSERT_TRUE(r) << i;
        auto c = code((*r)["result"]);
        if (c == "OK") ++granted;
        else if (c == "MCP_BUDGET_EXCEEDED") ++refused;
    }
    EXPECT_EQ(granted, 10);
    EXPECT_EQ(refused, 10);
}

TEST_F(StagesTest, TraceparentScopesTheBudgetToOneUserRequest) {
    start(budget_config());
    Json trace_a = {{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
    Json trace_b = {{"traceparent", "00-1af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}};
    for (int i = 0; i < 10; ++i) call("test_sleep", {{"ms", 0}}, trace_a);
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}}, trace_a)), "MCP_BUDGET_EXCEEDED");
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}}, trace_b)), "OK");  // another user request
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");           // the session scope is separate
}

TEST_F(StagesTest, BudgetWarningsReachTheClientOnceAt75And90Percent) {
    start(budget_config());
    session->receive(protocol::Request{7, "logging/setLevel", {{"level", "warning"}}});
    exec.run();
    auto warnings = [&] {
        int n = 0;
        for (const auto& m : out)
            if (m.value("method", "") == "notifications/message" &&
                m["params"]["data"].value("event", "") == "mcp_budget_warning")
                ++n;
        return n;
    };
    for (int i = 0; i < 7; ++i) call("test_sleep", {{"ms", 0}});  // 84 of 120 = 70 %
    EXPECT_EQ(warnings(), 0);
    call("test_sleep", {{"ms", 0}});  // 96 = 80 %
    EXPECT_EQ(warnings(), 1);
    call("test_sleep", {{"ms", 0}});  // 108 = 90 %
    EXPECT_EQ(warnings(), 2);
    call("test_sleep", {{"ms", 0}});  // 120 = 100 %: no new threshold
    EXPECT_EQ(warnings(), 2);
    // The message says which tally it was: this session's (the calls mark no user request).
    std::vector<std::string> messages;
    for (const auto& m : out)
        if (m.value("method", "") == "notifications/message" &&
            m["params"]["data"].value("event", "") == "mcp_budget_warning")
            messages.push_back(m["params"]["data"].value("message", ""));
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].rfind("Budget warning: 96 of 120 downstream API calls used in this session, which marks no "
                                "user request",
                                0),
              0u)
        << messages[0];
    EXPECT_NE(messages[1].find("Budget critically low: 108 of 120"), std::string::npos) << messages[1];
    EXPECT_NE(messages[1].find("since it was last idle for"), std::string::npos) << messages[1];
}

TEST_F(StagesTest, MetaReportsWhatTheBudgetCounted) {
    Config config = budget_config();
    PolicyOverride failing;
    failing.service = "metered";
    config.pipeline.tools["test_fail"] = failing;
    start(config);
    // No figure from the source: the estimate the budget counted (12), not 0.
    EXPECT_EQ(call("test_sleep", {{"ms", 0}})["_meta"]["downstream_api_calls"], 12);
    EXPECT_EQ(call("test_counter", {{"downstream_calls", 3}})["_meta"]["downstream_api_calls"], 3);
    // A failure that reached the service cost that one call; a refusal on our side, none.
    EXPECT_EQ(call("test_fail", Json::object())["_meta"]["downstream_api_calls"], 1);
    EXPECT_EQ(call("test_fail", {{"code", "INVALID_ARGUMENT"}})["_meta"]["downstream_api_calls"], 0);
}

TEST_F(StagesTest, MetaReportsTheEstimateWithTheBudgetOff) {
    Config config = budget_config();
    config.pipeline.defaults.budget.max_downstream_calls_per_request = 0;
    start(config);
    EXPECT_EQ(call("test_sleep", {{"ms", 0}})["_meta"]["downstream_api_calls"], 12);
    EXPECT_EQ(call("test_counter", {{"downstream_calls", 2}})["_meta"]["downstream_api_calls"], 2);
}

TEST_F(StagesTest, ToolsWithoutAServiceSpendNoBudget) {
    start();
    for (int i = 0; i < 30; ++i) ASSERT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
}

TEST(TraceparentTest, ParsesOnlyValidW3CHeaders) {
    EXPECT_EQ(BudgetStage::trace_id("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
              "0af7651916cd43dd8448eb211c80319c");
    EXPECT_FALSE(BudgetStage::trace_id("00-00000000000000000000000000000000-b7ad6b7169203331-01"));
    EXPECT_FALSE(BudgetStage::trace_id("00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"));
    EXPECT_FALSE(BudgetStage::trace_id("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
    EXPECT_FALSE(BudgetStage::trace_id("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"));
    EXPECT_TRUE(BudgetStage::trace_id("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra"));
    EXPECT_FALSE(BudgetStage::trace_id("garbage"));
    EXPECT_FALSE(BudgetStage::trace_id(""));
}

// ---- rate limits ------------------------------------------------------------------------------

TEST_F(StagesTest, ServiceSpacingMakesAnEarlyCallWaitForItsSlot) {
    Config config = flaky_service_config();
    config.pipeline.services["flaky"].rate_limit.min_spacing = 100ms;
    config.pipeline.services["flaky"].rate_limit.max_wait = 1s;
    start(config);
    send(1, "test_sleep", {{"ms", 0}});
    send(2, "test_sleep", {{"ms", 0}});
    exec.advance(0ms);
    EXPECT_TRUE(response(1));
    EXPECT_FALSE(response(2));
    exec.advance(99ms);
    EXPECT_FALSE(response(2));
    exec.advance(1ms);
    ASSERT_TRUE(response(2));
    EXPECT_EQ(code((*response(2))["result"]), "OK");
}

// A source that sends several requests in one call (pages of a listing) paces each one:
// the spacing holds per request, not per call.
TEST_F(StagesTest, EachDownstreamRequestOfACallTakesItsOwnSlot) {
    Config config = flaky_service_config();
    config.pipeline.services["flaky"].rate_limit.min_spacing = 100ms;
    config.pipeline.services["flaky"].rate_limit.max_wait = 10s;
    start(config);
    std::vector<std::chrono::milliseconds> sent_at;
    const auto t0 = exec.now();
    providers::SourceContext probe("probe", runtime->server());
    probe.add_tool({.name = "three_pages",
                    .handler = [&](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                        for (int page = 0; page < 3; ++page) {
                            co_await ctx.pace_downstream_request();
                            sent_at.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(exec.now() - t0));
                        }
                        co_return ToolResult::text("3 pages");
                    },
                    .service = "flaky"});
    send(1, "three_pages", Json::object());
    exec.advance(1s);
    ASSERT_TRUE(response(1));
    EXPECT_EQ(sent_at, (std::vector<std::chrono::milliseconds>{0ms, 100ms, 200ms}));
    // The next call's first request waits for the slot after the last page.
    send(2, "test_sleep", {{"ms", 0}});
    exec.advance(0ms);
    EXPECT_TRUE(response(2));  // 1 s later: the slots are long past
}

// A tool that paces its own requests pays for slots only when it sends requests: calls it
// refuses on its own checks neither take a slot nor wait for one.
TEST_F(StagesTest, ASelfPacingToolTakesSlotsOnlyForTheRequestsItSends) {
    Config config = flaky_service_config();
    config.pipeline.services["flaky"].rate_limit.min_spacing = 100ms;
    config.pipeline.services["flaky"].rate_limit.max_wait = 10s;
    start(config);
    std::vector<std::chrono::milliseconds> sent_at;
    const auto t0 = exec.now();
    providers::SourceContext probe("probe", runtime->server());
    probe.add_tool({.name = "paced",
                    .handler = [&](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
                        if (args.value("refuse", false)) throw ToolError(ToolErrorCode::invalid_argument, "refused");
                        for (int i = 0; i < args.value("requests", 1); ++i) {
                            co_await ctx.pace_downstream_request();
                            sent_at.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(exec.now() - t0));
                        }
                        co_return ToolResult::text("sent");
                    },
                    .service = "flaky",
                    .paces_downstream = true});
    EXPECT_EQ(code(call("paced", {{"refuse", true}})), "INVALID_ARGUMENT");
    EXPECT_EQ(code(call("paced", {{"refuse", true}})), "INVALID_ARGUMENT");
    send(1, "paced", {{"requests", 2}});
    exec.advance(1s);
    ASSERT_TRUE(response(1));
    EXPECT_EQ(sent_at, (std::vector<std::chrono::milliseconds>{0ms, 100ms}));  // no slot went to the refusals
}

TEST_F(StagesTest, ServiceTokenBucketRefusesWithRetryAfter) {
    Config config = flaky_service_config();
    config.pipeline.services["flaky"].rate_limit.rate = 1;  // one a second
    config.pipeline.services["flaky"].rate_limit.burst = 2;
    config.pipeline.services["flaky"].rate_limit.max_wait = 0ms;
    start(config);
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
    auto r = call("test_sleep", {{"ms", 0}});
    EXPECT_EQ(code(r), "RATE_LIMITED");
    auto retry = r["structuredContent"]["retry_after_ms"].get<long long>();
    EXPECT_GT(retry, 0);
    EXPECT_LE(retry, 1000);
    exec.advance(std::chrono::milliseconds(retry));
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
}

TEST_F(StagesTest, ClientQuotaIsPerClient) {
    Config config;
    config.pipeline.defaults.client_quota.per_minute = 2;
    start(config);
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}})), "OK");
    auto r = call("test_sleep", {{"ms", 0}});
    EXPECT_EQ(code(r), "RATE_LIMITED");
    EXPECT_GT(r["structuredContent"]["retry_after_ms"].get<long long>(), 0);
    auto other = open_client();
    EXPECT_EQ(code(call("test_sleep", {{"ms", 0}}, nullptr, other)), "OK");
    other->close();
}

// ---- errors and accounting ----------------------------------------------------------------------

TEST_F(StagesTest, APlainExceptionBecomesAnInternalErrorWithTheSameShape) {
    start();
    auto r = call("test_fail", {{"crash", true}, {"message", "boom at /home/alice/secret.txt"}});
    const Json& e = r["structuredContent"];
    EXPECT_EQ(e["error_code"], "INTERNAL_ERROR");
    EXPECT_EQ(e["recoverable"], false);
    EXPECT_EQ(e["error"].get<std::string>().find("/home/alice"), std::string::npos);
    for (const char* k : {"error", "error_code", "suggestion", "recoverable", "transient"})
        EXPECT_TRUE(e.contains(k)) << k;
    EXPECT_TRUE(r["_meta"].contains("tokens_estimate"));
}

}  // namespace

TEST(NamedDigest, IsRightWhetherRememberedOrNot) {
    // More secrets than a thread remembers, asked for twice over in two orders, under two
    // prefixes: every answer is the prefixed start of that secret's digest.
    for (int pass = 0; pass < 2; ++pass) {
        for (int i = 0; i < 20; ++i) {
            const int n = pass == 0 ? i : 19 - i;
            const std::string secret = "secret-" + std::to_string(n % 10);
            const std::string prefix = n < 10 ? "session:" : "token:";
            EXPECT_EQ(toolport::util::named_digest(prefix, secret),
                      prefix + toolport::util::sha256_hex(secret).substr(0, 24));
        }
    }
}

TEST(ClientQuotaIdentity, IsThePrefixedStartOfTheDigest) {
    using toolport::pipeline::ClientQuotaStage;
    EXPECT_EQ(ClientQuotaStage::client_identity({.principal = "alice", .session_id = "s-1"}),
              "token:" + toolport::util::sha256_hex("alice").substr(0, 24));
    EXPECT_EQ(ClientQuotaStage::client_identity({.session_id = "s-1"}),
              "session:" + toolport::util::sha256_hex("s-1").substr(0, 24));
    EXPECT_EQ(ClientQuotaStage::client_identity({}), "");
}
