// Guards (pipeline/guard.hpp, pipeline/stages/guard.hpp, src/guards/): the webhook's request
// and reply, the interceptor list as SEP-2624 describes it, and the stage itself around a
// tool on the engine (verdicts, failure modes, the verdict cache, the concurrency limit),
// with guards of the test's own that answer as told.
#include <gtest/gtest.h>

#include "guards/interceptor_guard.hpp"
#include "guards/webhook_guard.hpp"
#include "manual_executor.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/stages/guard.hpp"
#include "server/request_context.hpp"
#include "server/session.hpp"
#include "server/tool_error.hpp"
#include "stores/memory_cache.hpp"

using namespace toolport;
using namespace toolport::pipeline;
using namespace std::chrono_literals;

namespace {

// ---- the webhook's wire format ----------------------------------------------------------

TEST(WebhookVerdict, AllowDenyAndModify) {
    auto v = guards::parse_webhook_reply(R"({"decision":"allow"})", GuardPhase::before);
    EXPECT_TRUE(v.allow);
    EXPECT_FALSE(v.replacement);
    EXPECT_EQ(v.cacheable_for, 0s);

    v = guards::parse_webhook_reply(R"({"decision":"deny","reason":"has an SSN","suggestion":"leave it out"})",
                                    GuardPhase::before);
    EXPECT_FALSE(v.allow);
    EXPECT_EQ(v.reason, "has an SSN");
    EXPECT_EQ(v.suggestion, "leave it out");

    v = guards::parse_webhook_reply(R"({"decision":"modify","arguments":{"q":"[redacted]"},"cache_ttl_s":30})",
                                    GuardPhase::before);
    EXPECT_TRUE(v.allow);
    ASSERT_TRUE(v.replacement);
    EXPECT_EQ((*v.replacement)["q"], "[redacted]");
    EXPECT_EQ(v.cacheable_for, 30s);

    v = guards::parse_webhook_reply(R"({"decision":"modify","result":{"content":[]}})", GuardPhase::after);
    ASSERT_TRUE(v.replacement);
    EXPECT_TRUE((*v.replacement)["content"].is_array());
}

TEST(WebhookVerdict, MalformedRepliesAreFailuresThatSayWhy) {
    auto why = [](std::string_view body, GuardPhase phase = GuardPhase::before) -> std::string {
        try {
            guards::parse_webhook_reply(body, phase);
        } catch (const GuardFailure& e) {
            return e.what();
        }
        return "no failure";
    };
    EXPECT_EQ(why("not json"), "its reply is not JSON");
    EXPECT_EQ(why("[1]"), "its reply is not a JSON object");
    EXPECT_NE(why("{}").find("no \"decision\""), std::string::npos);
    EXPECT_NE(why(R"({"decision":"maybe"})").find("not allow, deny or modify"), std::string::npos);
    // A modification must carry what it modifies, for the phase it is in.
    EXPECT_NE(why(R"({"decision":"modify","result":{"content":[]}})").find("\"arguments\""), std::string::npos);
    EXPECT_NE(why(R"({"decision":"modify","arguments":{}})", GuardPhase::after).find("\"result\""), std::string::npos);
    EXPECT_NE(why(R"({"decision":"deny","reason":7})").find("\"reason\" is not a string"), std::string::npos);
    EXPECT_NE(why(R"({"decision":"allow","cache_ttl_s":-1})").find("cache_ttl_s"), std::string::npos);
}

TEST(WebhookRequest, CarriesTheCallAndWhoCallsButNoCredential) {
    CallerIdentity caller{.principal = "digest", .session_id = "s1", .trace_id = "abc", .subject = "alice"};
    caller.access_token = "secret-token";
    caller.client_headers = {{"x-api-key", "secret-key"}};
    caller.scopes = std::vector<std::string>{"read"};
    const std::string tool = "search", source = "tango";
    Json args = {{"q", "x"}};
    Json result = {{"content", Json::array()}};
    GuardInput input{GuardPhase::after, tool, source, args, &result, caller, Json(7)};
    Json body = guards::webhook_request("pii", input);
    EXPECT_EQ(body["guard"], "pii");
    EXPECT_EQ(body["phase"], "after");
    EXPECT_EQ(body["request_id"], 7);
    EXPECT_EQ(body["tool"], "search");
    EXPECT_EQ(body["source"], "tango");
    EXPECT_EQ(body["arguments"], args);
    EXPECT_EQ(body["result"], result);
    EXPECT_EQ(body["principal"]["id"], "alice");
    EXPECT_EQ(body["principal"]["scopes"], Json::array({"read"}));
    EXPECT_EQ(body["session_id"], "s1");
    const std::string text = body.dump();
    EXPECT_EQ(text.find("secret-token"), std::string::npos);
    EXPECT_EQ(text.find("secret-key"), std::string::npos);

    const CallerIdentity nobody;
    GuardInput before{GuardPhase::before, tool, source, args, nullptr, nobody, Json(1)};
    body = guards::webhook_request("pii", before);
    EXPECT_FALSE(body.contains("result"));
    EXPECT_TRUE(body["principal"].is_null());
}

// ---- SEP-2624 discovery ------------------------------------------------------------------

TEST(InterceptorList, KeepsToolsCallHooksAndSkipsUnknownTypesAndModes) {
    Json listed = Json::parse(R"({"interceptors": [
      {"name": "redact", "type": "mutation", "hooks": [{"events": ["tools/call"], "phase": "request"},
                                                       {"events": ["tools/call"], "phase": "response"}],
       "failOpen": true, "priorityHint": {"request": -10, "response": 5}},
      {"name": "pii", "type": "validation", "hooks": [{"events": ["*"], "phase": "response"}], "mode": "audit"},
      {"name": "prompts-only", "type": "validation", "hooks": [{"events": ["prompts/get"], "phase": "request"}]},
      {"name": "future", "type": "observation", "hooks": [{"events": ["*"], "phase": "request"}]},
      {"name": "odd-mode", "type": "validation", "mode": "shadow", "hooks": [{"events": ["*"], "phase": "request"}]},
      {"name": "draft", "type": "validation", "hook": {"events": ["tools/call"], "phase": "both"}, "priorityHint": 3}
    ]})");
    auto list = guards::parse_interceptors(listed);
    ASSERT_EQ(list.size(), 4u);
    EXPECT_EQ(list[0].name, "redact");
    EXPECT_TRUE(list[0].mutation);
    EXPECT_TRUE(list[0].request);
    EXPECT_TRUE(list[0].response);
    EXPECT_EQ(list[0].fail_open, true);
    EXPECT_EQ(list[0].priority_request, -10);
    EXPECT_EQ(list[0].priority_response, 5);
    EXPECT_EQ(list[1].name, "pii");
    EXPECT_TRUE(list[1].audit);
    EXPECT_FALSE(list[1].request);
    EXPECT_TRUE(list[1].response);
    EXPECT_EQ(list[2].name, "prompts-only");
    EXPECT_FALSE(list[2].request || list[2].response);
    EXPECT_EQ(list[3].name, "draft");
    EXPECT_TRUE(list[3].request && list[3].response);
    EXPECT_THROW(guards::parse_interceptors(Json::object()), GuardFailure);
}

// ---- the stage ---------------------------------------------------------------------------

// A guard that answers what the test says, after `delay`, and counts what it was asked.
class ScriptedGuard final : public Guard {
public:
    explicit ScriptedGuard(Executor& executor) : executor_(executor) {}
    std::function<GuardVerdict(const GuardInput&)> answer = [](const GuardInput&) { return GuardVerdict{}; };
    std::chrono::milliseconds delay{0};
    int asked = 0;
    std::vector<Json> seen;

    Task<GuardVerdict> check(const GuardInput& input, const GuardCallLimits&) override {
        ++asked;
        seen.push_back(input.phase == GuardPhase::before ? input.arguments : *input.result);
        if (delay.count() > 0) co_await executor_.sleep(delay);
        co_return answer(input);
    }

private:
    Executor& executor_;
};

class GuardStageTest : public ::testing::Test {
protected:
    GuardStageTest() : cache(exec, 1 << 20, 1000), server(exec, ServerOptions{}) {}

    void start(std::vector<GuardSettings> guards) {
        PipelineConfig config;
        config.defaults.stages = {"guard"};
        stage = std::make_shared<GuardStage>(exec, cache);
        for (auto& s : guards) {
            config.defaults.guards.push_back(s.name);
            auto g = std::make_shared<ScriptedGuard>(exec);
            scripted[s.name] = g;
            stage->add_guard(s, g);
        }
        pipeline = std::make_unique<Pipeline>(PolicyResolver(config));
        pipeline->add(stage);
        ToolSpec t;
        t.name = "echo";
        t.source = "test";
        t.handler = [this](RequestContext&, const Json& args) -> Task<ToolResult> {
            ++ran;
            ran_with = args;
            co_return ToolResult::text(args.value("text", ""));
        };
        server.registry().add_tool(std::move(t));
        server.set_tool_invoker(pipeline->invoker());
        session = open("alice");
    }

    std::shared_ptr<ServerSession> open(std::string subject) {
        auto s = server.open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                     CallerIdentity{.principal = subject, .session_id = "s-" + subject});
        s->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        s->receive(protocol::Notification{"notifications/initialized", nullptr});
        exec.run();
        return s;
    }

    void send(int id, Json args, std::shared_ptr<ServerSession> on = nullptr) {
        (on ? on : session)->receive(protocol::Request{id, "tools/call", {{"name", "echo"}, {"arguments", args}}});
    }
    std::optional<Json> result_of(int id) const {
        for (const auto& m : out) {
            if (m.value("id", Json()) == id && m.contains("result")) return m["result"];
        }
        return std::nullopt;
    }
    Json call(Json args, std::shared_ptr<ServerSession> on = nullptr) {
        const int id = ++next_id;
        send(id, std::move(args), std::move(on));
        exec.advance(0ms);
        auto r = result_of(id);
        EXPECT_TRUE(r) << "no answer";
        return r ? *r : Json();
    }
    static std::string code(const Json& result) {
        if (result.value("isError", false)) return result["structuredContent"].value("error_code", "TOOL_ERROR");
        return "OK";
    }
    static GuardSettings settings(std::string name) {
        GuardSettings s;
        s.name = std::move(name);
        s.timeout = 100ms;
        return s;
    }

    test_support::ManualExecutor exec;
    stores::MemoryCache cache;
    McpServer server;
    std::shared_ptr<GuardStage> stage;
    std::unique_ptr<Pipeline> pipeline;
    std::map<std::string, std::shared_ptr<ScriptedGuard>> scripted;
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
    int next_id = 10;
    int ran = 0;
    Json ran_with;
};

TEST_F(GuardStageTest, AllowLetsTheCallThroughAndChecksBothPhases) {
    start({settings("g")});
    auto r = call({{"text", "hi"}});
    EXPECT_EQ(code(r), "OK");
    EXPECT_EQ(r["content"][0]["text"], "hi");
    EXPECT_EQ(scripted["g"]->asked, 2);  // the arguments, then the result
    EXPECT_EQ(scripted["g"]->seen[0], Json({{"text", "hi"}}));
    EXPECT_EQ(scripted["g"]->seen[1]["content"][0]["text"], "hi");
}

TEST_F(GuardStageTest, ADenialBeforeIsAToolErrorAndTheToolDoesNotRun) {
    start({settings("pii")});
    scripted["pii"]->answer = [](const GuardInput&) {
        return GuardVerdict{.allow = false, .reason = "contains an SSN", .suggestion = "Remove the SSN"};
    };
    auto r = call({{"text", "123-45-6789"}});
    EXPECT_EQ(ran, 0);
    EXPECT_EQ(code(r), "MCP_GUARD_DENIED");
    const Json& e = r["structuredContent"];
    EXPECT_EQ(e["guard"], "pii");
    EXPECT_EQ(e["phase"], "before");
    EXPECT_EQ(e["suggestion"], "Remove the SSN");
    EXPECT_EQ(e["recoverable"], true);
    EXPECT_NE(e["error"].get<std::string>().find("contains an SSN"), std::string::npos);
}

TEST_F(GuardStageTest, ADenialAfterWithholdsTheResult) {
    start({settings("g")});
    scripted["g"]->answer = [](const GuardInput& in) {
        return in.phase == GuardPhase::after ? GuardVerdict{.allow = false, .reason = "leaks"} : GuardVerdict{};
    };
    auto r = call({{"text", "secret"}});
    EXPECT_EQ(ran, 1);
    EXPECT_EQ(code(r), "MCP_GUARD_DENIED");
    EXPECT_EQ(r["structuredContent"]["phase"], "after");
    EXPECT_EQ(r.dump().find("\"secret\""), std::string::npos);
}

TEST_F(GuardStageTest, ReplacementsReachTheToolAndTheClient) {
    start({settings("a"), settings("b")});
    scripted["a"]->answer = [](const GuardInput& in) {
        GuardVerdict v;
        if (in.phase == GuardPhase::before) v.replacement = Json{{"text", "[redacted]"}};
        return v;
    };
    scripted["b"]->answer = [](const GuardInput& in) {
        GuardVerdict v;
        if (in.phase == GuardPhase::after)
            v.replacement = Json{
                {"content",
                 {{{"type", "text"}, {"text", in.result->at("content")[0]["text"].get<std::string>() + "!"}}}}};
        return v;
    };
    auto r = call({{"text", "my SSN"}});
    EXPECT_EQ(ran_with, Json({{"text", "[redacted]"}}));
    EXPECT_EQ(scripted["b"]->seen[0], Json({{"text", "[redacted]"}}));  // the next guard sees the replacement
    EXPECT_EQ(r["content"][0]["text"], "[redacted]!");
}

TEST_F(GuardStageTest, AReplacementThatIsNoResultIsAFailure) {
    start({settings("g")});
    scripted["g"]->answer = [](const GuardInput& in) {
        GuardVerdict v;
        if (in.phase == GuardPhase::after) v.replacement = Json{{"text", "no content array"}};
        return v;
    };
    EXPECT_EQ(code(call({{"text", "x"}})), "MCP_GUARD_UNAVAILABLE");
}

TEST_F(GuardStageTest, AFailureUnderOpenLetsTheCallProceed) {
    auto open = settings("open");
    open.failure_mode = FailureMode::open;
    start({open});
    scripted["open"]->answer = [](const GuardInput&) -> GuardVerdict { throw GuardFailure("it answered HTTP 503"); };
    EXPECT_EQ(code(call({{"text", "x"}})), "OK");  // open: proceeds
    EXPECT_EQ(ran, 1);
}

TEST_F(GuardStageTest, AFailureUnderClosedRefusesTheCall) {
    start({settings("closed")});  // closed is the default
    scripted["closed"]->answer = [](const GuardInput&) -> GuardVerdict { throw GuardFailure("it answered HTTP 503"); };
    auto r = call({{"text", "x"}});
    EXPECT_EQ(ran, 0);
    EXPECT_EQ(code(r), "MCP_GUARD_UNAVAILABLE");
    EXPECT_EQ(r["structuredContent"]["transient"], true);
    EXPECT_NE(r["structuredContent"]["error"].get<std::string>().find("HTTP 503"), std::string::npos);
}

TEST_F(GuardStageTest, TheLimiterHandsAFreedSlotToTheNextWaiterOrLetsItTimeOut) {
    // The limiter: with one slot, a second check waits for it and gets it when the first ends.
    GuardLimiter limiter(exec, 1);
    std::vector<int> got;
    auto take = [&](int who) -> Task<void> {
        const bool ok = co_await limiter.acquire(50ms);
        got.push_back(ok ? who : -who);
    };
    spawn(take(1), [](std::exception_ptr) {});
    spawn(take(2), [](std::exception_ptr) {});
    spawn(take(3), [](std::exception_ptr) {});
    EXPECT_EQ(got, std::vector<int>({1}));
    EXPECT_EQ(limiter.waiting(), 2u);
    limiter.release();  // the slot goes to 2
    EXPECT_EQ(got, std::vector<int>({1, 2}));
    exec.advance(60ms);  // 3 waited too long
    EXPECT_EQ(got, std::vector<int>({1, 2, -3}));
    limiter.release();
    EXPECT_EQ(limiter.in_use(), 0u);
    EXPECT_EQ(limiter.waiting(), 0u);
}

TEST_F(GuardStageTest, ConcurrencyLimitFailsAWaitPastTheTimeout) {
    auto s = settings("busy");
    s.max_concurrency = 1;
    s.timeout = 100ms;
    start({s});
    scripted["busy"]->delay = 80ms;
    send(1, {{"text", "a"}});
    send(2, {{"text", "b"}});
    // Each check holds the slot 80 ms, and each waits at most 80 ms for it (< 100 ms).
    for (int i = 0; i < 30; ++i) exec.advance(20ms);
    ASSERT_TRUE(result_of(1));
    ASSERT_TRUE(result_of(2));
    EXPECT_EQ(code(*result_of(1)), "OK");
    EXPECT_EQ(code(*result_of(2)), "OK");

    // Three at once with one slot: the third waits 160 ms for a slot it may only wait 100 ms for.
    out.clear();
    send(3, {{"text", "c"}});
    send(4, {{"text", "d"}});
    send(5, {{"text", "e"}});
    for (int i = 0; i < 10; ++i) exec.advance(40ms);
    ASSERT_TRUE(result_of(5));
    EXPECT_EQ(code(*result_of(5)), "MCP_GUARD_UNAVAILABLE");
    EXPECT_NE((*result_of(5))["structuredContent"]["error"].get<std::string>().find("limit of 1"), std::string::npos);
}

TEST_F(GuardStageTest, CacheableVerdictsAreReusedPerInputAndCaller) {
    auto s = settings("g");
    s.cache_verdicts = 60s;
    s.after = false;
    start({s});
    scripted["g"]->answer = [](const GuardInput& in) {
        GuardVerdict v;
        v.cacheable_for = 600s;  // capped at the guard's cache_verdicts_s
        v.allow = in.arguments.value("text", "") != "bad";
        v.reason = "bad";
        return v;
    };
    EXPECT_EQ(code(call({{"text", "ok"}})), "OK");
    EXPECT_EQ(code(call({{"text", "ok"}})), "OK");
    EXPECT_EQ(scripted["g"]->asked, 1);
    EXPECT_EQ(code(call({{"text", "bad"}})), "MCP_GUARD_DENIED");
    EXPECT_EQ(code(call({{"text", "bad"}})), "MCP_GUARD_DENIED");  // a cached denial denies
    EXPECT_EQ(scripted["g"]->asked, 2);
    auto bob = open("bob");
    EXPECT_EQ(code(call({{"text", "ok"}}, bob)), "OK");  // another caller: asked again
    EXPECT_EQ(scripted["g"]->asked, 3);
    exec.advance(61s);  // past cache_verdicts_s
    EXPECT_EQ(code(call({{"text", "ok"}})), "OK");
    EXPECT_EQ(scripted["g"]->asked, 4);
}

TEST_F(GuardStageTest, VerdictsNotMarkedCacheableAreNotKept) {
    auto s = settings("g");
    s.cache_verdicts = 60s;
    start({s});
    call({{"text", "ok"}});
    call({{"text", "ok"}});
    EXPECT_EQ(scripted["g"]->asked, 4);
}

TEST(GuardVerdictKey, DependsOnGuardPhaseToolCallerAndInput) {
    CallerIdentity alice{.principal = "alice"}, bob{.principal = "bob"};
    const std::string tool = "t", other_tool = "u", source = "s";
    Json a = {{"x", 1}}, b = {{"x", 2}};
    auto key = [&](const std::string& guard, GuardPhase phase, const std::string& t, const CallerIdentity& c,
                   const Json& args) {
        return GuardStage::verdict_key(guard, GuardInput{phase, t, source, args, nullptr, c, Json(1)}, args);
    };
    const auto base = key("g", GuardPhase::before, tool, alice, a);
    EXPECT_EQ(base, key("g", GuardPhase::before, tool, alice, Json({{"x", 1}})));
    EXPECT_NE(base, key("h", GuardPhase::before, tool, alice, a));
    EXPECT_NE(base, key("g", GuardPhase::after, tool, alice, a));
    EXPECT_NE(base, key("g", GuardPhase::before, other_tool, alice, a));
    EXPECT_NE(base, key("g", GuardPhase::before, tool, bob, a));
    EXPECT_NE(base, key("g", GuardPhase::before, tool, alice, b));
    EXPECT_EQ(base.find("\"x\""), std::string::npos);  // values only hashed
}

TEST(GuardPolicy, GuardsAddUpAcrossLayers) {
    PipelineConfig config;
    config.defaults.guards = {"global"};
    config.sources["tango"].guards = {"pii"};
    config.tools["search"].guards = {"pii", "injection"};
    PolicyResolver resolver(config);
    ToolSpec t;
    t.name = "search";
    t.source = "tango";
    EXPECT_EQ(resolver.resolve(t)->guards, (std::vector<std::string>{"global", "pii", "injection"}));
    ToolSpec other;
    other.name = "other";
    other.source = "rest";
    EXPECT_EQ(resolver.resolve(other)->guards, (std::vector<std::string>{"global"}));
}

}  // namespace
