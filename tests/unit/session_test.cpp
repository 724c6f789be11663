// The protocol engine through its public interface: a session fed parsed messages, its
// output captured, time controlled by ManualExecutor.
#include <gtest/gtest.h>

#include "manual_executor.hpp"
#include "providers/source_table.hpp"
#include "server/input_required.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "server/tool_error.hpp"
#include "util/json.hpp"

using namespace toolport;
using namespace std::chrono_literals;

namespace {

class SessionTest : public ::testing::Test {
protected:
    SessionTest() {
        ServerOptions options;
        options.page_size = 2;
        options.client_request_timeout = 1000ms;
        server = std::make_unique<McpServer>(exec, options);
        session = open();
    }

    std::shared_ptr<ServerSession> open() {
        return server->open_session([this](const Json& m, const protocol::RequestId* related) {
            out.push_back({m, related ? *related : Json()});
        });
    }

    void deliver(const Json& raw) {
        auto parsed = protocol::classify(raw);
        if (auto* e = std::get_if<protocol::ProtocolError>(&parsed)) session->reject(*e);
        else session->receive(std::get<protocol::Message>(std::move(parsed)));
        exec.run();
    }

    // As a transport does: the text through parse_payload, every item to the session.
    void deliver_text(std::string_view text) {
        auto parsed = protocol::parse_payload(text);
        if (parsed.fatal) session->reject(*parsed.fatal);
        for (auto& item : parsed.items) {
            if (auto* e = std::get_if<protocol::ProtocolError>(&item)) session->reject(*e);
            else session->receive(std::get<protocol::Message>(std::move(item)));
        }
        exec.run();
    }

    void request(const Json& id, const std::string& method, Json params = Json::object()) {
        deliver(protocol::make_request(id, method, std::move(params)));
    }

    // The reply (result or error) to request `id`, or null when none was sent.
    Json reply(const Json& id) const {
        for (const auto& [m, related] : out) {
            if (!m.contains("method") && m.contains("id") && m["id"] == id) return m;
        }
        return nullptr;
    }

    Json call(const Json& id, const std::string& method, Json params = Json::object()) {
        request(id, method, std::move(params));
        return reply(id);
    }

    std::vector<Json> notifications(const std::string& method) const {
        std::vector<Json> found;
        for (const auto& [m, related] : out) {
            if (m.value("method", "") == method && !m.contains("id")) found.push_back(m);
        }
        return found;
    }

    void initialize(const std::string& version = "2025-11-25", Json caps = Json::object()) {
        auto r = call(0, "initialize",
                      {{"protocolVersion", version},
                       {"capabilities", caps},
                       {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
        ASSERT_TRUE(r.contains("result")) << r.dump();
        deliver(protocol::make_notification("notifications/initialized", nullptr));
    }

    void add_tool(const std::string& name, ToolHandler handler, Json schema = Json{{"type", "object"}}) {
        ToolSpec t;
        t.name = name;
        t.description = "test tool " + name;
        t.input_schema = std::move(schema);
        t.handler = std::move(handler);
        server->registry().add_tool(std::move(t));
    }

    static Json stateless_meta(Json caps = Json::object()) {
        return Json{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                    {"io.modelcontextprotocol/clientCapabilities", std::move(caps)}};
    }

    test_support::ManualExecutor exec;
    std::unique_ptr<McpServer> server;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::shared_ptr<ServerSession> session;
    struct Sent {
        Json message;
        Json related;
    };
    std::vector<Sent> out;
};

int error_code(const Json& reply) { return reply.contains("error") ? reply["error"]["code"].get<int>() : 0; }

TEST_F(SessionTest, InitializeEchoesASupportedRevision) {
    for (std::string v : {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}) {
        session = open();
        out.clear();
        auto r = call(1, "initialize", {{"protocolVersion", v}, {"capabilities", Json::object()}});
        EXPECT_EQ(r["result"]["protocolVersion"], v);
        EXPECT_EQ(r["result"]["serverInfo"]["name"], "toolport");
        EXPECT_TRUE(r["result"]["capabilities"].contains("tools"));
    }
}

TEST_F(SessionTest, InitializeWithUnknownRevisionOffersLatestHandshakeRevision) {
    auto r = call(1, "initialize", {{"protocolVersion", "1999-01-01"}, {"capabilities", Json::object()}});
    EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
    session = open();
    r = call(1, "initialize", {{"protocolVersion", "2026-07-28"}, {"capabilities", Json::object()}});
    EXPECT_EQ(r["result"]["protocolVersion"], "2025-11-25");
}

TEST_F(SessionTest, InitializeNeedsAStringVersion) {
    EXPECT_EQ(error_code(call(1, "initialize", {{"protocolVersion", 5}})), -32602);
    EXPECT_EQ(error_code(call(2, "initialize", Json::object())), -32602);
}

TEST_F(SessionTest, RequestBeforeInitializeIsRefusedButPingIsAnswered) {
    EXPECT_EQ(error_code(call(1, "tools/list")), -32600);
    EXPECT_EQ(call(2, "ping")["result"], Json::object());
}

TEST_F(SessionTest, SecondInitializeIsRefused) {
    initialize();
    EXPECT_EQ(error_code(call(5, "initialize", {{"protocolVersion", "2025-11-25"}})), -32600);
}

TEST_F(SessionTest, UnknownMethodIsMethodNotFound) {
    initialize();
    auto r = call("x", "no/such/method");
    EXPECT_EQ(error_code(r), -32601);
    EXPECT_EQ(r["id"], "x");
}

TEST_F(SessionTest, IdsOfEveryLegalTypeAreEchoedUnchanged) {
    initialize();
    for (Json id : {Json(7), Json("seven"), Json(-3), Json(1.5), Json(9007199254740991LL)}) {
        auto r = call(id, "ping");
        ASSERT_FALSE(r.is_null()) << id.dump();
        EXPECT_EQ(r["id"], id);
        EXPECT_EQ(r["id"].type(), id.type());
    }
}

TEST_F(SessionTest, MalformedMessageGetsInvalidRequestAndSessionKeepsServing) {
    initialize();
    deliver(Json{{"jsonrpc", "1.0"}, {"id", 4}, {"method", "ping"}});
    EXPECT_EQ(error_code(reply(4)), -32600);
    EXPECT_EQ(call(5, "ping")["result"], Json::object());
}

TEST_F(SessionTest, ParamsMustBeAnObject) {
    initialize();
    deliver(Json{{"jsonrpc", "2.0"}, {"id", 3}, {"method", "tools/list"}, {"params", Json::array({1})}});
    EXPECT_EQ(error_code(reply(3)), -32602);
}

TEST_F(SessionTest, ToolListPaginatesWithOpaqueCursors) {
    for (const char* n : {"a", "b", "c", "d", "e"}) {
        add_tool(n, [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("x"); });
    }
    initialize();
    std::vector<std::string> names;
    Json params = Json::object();
    int pages = 0;
    for (;; ++pages) {
        auto r = call(100 + pages, "tools/list", params);
        ASSERT_TRUE(r.contains("result")) << r.dump();
        for (const auto& t : r["result"]["tools"]) names.push_back(t["name"]);
        if (!r["result"].contains("nextCursor")) break;
        params = {{"cursor", r["result"]["nextCursor"]}};
        ASSERT_LT(pages, 5);
    }
    EXPECT_EQ(pages, 2);  // three pages of 2, 2, 1
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
    EXPECT_EQ(error_code(call(200, "tools/list", {{"cursor", "!!not-a-cursor!!"}})), -32602);
    EXPECT_EQ(error_code(call(201, "tools/list", {{"cursor", 12}})), -32602);
}

TEST_F(SessionTest, ToolCallErrorsAreProtocolErrorsOrToolResultsAsTheSpecSays) {
    add_tool("boom", [](RequestContext&, const Json&) -> Task<ToolResult> {
        throw std::runtime_error("it broke in /home/alice/project");
        co_return ToolResult{};
    });
    initialize();
    EXPECT_EQ(error_code(call(1, "tools/call", {{"name", "missing"}})), -32602);
    EXPECT_EQ(error_code(call(2, "tools/call", {{"name", 3}})), -32602);
    EXPECT_EQ(error_code(call(3, "tools/call", {{"name", "boom"}, {"arguments", "x"}})), -32602);
    auto r = call(4, "tools/call", {{"name", "boom"}, {"arguments", Json::object()}});
    ASSERT_TRUE(r.contains("result"));
    EXPECT_EQ(r["result"]["isError"], true);
    auto text = r["result"]["content"][0]["text"].get<std::string>();
    EXPECT_NE(text.find("it broke"), std::string::npos);
    EXPECT_EQ(r["result"]["structuredContent"]["error_code"], "INTERNAL_ERROR");
    EXPECT_EQ(text.find("/home/alice"), std::string::npos) << "home paths must not leak: " << text;
}

TEST_F(SessionTest, ToolErrorBecomesAStructuredIsErrorResult) {
    add_tool("strict", [](RequestContext&, const Json&) -> Task<ToolResult> {
        throw ToolError(ToolErrorCode::invalid_format, "date must be YYYY-MM-DD").parameter("date").provided("5/1");
        co_return ToolResult{};
    });
    initialize();
    auto r = call(1, "tools/call", {{"name", "strict"}, {"arguments", Json::object()}});
    EXPECT_EQ(r["result"]["isError"], true);
    EXPECT_EQ(r["result"]["structuredContent"]["error_code"], "INVALID_FORMAT");
    EXPECT_EQ(r["result"]["structuredContent"]["provided"], "5/1");
}

TEST_F(SessionTest, ToolInvokerWrapsEveryCall) {
    add_tool("plain", [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("inner"); });
    int calls = 0;
    server->set_tool_invoker([&calls](RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                                      const Json& args) -> Task<ToolResult> {
        ++calls;
        ToolResult r = co_await tool->handler(ctx, args);
        r.meta = {{"wrapped", tool->name}};
        co_return r;
    });
    initialize();
    auto r = call(1, "tools/call", {{"name", "plain"}});
    EXPECT_EQ(calls, 1);
    EXPECT_EQ(r["result"]["_meta"]["wrapped"], "plain");
    EXPECT_EQ(r["result"]["content"][0]["text"], "inner");
}

TEST_F(SessionTest, ProgressNotificationsEchoTheTokenAndTravelWithTheRequest) {
    add_tool("slow", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        ctx.progress(1, 2, "half");
        co_await ctx.sleep(10ms);
        ctx.progress(2, 2);
        co_return ToolResult::text("done");
    });
    initialize();
    request(9, "tools/call", {{"name", "slow"}, {"_meta", {{"progressToken", "tok-1"}}}});
    EXPECT_TRUE(reply(9).is_null());
    exec.advance(10ms);
    auto progress = notifications("notifications/progress");
    ASSERT_EQ(progress.size(), 2u);
    EXPECT_EQ(progress[0]["params"]["progressToken"], "tok-1");
    EXPECT_EQ(progress[0]["params"]["message"], "half");
    for (const auto& s : out) {
        if (s.message.value("method", "") == "notifications/progress") EXPECT_EQ(s.related, 9);
    }
    EXPECT_EQ(reply(9)["result"]["content"][0]["text"], "done");
}

TEST_F(SessionTest, CancelledRequestGetsNoResponseAndItsWorkStops) {
    bool finished = false;
    add_tool("sleepy", [&finished](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(60s);
        finished = true;
        co_return ToolResult::text("late");
    });
    initialize();
    request(11, "tools/call", {{"name", "sleepy"}});
    EXPECT_EQ(session->in_flight(), 1u);
    deliver(protocol::make_notification("notifications/cancelled", {{"requestId", 11}, {"reason", "user"}}));
    exec.advance(61s);
    EXPECT_FALSE(finished);
    EXPECT_TRUE(reply(11).is_null());
    EXPECT_EQ(session->in_flight(), 0u);
    // Cancelling something unknown or finished is ignored.
    deliver(protocol::make_notification("notifications/cancelled", {{"requestId", 999}}));
    EXPECT_EQ(call(12, "ping")["result"], Json::object());
}

TEST_F(SessionTest, IntegerIdsBeyond64BitsAreEchoedDigitForDigit) {
    initialize();
    for (std::string id : {"18446744073709551616", "-9223372036854775809", "123456789012345678901234567890"}) {
        out.clear();
        deliver_text(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
        ASSERT_EQ(out.size(), 1u) << id;
        EXPECT_EQ(protocol::serialize(out[0].message), R"({"id":)" + id + R"(,"jsonrpc":"2.0","result":{}})");
        EXPECT_EQ(protocol::id_text(out[0].related), id) << "the reply is related to its request";
    }
    // An error about such a request carries the id too.
    out.clear();
    deliver_text(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"no/such"})");
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(error_code(out[0].message), -32601);
    EXPECT_NE(protocol::serialize(out[0].message).find(R"("id":123456789012345678901234567890)"), std::string::npos);
}

TEST_F(SessionTest, CancellationFindsARequestWithAnIdBeyond64Bits) {
    int finished = 0;
    add_tool("sleepy", [&finished](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(60s);
        ++finished;
        co_return ToolResult::text("late");
    });
    initialize();
    out.clear();
    // Two ids that nlohmann alone would read as the same double.
    deliver_text(R"({"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call",)"
                 R"("params":{"name":"sleepy"}})");
    deliver_text(R"({"jsonrpc":"2.0","id":123456789012345678901234567891,"method":"tools/call",)"
                 R"("params":{"name":"sleepy"}})");
    ASSERT_EQ(session->in_flight(), 2u) << "distinct ids, distinct requests";
    deliver_text(R"({"jsonrpc":"2.0","method":"notifications/cancelled",)"
                 R"("params":{"requestId":123456789012345678901234567890,"reason":"user"}})");
    EXPECT_EQ(session->in_flight(), 1u);
    exec.advance(61s);
    EXPECT_EQ(finished, 1) << "only the request that was not cancelled ran to its end";
    ASSERT_EQ(out.size(), 1u) << "a cancelled request gets no reply";
    EXPECT_EQ(protocol::id_text(out[0].message["id"]), "123456789012345678901234567891");
}

TEST_F(SessionTest, DuplicateInFlightIdIsRefused) {
    add_tool("sleepy", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(1s);
        co_return ToolResult::text("ok");
    });
    initialize();
    request(5, "tools/call", {{"name", "sleepy"}});
    request(5, "tools/call", {{"name", "sleepy"}});
    EXPECT_EQ(error_code(reply(5)), -32600);
    exec.advance(1s);
}

TEST_F(SessionTest, LogLevelFiltersMessagesToTheClient) {
    add_tool("chatty", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        ctx.log(LogLevel::debug, "d");
        ctx.log(LogLevel::warning, "w");
        co_return ToolResult::text("ok");
    });
    initialize();
    EXPECT_EQ(call(1, "logging/setLevel", {{"level", "warning"}})["result"], Json::object());
    call(2, "tools/call", {{"name", "chatty"}});
    auto logs = notifications("notifications/message");
    ASSERT_EQ(logs.size(), 1u);
    EXPECT_EQ(logs[0]["params"]["level"], "warning");
    EXPECT_EQ(error_code(call(3, "logging/setLevel", {{"level", "loud"}})), -32602);
}

TEST_F(SessionTest, ElicitationRoundTripInTheStatefulRevisions) {
    add_tool("ask", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        Json answer = co_await ctx.elicit({{"message", "name?"}, {"requestedSchema", {{"type", "object"}}}});
        co_return ToolResult::text(answer["content"]["name"].get<std::string>());
    });
    initialize("2025-06-18", {{"elicitation", Json::object()}});
    request(1, "tools/call", {{"name", "ask"}});
    Json asked;
    for (const auto& s : out) {
        if (s.message.value("method", "") == "elicitation/create") {
            asked = s.message;
            EXPECT_EQ(s.related, 1);  // goes out on the tool call's stream
        }
    }
    ASSERT_TRUE(asked.contains("id"));
    deliver(Json{{"jsonrpc", "2.0"},
                 {"id", asked["id"]},
                 {"result", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}});
    EXPECT_EQ(reply(1)["result"]["content"][0]["text"], "Ada");
}

TEST_F(SessionTest, ClientErrorOrMissingCapabilityBecomesAToolError) {
    add_tool("ask", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        Json answer = co_await ctx.sample({{"messages", Json::array()}, {"maxTokens", 5}});
        co_return ToolResult::text(answer.dump());
    });
    initialize("2025-11-25", {{"sampling", Json::object()}});
    request(1, "tools/call", {{"name", "ask"}});
    Json asked = out.back().message;
    ASSERT_EQ(asked["method"], "sampling/createMessage");
    deliver(Json{{"jsonrpc", "2.0"}, {"id", asked["id"]}, {"error", {{"code", -1}, {"message", "user declined"}}}});
    EXPECT_EQ(reply(1)["result"]["isError"], true);
    EXPECT_NE(reply(1)["result"]["content"][0]["text"].get<std::string>().find("user declined"), std::string::npos);

    session = open();
    out.clear();
    initialize("2025-11-25", Json::object());
    auto r = call(2, "tools/call", {{"name", "ask"}});
    EXPECT_EQ(r["result"]["isError"], true);
    EXPECT_NE(r["result"]["content"][0]["text"].get<std::string>().find("sampling"), std::string::npos);
}

TEST_F(SessionTest, UnansweredClientRequestTimesOutAndIsCancelledAtTheClient) {
    add_tool("ask", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.list_roots();
        co_return ToolResult::text("never");
    });
    initialize("2025-11-25", {{"roots", Json::object()}});
    request(1, "tools/call", {{"name", "ask"}});
    exec.advance(1001ms);
    EXPECT_EQ(reply(1)["result"]["isError"], true);
    EXPECT_EQ(notifications("notifications/cancelled").size(), 1u);
}

TEST_F(SessionTest, ListChangedReachesInitializedSessionsOnly) {
    auto fresh = open();  // never initialized
    initialize();
    out.clear();
    add_tool("new", [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("x"); });
    EXPECT_EQ(notifications("notifications/tools/list_changed").size(), 1u);
    server->registry().batch([&] {
        server->registry().remove_tool("new");
        add_tool("newer", [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("x"); });
    });
    EXPECT_EQ(notifications("notifications/tools/list_changed").size(), 2u);
}

TEST_F(SessionTest, ResourcesReadTemplatesNotFoundAndSubscriptions) {
    sources.push_back(providers::start_source("conformance", *server));
    initialize();
    auto r = call(1, "resources/read", {{"uri", "test://static-text"}});
    EXPECT_EQ(r["result"]["contents"][0]["text"], "This is the content of the static text resource.");
    r = call(2, "resources/read", {{"uri", "test://template/77/data"}});
    EXPECT_EQ(Json::parse(r["result"]["contents"][0]["text"].get<std::string>())["id"], "77");
    r = call(3, "resources/read", {{"uri", "test://nope"}});
    EXPECT_EQ(error_code(r), -32002);
    EXPECT_EQ(r["error"]["data"]["uri"], "test://nope");

    EXPECT_EQ(call(4, "resources/subscribe", {{"uri", "test://watched-resource"}})["result"], Json::object());
    server->resource_updated("test://watched-resource");
    server->resource_updated("test://static-text");
    auto updates = notifications("notifications/resources/updated");
    ASSERT_EQ(updates.size(), 1u);
    EXPECT_EQ(updates[0]["params"]["uri"], "test://watched-resource");
    call(5, "resources/unsubscribe", {{"uri", "test://watched-resource"}});
    server->resource_updated("test://watched-resource");
    EXPECT_EQ(notifications("notifications/resources/updated").size(), 1u);
}

TEST_F(SessionTest, PromptsCheckRequiredArguments) {
    sources.push_back(providers::start_source("conformance", *server));
    initialize();
    auto r = call(1, "prompts/get", {{"name", "test_prompt_with_arguments"}, {"arguments", {{"arg1", "a"}}}});
    EXPECT_EQ(error_code(r), -32602);
    r = call(2, "prompts/get", {{"name", "test_prompt_with_arguments"}, {"arguments", {{"arg1", "a"}, {"arg2", "b"}}}});
    EXPECT_EQ(r["result"]["messages"][0]["content"]["text"], "Prompt with arguments: arg1='a', arg2='b'");
    EXPECT_EQ(error_code(call(3, "prompts/get", {{"name", "nope"}})), -32602);
}

TEST_F(SessionTest, CompletionIsCappedAtOneHundredValues) {
    PromptSpec p;
    p.name = "many";
    p.description = "d";
    p.arguments = {{"x", "", "", false}};
    p.handler = [](RequestContext&, const Json&) -> Task<Json> { co_return Json{{"messages", Json::array()}}; };
    p.completer = [](RequestContext&, const std::string& arg, const std::string& value, const Json&) -> Task<Json> {
        Json values = Json::array();
        for (int i = 0; i < 150; ++i) values.push_back(value + std::to_string(i));
        co_return Json{{"values", values}};
    };
    server->registry().add_prompt(std::move(p));
    initialize();
    auto r = call(1, "completion/complete",
                  {{"ref", {{"type", "ref/prompt"}, {"name", "many"}}}, {"argument", {{"name", "x"}, {"value", "v"}}}});
    EXPECT_EQ(r["result"]["completion"]["values"].size(), 100u);
    EXPECT_EQ(r["result"]["completion"]["total"], 150);
    EXPECT_EQ(r["result"]["completion"]["hasMore"], true);
    EXPECT_EQ(error_code(call(2, "completion/complete",
                              {{"ref", {{"type", "ref/other"}}}, {"argument", {{"name", "x"}, {"value", "v"}}}})),
              -32602);
}

TEST_F(SessionTest, ListsArePrivateOnceCallersSeeDifferentViews) {
    // Gateway profiles (chosen by path, or by token at the same URL) show callers different
    // lists: a cache shared between callers must keep none of them, not even the full one.
    server->add_view("small", [](const ToolSpec& t) { return t.name == "a"; });
    for (std::string view : {"small", ""}) {
        session = server->open_session(
            [this](const Json& m, const protocol::RequestId*) {
                out.push_back({m, Json()});
            },
            CallerIdentity{.view = view});
        auto r = call(1, "tools/list", {{"_meta", stateless_meta()}});
        ASSERT_TRUE(r.contains("result")) << r.dump();
        EXPECT_EQ(r["result"]["cacheScope"], "private") << view;
        out.clear();
    }
}

TEST_F(SessionTest, StatelessRequestsNeedNoHandshakeAndCarryResultType) {
    sources.push_back(providers::start_source("conformance", *server));
    auto r = call(1, "tools/call", {{"name", "test_simple_text"}, {"_meta", stateless_meta()}});
    ASSERT_TRUE(r.contains("result")) << r.dump();
    EXPECT_EQ(r["result"]["resultType"], "complete");
    EXPECT_EQ(r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "toolport");
    r = call(2, "tools/list", {{"_meta", stateless_meta()}});
    EXPECT_TRUE(r["result"].contains("ttlMs"));
    EXPECT_TRUE(r["result"].contains("cacheScope"));
    EXPECT_EQ(r["result"]["cacheScope"], "public");  // every caller gets the same list
    r = call(3, "server/discover", {{"_meta", stateless_meta()}});
    EXPECT_TRUE(r["result"]["supportedVersions"].is_array());
    // Removed in 2026-07-28.
    EXPECT_EQ(error_code(call(4, "ping", {{"_meta", stateless_meta()}})), -32601);
    EXPECT_EQ(error_code(call(5, "initialize", {{"_meta", stateless_meta()}})), -32601);
}

TEST_F(SessionTest, StatelessVersionAndMetaErrors) {
    Json meta = stateless_meta();
    meta["io.modelcontextprotocol/protocolVersion"] = "2099-01-01";
    auto r = call(1, "tools/list", {{"_meta", meta}});
    EXPECT_EQ(error_code(r), -32022);
    EXPECT_EQ(r["error"]["data"]["requested"], "2099-01-01");
    EXPECT_TRUE(r["error"]["data"]["supported"].is_array());
    Json no_caps = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}};
    EXPECT_EQ(error_code(call(2, "tools/list", {{"_meta", no_caps}})), -32602);
}

// A handler that turns every std::exception into a friendly result cannot swallow the
// engine's request for the client's input: InputRequired is a control signal, not a failure.
TEST_F(SessionTest, AHandlersCatchAllDoesNotSwallowInputRequired) {
    providers::SourceContext probe("probe", *server);
    probe.add_tool(
        {.name = "asks_politely", .handler = [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
             try {
                 co_await ctx.elicit(
                     {{"message", "Name?"}, {"requestedSchema", {{"type", "object"}, {"properties", Json::object()}}}});
             } catch (const std::exception& e) {
                 co_return ToolResult::text(std::string("swallowed: ") + e.what());
             }
             co_return ToolResult::text("answered");
         }});
    auto r = call(1, "tools/call",
                  {{"name", "asks_politely"}, {"_meta", stateless_meta({{"elicitation", Json::object()}})}});
    EXPECT_EQ(r["result"]["resultType"], "input_required") << r.dump();
}

TEST_F(SessionTest, MultiRoundTripWithSignedState) {
    sources.push_back(providers::start_source("conformance", *server));
    Json caps = {{"elicitation", Json::object()}};
    auto r1 = call(1, "tools/call",
                   {{"name", "test_input_required_result_multi_round"}, {"_meta", stateless_meta(caps)}});
    ASSERT_EQ(r1["result"]["resultType"], "input_required") << r1.dump();
    ASSERT_TRUE(r1["result"]["inputRequests"].contains("step1"));
    Json state1 = r1["result"]["requestState"];
    ASSERT_TRUE(state1.is_string());

    auto r2 = call(2, "tools/call",
                   {{"name", "test_input_required_result_multi_round"},
                    {"inputResponses", {{"step1", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}}},
                    {"requestState", state1},
                    {"_meta", stateless_meta(caps)}});
    ASSERT_EQ(r2["result"]["resultType"], "input_required") << r2.dump();
    ASSERT_TRUE(r2["result"]["inputRequests"].contains("step2"));
    EXPECT_NE(r2["result"]["requestState"], state1);

    auto r3 = call(3, "tools/call",
                   {{"name", "test_input_required_result_multi_round"},
                    {"inputResponses", {{"step2", {{"action", "accept"}, {"content", {{"color", "blue"}}}}}}},
                    {"requestState", r2["result"]["requestState"]},
                    {"_meta", stateless_meta(caps)}});
    EXPECT_EQ(r3["result"]["content"][0]["text"], "Multi-round complete for Ada who likes blue");

    // A modified state is refused.
    auto tampered = call(4, "tools/call",
                         {{"name", "test_input_required_result_multi_round"},
                          {"inputResponses", {{"step2", {{"action", "accept"}, {"content", {{"color", "red"}}}}}}},
                          {"requestState", r2["result"]["requestState"].get<std::string>() + "-TAMPERED"},
                          {"_meta", stateless_meta(caps)}});
    EXPECT_EQ(error_code(tampered), -32602);
    // A malformed answer is asked for again, never taken.
    auto bad = call(5, "tools/call",
                    {{"name", "test_input_required_result_elicitation"},
                     {"inputResponses", {{"user_name", 12345}}},
                     {"_meta", stateless_meta(caps)}});
    EXPECT_EQ(bad["result"]["resultType"], "input_required");
}

TEST_F(SessionTest, StatelessClientRequestForUndeclaredCapabilityIsMinus32021) {
    sources.push_back(providers::start_source("conformance", *server));
    auto r = call(1, "tools/call", {{"name", "test_input_required_result_sampling"}, {"_meta", stateless_meta()}});
    EXPECT_EQ(error_code(r), -32021);
    EXPECT_TRUE(r["error"]["data"]["requiredCapabilities"]["sampling"].is_object());
}

TEST_F(SessionTest, OlderRevisionsAreNotSentFieldsTheyDoNotDefine) {
    ToolSpec t;
    t.name = "rich";
    t.title = "Rich tool";
    t.description = "d";
    t.output_schema = {{"type", "object"}};
    t.annotations = {{"readOnlyHint", true}};
    t.icons = Json::array({{{"src", "https://example.com/i.png"}}});
    t.handler = [](RequestContext&, const Json&) -> Task<ToolResult> {
        ToolResult r = ToolResult::structured({{"n", 1}});
        r.add(content::resource_link("test://x", "x"));
        co_return r;
    };
    server->registry().add_tool(std::move(t));

    initialize("2025-11-25");
    Json tool = call(1, "tools/list")["result"]["tools"][0];
    EXPECT_TRUE(tool.contains("title") && tool.contains("icons") && tool.contains("outputSchema"));
    Json result = call(2, "tools/call", {{"name", "rich"}})["result"];
    EXPECT_EQ(result["structuredContent"]["n"], 1);
    EXPECT_EQ(result["content"][1]["type"], "resource_link");

    session = open();
    out.clear();
    initialize("2024-11-05");
    tool = call(1, "tools/list")["result"]["tools"][0];
    EXPECT_FALSE(tool.contains("title") || tool.contains("icons") || tool.contains("outputSchema") ||
                 tool.contains("annotations"))
        << tool.dump();
    result = call(2, "tools/call", {{"name", "rich"}})["result"];
    EXPECT_FALSE(result.contains("structuredContent"));
    EXPECT_EQ(result["content"][1]["type"], "text");
    EXPECT_NE(result["content"][1]["text"].get<std::string>().find("test://x"), std::string::npos);
}

TEST(RequestState, SealedStateOpensOnlyWithTheSameKeyAndUnchanged) {
    Json state = {{"answers", {{"a", 1}}}};
    auto sealed = seal_request_state("key-1", state);
    EXPECT_EQ(open_request_state("key-1", sealed), state);
    EXPECT_FALSE(open_request_state("key-2", sealed));
    EXPECT_FALSE(open_request_state("key-1", sealed + "x"));
    EXPECT_FALSE(open_request_state("key-1", "no-dot"));
}

TEST_F(SessionTest, ClosingASessionCancelsItsWork) {
    bool finished = false;
    add_tool("sleepy", [&finished](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(10s);
        finished = true;
        co_return ToolResult::text("late");
    });
    initialize();
    request(1, "tools/call", {{"name", "sleepy"}});
    session->close();
    exec.advance(11s);
    EXPECT_FALSE(finished);
    EXPECT_TRUE(reply(1).is_null());
    EXPECT_EQ(server->session_count(), 0u);
}

TEST_F(SessionTest, AnExtensionAdvertisesItselfAndServesItsMethodsInEveryRevision) {
    std::map<std::string, ExtensionMethod> methods;
    methods["example/echo"] = {[](RequestContext& ctx) -> Task<Json> {
                                   co_return Json{{"echo", ctx.params().value("x", 0)}};
                               },
                               true};
    methods["example/fail"] = {[](RequestContext&) -> Task<Json> {
                                   throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: no");
                                   co_return Json();
                               },
                               false};
    server->add_extension("com.example/ext", {{"flag", true}}, std::move(methods));
    EXPECT_THROW(server->add_extension("com.example/bad", Json::object(),
                                       {{"tools/call", {[](RequestContext&) -> Task<Json> { co_return Json(); }}}}),
                 std::invalid_argument);

    initialize("2025-03-26");
    EXPECT_EQ(reply(0)["result"]["capabilities"]["extensions"], Json({{"com.example/ext", {{"flag", true}}}}));
    auto r = call(1, "example/echo", {{"x", 7}});
    EXPECT_EQ(r["result"], Json({{"echo", 7}})) << r;  // no cache attributes before 2026-07-28
    EXPECT_EQ(error_code(call(2, "example/fail")), -32602);
    EXPECT_EQ(error_code(call(3, "example/other")), -32601);

    // On the stateless revision a cacheable method's result carries ttlMs and cacheScope.
    r = call(4, "example/echo", {{"x", 8}, {"_meta", stateless_meta()}});
    EXPECT_EQ(r["result"]["echo"], 8) << r;
    EXPECT_TRUE(r["result"].contains("ttlMs")) << r;
    EXPECT_TRUE(r["result"].contains("cacheScope")) << r;
}

}  // namespace
