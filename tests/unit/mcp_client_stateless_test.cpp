// McpClient speaking the stateless revision (2026-07-28) to Toolport's own McpServer in
// this process (the in-process transport, a fake clock, the conformance pack): discover
// instead of initialize, the per-request _meta, multi round-trip requests, per-request
// capabilities, notifications through subscriptions/listen, the stand-ins for removed
// methods; and the "auto" choice against scripted servers that refuse initialize.
// The same over real HTTP and stdio: mcp_client_stateless_wire_test.cpp.
#include <gtest/gtest.h>

#include "client/mcp_client.hpp"
#include "manual_executor.hpp"
#include "providers/source_table.hpp"
#include "scripted_client_transports.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;
using test_support::RecordingTransport;
using test_support::ScriptedTransport;

namespace {

constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
constexpr const char* kClientInfoKey = "io.modelcontextprotocol/clientInfo";

ClientOptions stateless(Json capabilities = Json::object()) {
    ClientOptions options;
    options.protocol_version = "2026-07-28";
    options.capabilities = std::move(capabilities);
    return options;
}

Json elicitation_and_sampling() { return {{"elicitation", Json::object()}, {"sampling", Json::object()}}; }

// An elicitation answer {"action": "accept", "content": {field: value}}.
Json accept(const std::string& field, const std::string& value) {
    return {{"action", "accept"}, {"content", {{field, value}}}};
}

class McpClientStateless : public ::testing::Test {
protected:
    McpClientStateless() {
        ServerOptions options;
        options.page_size = 5;
        server = std::make_unique<McpServer>(exec, options);
        sources.push_back(providers::start_source("conformance", *server));
    }

    // Owned by the fixture, which closes it at the end (its listen and the server's side
    // of it are coroutines that only a close lets finish).
    McpClient* make_client(ClientOptions options) {
        auto transport = make_in_process_transport(*server, CallerIdentity{.session_id = "test"});
        clients.push_back(
            std::make_unique<McpClient>(exec, std::make_unique<RecordingTransport>(std::move(transport), sent, received),
                                        std::move(options)));
        return clients.back().get();
    }

    void TearDown() override {
        for (auto& client : clients) {
            spawn(client->close(), [](std::exception_ptr) {});
            exec.run();
        }
        clients.clear();
        exec.run();
    }

    // Runs the loop (and the fake clock, 10 ms at a time) until `task` is done.
    Json drive(Task<Json> task) {
        struct Outcome {
            bool done = false;
            std::optional<Json> value;
            std::exception_ptr error;
        };
        auto outcome = std::make_shared<Outcome>();
        spawn(std::move(task), [outcome](std::optional<Json> v, std::exception_ptr e) {
            outcome->value = std::move(v);
            outcome->error = e;
            outcome->done = true;
        });
        exec.run();
        for (int i = 0; !outcome->done && i < 1000; ++i) exec.advance(10ms);
        if (!outcome->done) throw std::runtime_error("the task did not finish within 10 s of fake time");
        if (outcome->error) std::rethrow_exception(outcome->error);
        return std::move(*outcome->value);
    }
    std::vector<Json> drive(Task<std::vector<Json>> task) {
        auto list = std::make_shared<std::vector<Json>>();
        auto wrap = [](Task<std::vector<Json>> t, std::shared_ptr<std::vector<Json>> out) -> Task<Json> {
            *out = co_await std::move(t);
            co_return Json();
        };
        drive(wrap(std::move(task), list));
        return *list;
    }

    std::vector<Json> sent_with_method(const std::string& method) const {
        std::vector<Json> found;
        for (const auto& m : sent) {
            if (m.value("method", "") == method) found.push_back(m);
        }
        return found;
    }

    test_support::ManualExecutor exec;
    std::unique_ptr<McpServer> server;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::vector<Json> sent, received;
    std::vector<std::unique_ptr<McpClient>> clients;
};

TEST_F(McpClientStateless, ConnectsWithDiscoverInsteadOfInitialize) {
    auto client = make_client(stateless());
    Json discovered = drive(client->connect());
    EXPECT_TRUE(client->is_open());
    EXPECT_TRUE(client->is_stateless());
    EXPECT_EQ(client->protocol_version(), "2026-07-28");
    EXPECT_EQ(client->server_info()["name"], "toolport");
    EXPECT_TRUE(client->server_capabilities().contains("tools"));
    EXPECT_TRUE(discovered["supportedVersions"].is_array());
    ASSERT_FALSE(sent.empty());
    EXPECT_EQ(sent[0]["method"], "server/discover");
    const Json& meta = sent[0]["params"]["_meta"];
    EXPECT_EQ(meta[kVersionKey], "2026-07-28");
    EXPECT_EQ(meta[kClientInfoKey]["name"], "toolport");
    EXPECT_EQ(meta[kCapabilitiesKey], Json::object());
    EXPECT_TRUE(sent_with_method("initialize").empty());
    EXPECT_TRUE(sent_with_method("notifications/initialized").empty());
}

TEST_F(McpClientStateless, EveryRequestCarriesTheMeta) {
    auto client = make_client(stateless({{"roots", Json::object()}}));
    drive(client->connect());
    auto tools = drive(client->list_tools());
    EXPECT_EQ(tools.size(), server->registry().tools().size());
    Json result = drive(client->call_tool("test_simple_text"));
    EXPECT_EQ(result["content"][0]["text"], "This is a simple text response for testing.");
    EXPECT_EQ(result["resultType"], "complete") << "returned as the server sent it";
    auto pages = sent_with_method("tools/list");
    ASSERT_GE(pages.size(), 2u);
    for (const auto& request : sent) {
        if (!request.contains("id")) continue;
        const Json& meta = request["params"]["_meta"];
        EXPECT_EQ(meta[kVersionKey], "2026-07-28") << request.dump();
        EXPECT_EQ(meta[kCapabilitiesKey], (Json{{"roots", Json::object()}})) << request.dump();
    }
}

TEST_F(McpClientStateless, InputRequiredIsAnsweredAndRetriedAcrossRounds) {
    auto client = make_client(stateless(elicitation_and_sampling()));
    drive(client->connect());
    std::vector<Json> asked;
    RequestOptions options;
    options.on_input_required = [&](const Json& questions) -> Task<Json> {
        asked.push_back(questions);
        if (questions.contains("step1")) co_return Json{{"step1", accept("name", "Ada")}};
        co_return Json{{"step2", accept("color", "teal")}};
    };
    Json result = drive(client->call_tool("test_input_required_result_multi_round", Json::object(), options));
    EXPECT_EQ(result["content"][0]["text"], "Multi-round complete for Ada who likes teal");
    ASSERT_EQ(asked.size(), 2u);
    EXPECT_EQ(asked[0]["step1"]["method"], "elicitation/create");
    EXPECT_EQ(asked[0]["step1"]["params"]["message"], "Step 1: What is your name?");
    EXPECT_TRUE(asked[1].contains("step2"));

    auto calls = sent_with_method("tools/call");
    ASSERT_EQ(calls.size(), 3u);
    EXPECT_FALSE(calls[0]["params"].contains("inputResponses"));
    EXPECT_EQ(calls[1]["params"]["inputResponses"], (Json{{"step1", accept("name", "Ada")}}));
    EXPECT_TRUE(calls[1]["params"]["requestState"].is_string());
    EXPECT_EQ(calls[2]["params"]["inputResponses"], (Json{{"step2", accept("color", "teal")}}))
        << "earlier answers travel in requestState, not again";
    EXPECT_NE(calls[1]["params"]["requestState"], calls[2]["params"]["requestState"]);
    for (const auto& call : calls) {
        EXPECT_EQ(call["params"]["name"], "test_input_required_result_multi_round");
        EXPECT_EQ(call["params"]["_meta"][kVersionKey], "2026-07-28");
    }
    EXPECT_NE(calls[0]["id"], calls[1]["id"]) << "each round is a request of its own";
}

TEST_F(McpClientStateless, SeveralQuestionsInOneRound) {
    auto client = make_client(
        stateless({{"elicitation", Json::object()}, {"sampling", Json::object()}, {"roots", Json::object()}}));
    drive(client->connect());
    RequestOptions options;
    options.on_input_required = [](const Json& questions) -> Task<Json> {
        Json answers = Json::object();
        for (const auto& [key, question] : questions.items()) {
            const std::string method = question["method"];
            if (method == "elicitation/create") answers[key] = accept("name", "Ada");
            if (method == "sampling/createMessage") {
                answers[key] = {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "Hi"}}}, {"model", "m"}};
            }
            if (method == "roots/list") answers[key] = {{"roots", {{{"uri", "file:///a"}}, {{"uri", "file:///b"}}}}};
        }
        co_return answers;
    };
    Json result = drive(client->call_tool("test_input_required_result_multiple_inputs", Json::object(), options));
    EXPECT_EQ(result["content"][0]["text"], "Name: Ada; Greeting: Hi; Roots: 2");
}

TEST_F(McpClientStateless, WithoutAHandlerInputRequiredFailsNamingTheQuestions) {
    auto client = make_client(stateless(elicitation_and_sampling()));
    drive(client->connect());
    try {
        drive(client->call_tool("test_input_required_result_elicitation"));
        FAIL() << "expected InputRequiredError";
    } catch (const InputRequiredError& e) {
        EXPECT_NE(std::string(e.what()).find("user_name: elicitation/create"), std::string::npos) << e.what();
        EXPECT_TRUE(e.input_requests.contains("user_name"));
        EXPECT_TRUE(e.request_state.is_string());
    }
    EXPECT_EQ(sent_with_method("tools/call").size(), 1u) << "not retried";
}

TEST_F(McpClientStateless, HandlerErrorsEndTheRequest) {
    auto client = make_client(stateless(elicitation_and_sampling()));
    drive(client->connect());
    RequestOptions options;
    options.on_input_required = [](const Json&) -> Task<Json> {
        throw RpcError(-32000, "the user walked away");
        co_return Json::object();
    };
    try {
        drive(client->call_tool("test_input_required_result_elicitation", Json::object(), options));
        FAIL() << "expected the handler's error";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32000);
    }
    options.on_input_required = [](const Json&) -> Task<Json> { co_return Json::array(); };
    EXPECT_THROW(drive(client->call_tool("test_input_required_result_elicitation", Json::object(), options)),
                 ClientError);
}

TEST_F(McpClientStateless, PerRequestCapabilitiesAreWhatTheServerChecks) {
    auto client = make_client(stateless());  // declares nothing
    drive(client->connect());
    try {
        drive(client->call_tool("test_missing_capability"));
        FAIL() << "expected -32021";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32021);
        EXPECT_NE(e.message.find("sampling"), std::string::npos) << e.message;
    }
    RequestOptions options;
    options.client_capabilities = Json{{"sampling", Json::object()}};
    Json result = drive(client->call_tool("test_missing_capability", Json::object(), options));
    EXPECT_EQ(result["content"][0]["text"], "Success");
    EXPECT_EQ(sent_with_method("tools/call").back()["params"]["_meta"][kCapabilitiesKey],
              (Json{{"sampling", Json::object()}}));

    // The server asks only what the request's capabilities allow.
    options.client_capabilities = Json{{"sampling", Json::object()}};
    int rounds = 0;
    options.on_input_required = [&](const Json& questions) -> Task<Json> {
        ++rounds;
        EXPECT_FALSE(questions.contains("elicit_input")) << questions.dump();
        Json sampled = {{"role", "assistant"}, {"content", {{"type", "text"}, {"text", "x"}}}};
        co_return Json{{"sample_input", sampled}};
    };
    result = drive(client->call_tool("test_input_required_result_capabilities", Json::object(), options));
    EXPECT_EQ(result["content"][0]["text"], "capabilities-ok: received 1 answer(s)");
    EXPECT_EQ(rounds, 1);
}

TEST_F(McpClientStateless, ListChangedArrivesThroughSubscriptionsListen) {
    auto client = make_client(stateless());
    std::vector<std::pair<std::string, Json>> notes;
    client->on_notification([&](const std::string& method, const Json& params) { notes.emplace_back(method, params); });
    drive(client->connect());
    exec.run();
    auto listens = sent_with_method("subscriptions/listen");
    ASSERT_EQ(listens.size(), 1u);
    EXPECT_EQ(listens[0]["params"]["notifications"],
              (Json{{"toolsListChanged", true}, {"promptsListChanged", true}, {"resourcesListChanged", true}}));
    EXPECT_EQ(listens[0]["params"]["_meta"][kVersionKey], "2026-07-28");

    drive(client->call_tool("test_trigger_tool_change"));
    exec.run();
    int list_changed = 0;
    for (const auto& [method, params] : notes) {
        EXPECT_NE(method, "notifications/subscriptions/acknowledged") << "the client's business, not the caller's";
        if (method == "notifications/tools/list_changed") ++list_changed;
    }
    EXPECT_EQ(list_changed, 1);

    // The listen stays open past any request timeout.
    exec.advance(5min);
    EXPECT_TRUE(sent_with_method("notifications/cancelled").empty());
    drive(client->call_tool("test_trigger_tool_change"));
    exec.run();
    list_changed = 0;
    for (const auto& [method, params] : notes) list_changed += method == "notifications/tools/list_changed";
    EXPECT_EQ(list_changed, 2);
}

TEST_F(McpClientStateless, WithoutANotificationHandlerNothingListens) {
    auto client = make_client(stateless());
    drive(client->connect());
    exec.run();
    EXPECT_TRUE(sent_with_method("subscriptions/listen").empty());
}

TEST_F(McpClientStateless, ResourceSubscriptionsReplaceTheListen) {
    auto client = make_client(stateless());
    std::vector<std::string> updated;
    client->on_notification([&](const std::string& method, const Json& params) {
        if (method == "notifications/resources/updated") updated.push_back(params["uri"]);
    });
    drive(client->connect());
    exec.run();
    EXPECT_EQ(drive(client->request("resources/subscribe", {{"uri", "test://watched-resource"}})), Json::object());
    exec.run();
    auto listens = sent_with_method("subscriptions/listen");
    ASSERT_EQ(listens.size(), 2u);
    EXPECT_EQ(listens[1]["params"]["notifications"]["resourceSubscriptions"], Json::array({"test://watched-resource"}));
    // The first listen is cancelled once the second is acknowledged.
    auto cancels = sent_with_method("notifications/cancelled");
    ASSERT_EQ(cancels.size(), 1u);
    EXPECT_EQ(cancels[0]["params"]["requestId"], listens[0]["id"]);

    server->resource_updated("test://watched-resource");
    server->resource_updated("test://static-text");
    exec.run();
    EXPECT_EQ(updated, std::vector<std::string>{"test://watched-resource"});

    drive(client->request("resources/unsubscribe", {{"uri", "test://watched-resource"}}));
    exec.run();
    server->resource_updated("test://watched-resource");
    exec.run();
    EXPECT_EQ(updated.size(), 1u);
    EXPECT_EQ(sent_with_method("subscriptions/listen").size(), 3u);
}

TEST_F(McpClientStateless, RemovedMethodsHaveStandIns) {
    auto client = make_client(stateless());
    std::vector<std::string> logged;
    client->on_notification([&](const std::string& method, const Json& params) {
        if (method == "notifications/message") logged.push_back(params["data"].dump());
    });
    drive(client->connect());
    EXPECT_EQ(drive(client->request("ping")), Json::object());
    EXPECT_TRUE(sent_with_method("ping").empty());
    EXPECT_EQ(sent_with_method("server/discover").size(), 2u);

    drive(client->call_tool("test_logging_tool"));
    exec.run();
    EXPECT_TRUE(logged.empty()) << "no log level asked for";
    EXPECT_EQ(drive(client->request("logging/setLevel", {{"level", "info"}})), Json::object());
    EXPECT_TRUE(sent_with_method("logging/setLevel").empty());
    drive(client->call_tool("test_logging_tool"));
    exec.run();
    EXPECT_EQ(logged.size(), 1u);
    EXPECT_EQ(sent_with_method("tools/call").back()["params"]["_meta"]["io.modelcontextprotocol/logLevel"], "info");

    RequestOptions quiet;
    quiet.log_level = "error";
    drive(client->call_tool("test_logging_tool", Json::object(), quiet));
    exec.run();
    EXPECT_EQ(logged.size(), 1u) << "the request's own level wins";
}

TEST_F(McpClientStateless, TimeoutCancelsTheRequestOnTheServer) {
    bool cancelled = false;
    ToolSpec slow;
    slow.name = "slow";
    slow.description = "waits";
    slow.handler = [&](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        try {
            co_await ctx.sleep(60s);
        } catch (const OperationCancelled&) {
            cancelled = true;
            throw;
        }
        co_return ToolResult::text("late");
    };
    server->registry().add_tool(std::move(slow));
    auto client = make_client(stateless());
    drive(client->connect());
    RequestOptions options;
    options.timeout = 200ms;
    EXPECT_THROW(drive(client->call_tool("slow", Json::object(), options)), RequestTimeout);
    exec.run();
    EXPECT_EQ(sent_with_method("notifications/cancelled").size(), 1u)
        << "in-process, like stdio, carries notifications";
    EXPECT_TRUE(cancelled);
}

// ------------------------------------------------------------------ choosing the revision

Json discover_reply(const Json& request, Json versions = Json::array({"2026-07-28"})) {
    return protocol::make_response(request["id"], {{"supportedVersions", std::move(versions)},
                                                   {"capabilities", {{"tools", Json::object()}}},
                                                   {"serverInfo", {{"name", "modern-only"}, {"version", "2"}}},
                                                   {"instructions", "be brief"}});
}

// A server of the stateless revision only: initialize is a method it does not have.
std::vector<Json> modern_only(const Json& m, std::vector<Json>& seen) {
    seen.push_back(m);
    const std::string method = m.value("method", "");
    if (method == "initialize") return {protocol::make_error(m["id"], -32601, "Method not found: initialize")};
    if (method == "server/discover") return {discover_reply(m)};
    if (method == "tools/list")
        return {protocol::make_response(m["id"], {{"tools", Json::array()}, {"resultType", "complete"}})};
    return {};
}

TEST_F(McpClientStateless, AutoFallsBackToDiscoverWhenInitializeIsRefused) {
    std::vector<Json> seen;
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) { return modern_only(m, seen); });
    McpClient client(exec, std::move(transport));  // protocol_version "" = auto
    Json discovered = drive(client.connect());
    EXPECT_EQ(discovered["serverInfo"]["name"], "modern-only");
    EXPECT_EQ(client.protocol_version(), "2026-07-28");
    EXPECT_TRUE(client.is_stateless());
    EXPECT_EQ(client.server_info()["name"], "modern-only");
    EXPECT_EQ(client.instructions(), "be brief");
    drive(client.list_tools());
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0]["method"], "initialize");
    EXPECT_EQ(seen[1]["method"], "server/discover");
    EXPECT_EQ(seen[2]["params"]["_meta"][kVersionKey], "2026-07-28");
}

TEST_F(McpClientStateless, AutoKeepsTheHandshakeWithAServerThatDoesIt) {
    auto client = make_client(ClientOptions{});
    drive(client->connect());
    EXPECT_EQ(client->protocol_version(), "2025-11-25");
    EXPECT_FALSE(client->is_stateless());
    EXPECT_TRUE(sent_with_method("server/discover").empty());
}

TEST_F(McpClientStateless, AStatefulRevisionIsOfferedAndNeverFallsBack) {
    ClientOptions options;
    options.protocol_version = "2025-06-18";
    auto client = make_client(options);
    drive(client->connect());
    EXPECT_EQ(client->protocol_version(), "2025-06-18");
    EXPECT_EQ(sent_with_method("initialize")[0]["params"]["protocolVersion"], "2025-06-18");

    std::vector<Json> seen;
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) { return modern_only(m, seen); });
    McpClient pinned(exec, std::move(transport), options);
    try {
        drive(pinned.connect());
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32601);
    }
    EXPECT_EQ(seen.size(), 1u) << "no server/discover when a revision with the handshake was asked for";
}

TEST_F(McpClientStateless, AutoDoesNotFallBackOnOtherRefusals) {
    std::vector<Json> seen;
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        seen.push_back(m);
        return {protocol::make_error(m["id"], -32602, "Invalid params: bad clientInfo")};
    });
    auto* raw = transport.get();
    McpClient client(exec, std::move(transport));
    EXPECT_THROW(drive(client.connect()), RpcError);
    EXPECT_EQ(raw->closes, 1);
    EXPECT_EQ(seen.size(), 1u);
}

TEST_F(McpClientStateless, RefusesWhatItCannotSpeak) {
    ClientOptions options;
    options.protocol_version = "1999-01-01";
    auto client = make_client(options);
    try {
        drive(client->connect());
        FAIL() << "expected ClientError";
    } catch (const ClientError& e) {
        EXPECT_NE(std::string(e.what()).find("1999-01-01"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(sent.empty()) << "refused before anything was sent";

    // A modern server that does not list our revision.
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        return {discover_reply(m, Json::array({"2027-01-01"}))};
    });
    McpClient other(exec, std::move(transport), stateless());
    try {
        drive(other.connect());
        FAIL() << "expected ClientError";
    } catch (const ClientError& e) {
        EXPECT_NE(std::string(e.what()).find("2027-01-01"), std::string::npos) << e.what();
    }
}

TEST_F(McpClientStateless, AServerThatKeepsAskingIsGivenUpOn) {
    int tool_calls = 0;
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "server/discover") return {discover_reply(m)};
        if (method != "tools/call") return {};
        ++tool_calls;
        return {protocol::make_response(m["id"], {{"resultType", "input_required"},
                                                  {"inputRequests",
                                                   {{"again", {{"method", "roots/list"}, {"params", Json::object()}}}}},
                                                  {"requestState", "s" + std::to_string(tool_calls)}})};
    });
    McpClient client(exec, std::move(transport), stateless());
    drive(client.connect());
    int answered = 0;
    RequestOptions options;
    options.on_input_required = [&](const Json&) -> Task<Json> {
        ++answered;
        co_return Json{{"again", {{"roots", Json::array()}}}};
    };
    try {
        drive(client.call_tool("loop", Json::object(), options));
        FAIL() << "expected InputRequiredError";
    } catch (const InputRequiredError& e) {
        EXPECT_NE(std::string(e.what()).find("10 rounds"), std::string::npos) << e.what();
        EXPECT_EQ(e.request_state, "s11");
    }
    EXPECT_EQ(answered, kMaxInputRounds);
    EXPECT_EQ(tool_calls, kMaxInputRounds + 1);
}

}  // namespace
