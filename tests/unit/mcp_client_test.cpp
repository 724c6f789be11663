// McpClient against a real McpServer in this process (the in-process transport), with
// the conformance pack and a fake clock; plus a scripted transport for what a well-behaved
// server never does (wrong protocol version, repeated cursors, dying connections).
#include <gtest/gtest.h>

#include "client/mcp_client.hpp"
#include "manual_executor.hpp"
#include "scripted_client_transports.hpp"
#include "providers/source_table.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;

namespace {

using test_support::RecordingTransport;
using test_support::ScriptedTransport;

class McpClientTest : public ::testing::Test {
protected:
    McpClientTest() {
        ServerOptions options;
        options.page_size = 3;  // the conformance pack's 28 tools take 10 pages
        server = std::make_unique<McpServer>(exec, options);
        sources.push_back(providers::start_source("conformance", *server));
    }

    std::unique_ptr<McpClient> make_client(ClientOptions options = {}) {
        auto transport = make_in_process_transport(*server, CallerIdentity{.session_id = "test"});
        return std::make_unique<McpClient>(exec,
                                           std::make_unique<RecordingTransport>(std::move(transport), sent, received),
                                           std::move(options));
    }

    // Runs the loop (and the fake clock, 10 ms at a time) until `task` is done.
    template <typename T>
    T drive(Task<T> task) {
        // Shared with the completion callback: a task that never finishes must not write
        // into a dead stack frame later.
        struct Outcome {
            bool done = false;
            std::optional<T> value;
            std::exception_ptr error;
        };
        auto outcome = std::make_shared<Outcome>();
        spawn(std::move(task), [outcome](std::optional<T> v, std::exception_ptr e) {
            outcome->value = std::move(v);
            outcome->error = e;
            outcome->done = true;
        });
        settle(outcome->done);
        if (outcome->error) std::rethrow_exception(outcome->error);
        return std::move(*outcome->value);
    }
    void drive_void(Task<void> task) {
        auto done = std::make_shared<bool>(false);
        auto error = std::make_shared<std::exception_ptr>();
        spawn(std::move(task), [done, error](std::exception_ptr e) {
            *error = e;
            *done = true;
        });
        settle(*done);
        if (*error) std::rethrow_exception(*error);
    }
    void settle(const bool& done) {
        exec.run();
        for (int i = 0; !done && i < 1000; ++i) exec.advance(10ms);
        if (!done) throw std::runtime_error("the task did not finish within 10 s of fake time");
    }

    std::vector<Json> sent_with_method(const std::string& method) const {
        std::vector<Json> found;
        for (const auto& m : sent) {
            if (m.value("method", "") == method) found.push_back(m);
        }
        return found;
    }

    void add_tool(const std::string& name, ToolHandler handler) {
        ToolSpec tool;
        tool.name = name;
        tool.description = "test tool";
        tool.handler = std::move(handler);
        server->registry().add_tool(std::move(tool));
    }

    test_support::ManualExecutor exec;
    std::unique_ptr<McpServer> server;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::vector<Json> sent, received;
};

TEST_F(McpClientTest, HandshakeOffersLatestRevisionAndRecordsTheServer) {
    auto client = make_client();
    Json init = drive(client->connect());
    EXPECT_TRUE(client->is_open());
    EXPECT_EQ(client->protocol_version(), "2025-11-25");
    EXPECT_EQ(client->server_info()["name"], "toolport");
    EXPECT_TRUE(client->server_capabilities().contains("tools"));
    EXPECT_EQ(init["protocolVersion"], "2025-11-25");
    ASSERT_GE(sent.size(), 2u);
    EXPECT_EQ(sent[0]["method"], "initialize");
    EXPECT_EQ(sent[0]["params"]["protocolVersion"], "2025-11-25");
    EXPECT_EQ(sent[0]["params"]["clientInfo"]["name"], "toolport");
    EXPECT_EQ(sent[1]["method"], "notifications/initialized");
    EXPECT_FALSE(sent[1].contains("id"));
}

TEST_F(McpClientTest, ListToolsFollowsEveryPage) {
    auto client = make_client();
    drive(client->connect());
    auto tools = drive(client->list_tools());
    ASSERT_EQ(tools.size(), server->registry().tools().size());
    std::set<std::string> names;
    for (const auto& t : tools) names.insert(t["name"].get<std::string>());
    EXPECT_EQ(names.size(), tools.size()) << "no tool twice";
    EXPECT_TRUE(names.count("test_simple_text"));
    auto pages = sent_with_method("tools/list");
    EXPECT_EQ(pages.size(), (tools.size() + 2) / 3);
    EXPECT_FALSE(pages[0]["params"].contains("cursor"));
    for (std::size_t i = 1; i < pages.size(); ++i) EXPECT_TRUE(pages[i]["params"]["cursor"].is_string());
}

TEST_F(McpClientTest, CallToolReturnsTheResult) {
    auto client = make_client();
    drive(client->connect());
    Json result = drive(client->call_tool("test_simple_text"));
    EXPECT_EQ(result["content"][0]["text"], "This is a simple text response for testing.");
    EXPECT_FALSE(result.value("isError", false));
    Json failed = drive(client->call_tool("test_error_handling"));
    EXPECT_EQ(failed["isError"], true) << "a tool failure is a result, not an exception";
}

TEST_F(McpClientTest, RpcErrorsBecomeTypedExceptions) {
    auto client = make_client();
    drive(client->connect());
    try {
        drive(client->call_tool("no_such_tool"));
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32602);
        EXPECT_NE(e.message.find("no_such_tool"), std::string::npos) << e.message;
    }
    try {
        drive(client->request("no/such/method"));
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32601);
    }
    // The client keeps working after errors.
    EXPECT_EQ(drive(client->call_tool("test_simple_text"))["content"][0]["type"], "text");
}

TEST_F(McpClientTest, ArgumentsMustBeAnObject) {
    auto client = make_client();
    drive(client->connect());
    EXPECT_THROW(drive(client->call_tool("test_simple_text", Json::array({1}))), ClientError);
}

TEST_F(McpClientTest, NotificationsReachTheCallback) {
    auto client = make_client();
    std::vector<std::pair<std::string, Json>> notes;
    client->on_notification([&](const std::string& method, const Json& params) { notes.emplace_back(method, params); });
    drive(client->connect());
    drive(client->call_tool("test_tool_with_logging"));
    std::vector<std::string> logged;
    for (const auto& [method, params] : notes) {
        if (method == "notifications/message") logged.push_back(params["data"].get<std::string>());
    }
    EXPECT_EQ(logged,
              (std::vector<std::string>{"Tool execution started", "Tool processing data", "Tool execution completed"}));

    notes.clear();
    drive(client->call_tool("test_trigger_tool_change"));
    exec.run();
    bool list_changed = false;
    for (const auto& [method, params] : notes) list_changed |= method == "notifications/tools/list_changed";
    EXPECT_TRUE(list_changed);
}

TEST_F(McpClientTest, ProgressGoesToTheRequestsCallback) {
    auto client = make_client();
    drive(client->connect());
    std::vector<double> progress;
    RequestOptions options;
    options.on_progress = [&](const Json& p) { progress.push_back(p["progress"].get<double>()); };
    Json result = drive(client->call_tool("test_tool_with_progress", Json::object(), options));
    EXPECT_EQ(progress, (std::vector<double>{0, 50, 100}));
    auto calls = sent_with_method("tools/call");
    ASSERT_EQ(calls.size(), 1u);
    const Json token = calls[0]["params"]["_meta"]["progressToken"];
    EXPECT_EQ(result["content"][0]["text"], token.dump()) << "the tool echoes the token it saw";
}

TEST_F(McpClientTest, ServerRequestsAreAnsweredByTheHandler) {
    ClientOptions options;
    options.capabilities = {{"elicitation", Json::object()}};
    auto client = make_client(options);
    std::vector<Json> asked;
    client->on_request([&](const ServerRequest& request) -> Task<Json> {
        EXPECT_EQ(request.method, "elicitation/create");
        asked.push_back(request.params);
        co_return Json{{"action", "accept"}, {"content", {{"response", "forty-two"}}}};
    });
    drive(client->connect());
    Json result = drive(client->call_tool("test_elicitation", {{"message", "What is the answer?"}}));
    ASSERT_EQ(asked.size(), 1u);
    EXPECT_EQ(asked[0]["message"], "What is the answer?");
    EXPECT_EQ(result["content"][0]["text"], "User response: action=accept, content={\"response\":\"forty-two\"}");
}

TEST_F(McpClientTest, WithoutAHandlerServerRequestsGetMethodNotFound) {
    ClientOptions options;
    options.capabilities = {{"elicitation", Json::object()}};  // declared, but nobody answers
    auto client = make_client(options);
    drive(client->connect());
    Json result = drive(client->call_tool("test_elicitation", {{"message", "anyone?"}}));
    EXPECT_NE(result["content"][0]["text"].get<std::string>().find("Method not found"), std::string::npos)
        << result.dump();
    bool answered_with_error = false;
    for (const auto& m : sent) {
        if (m.contains("error") && m["error"]["code"] == -32601) answered_with_error = true;
    }
    EXPECT_TRUE(answered_with_error);
}

TEST_F(McpClientTest, HandlerErrorsAreSentAsRpcErrors) {
    ClientOptions options;
    options.capabilities = {{"elicitation", Json::object()}};
    auto client = make_client(options);
    client->on_request([](const ServerRequest&) -> Task<Json> {
        throw RpcError(-32000, "the user walked away", {{"why", "lunch"}});
        co_return Json::object();
    });
    drive(client->connect());
    drive(client->call_tool("test_elicitation", {{"message", "hello?"}}));
    bool found = false;
    for (const auto& m : sent) {
        if (m.contains("error") && m["error"]["code"] == -32000) {
            found = true;
            EXPECT_EQ(m["error"]["message"], "the user walked away");
            EXPECT_EQ(m["error"]["data"]["why"], "lunch");
        }
    }
    EXPECT_TRUE(found);
}

TEST_F(McpClientTest, TimeoutSendsCancelledAndStopsTheTool) {
    bool tool_cancelled = false;
    add_tool("slow", [&](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        try {
            co_await ctx.sleep(60s);
        } catch (const OperationCancelled&) {
            tool_cancelled = true;
            throw;
        }
        co_return ToolResult::text("too late");
    });
    auto client = make_client();
    drive(client->connect());
    RequestOptions options;
    options.timeout = 200ms;
    try {
        drive(client->call_tool("slow", Json::object(), options));
        FAIL() << "expected RequestTimeout";
    } catch (const RequestTimeout& e) {
        EXPECT_EQ(e.timeout, 200ms);
        EXPECT_NE(std::string(e.what()).find("tools/call"), std::string::npos);
    }
    exec.run();
    auto cancels = sent_with_method("notifications/cancelled");
    ASSERT_EQ(cancels.size(), 1u);
    EXPECT_EQ(cancels[0]["params"]["requestId"], sent_with_method("tools/call")[0]["id"]);
    EXPECT_TRUE(tool_cancelled);
}

TEST_F(McpClientTest, CancelTokenCancelsTheRequest) {
    add_tool("slow", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(60s);
        co_return ToolResult::text("too late");
    });
    auto client = make_client();
    drive(client->connect());
    CancelToken token;
    RequestOptions options;
    options.cancel = &token;
    exec.schedule_after(100ms, [&]() { token.cancel(); });
    EXPECT_THROW(drive(client->call_tool("slow", Json::object(), options)), OperationCancelled);
    EXPECT_EQ(sent_with_method("notifications/cancelled").size(), 1u);
}

TEST_F(McpClientTest, CloseFailsPendingRequestsAndEndsTheSession) {
    add_tool("slow", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(60s);
        co_return ToolResult::text("too late");
    });
    auto client = make_client();
    drive(client->connect());
    EXPECT_EQ(server->session_count(), 1u);
    bool done = false;
    std::exception_ptr error;
    spawn(client->call_tool("slow"), [&](std::optional<Json>, std::exception_ptr e) {
        error = e;
        done = true;
    });
    exec.run();
    drive_void(client->close());
    exec.run();
    ASSERT_TRUE(done);
    EXPECT_THROW(std::rethrow_exception(error), TransportError);
    EXPECT_EQ(server->session_count(), 0u);
    EXPECT_FALSE(client->is_open());
    EXPECT_THROW(drive(client->call_tool("test_simple_text")), TransportError);
    drive_void(client->close());  // twice is fine
}

// ------------------------------------------------------------------ scripted server

Json init_reply(const Json& request, const std::string& version = "2025-06-18") {
    return protocol::make_response(request["id"], {{"protocolVersion", version},
                                                   {"capabilities", {{"tools", Json::object()}}},
                                                   {"serverInfo", {{"name", "scripted"}, {"version", "1"}}}});
}

TEST_F(McpClientTest, AcceptsAnOlderRevisionTheServerNegotiates) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        if (m.value("method", "") == "initialize") return {init_reply(m, "2025-03-26")};
        return {};
    });
    McpClient client(exec, std::move(transport));
    drive(client.connect());
    EXPECT_EQ(client.protocol_version(), "2025-03-26");
    EXPECT_EQ(client.server_info()["name"], "scripted");
}

TEST_F(McpClientTest, RefusesARevisionItDoesNotSpeakAndClosesTheTransport) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        if (m.value("method", "") == "initialize") return {init_reply(m, "1999-01-01")};
        return {};
    });
    auto* raw = transport.get();
    McpClient client(exec, std::move(transport));
    try {
        drive(client.connect());
        FAIL() << "expected ClientError";
    } catch (const ClientError& e) {
        EXPECT_NE(std::string(e.what()).find("1999-01-01"), std::string::npos) << e.what();
    }
    EXPECT_EQ(raw->closes, 1);
    EXPECT_FALSE(client.is_open());
}

TEST_F(McpClientTest, ARepeatedCursorStopsPaging) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "initialize") return {init_reply(m)};
        if (method == "tools/list") {
            return {protocol::make_response(m["id"], {{"tools", {{{"name", "t"}}}}, {"nextCursor", "same"}})};
        }
        return {};
    });
    McpClient client(exec, std::move(transport));
    drive(client.connect());
    try {
        drive(client.list_tools());
        FAIL() << "expected ClientError";
    } catch (const ClientError& e) {
        EXPECT_NE(std::string(e.what()).find("repeated"), std::string::npos) << e.what();
    }
}

TEST_F(McpClientTest, MalformedAndUnknownMessagesAreIgnored) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "initialize") return {init_reply(m)};
        if (method == "ping") {
            return {Json("not an object"), Json::array({1}),
                    // Replies whose id no request of ours can have.
                    Json{{"jsonrpc", "2.0"}, {"id", true}, {"result", Json::object()}},
                    Json{{"jsonrpc", "2.0"}, {"id", nullptr}, {"result", Json::object()}},
                    Json{{"jsonrpc", "2.0"}, {"id", Json::object()}, {"error", {{"code", 1}, {"message", "m"}}}},
                    Json{{"jsonrpc", "2.0"}, {"result", Json::object()}},
                    Json{{"jsonrpc", "1.0"}, {"id", 9999}, {"result", Json::object()}},
                    protocol::make_response(9999, Json::object()), protocol::make_response("str", Json::object()),
                    protocol::make_response(-1, Json::object()),
                    protocol::make_response(protocol::make_big_integer_id("123456789012345678901234567890"),
                                            Json::object()),
                    protocol::make_error(nullptr, -32600, "about something unreadable"),
                    // A malformed *request* that happens to reuse our id is not our reply.
                    Json{{"jsonrpc", "2.0"}, {"id", m["id"]}, {"method", 5}},
                    protocol::make_response(m["id"], {{"pong", true}})};
        }
        return {};
    });
    McpClient client(exec, std::move(transport));
    drive(client.connect());
    EXPECT_EQ(drive(client.request("ping")), (Json{{"pong", true}}));
    EXPECT_TRUE(client.is_open());
}

TEST_F(McpClientTest, AMalformedReplyToOurRequestFailsItAndTheClientKeepsWorking) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "initialize") return {init_reply(m)};
        if (method == "tools/list") {
            // The answer, but not JSON-RPC 2.0; a proper one after it comes too late.
            return {Json{{"jsonrpc", "1.0"}, {"id", m["id"]}, {"result", Json::object()}},
                    protocol::make_response(m["id"], {{"tools", Json::array()}})};
        }
        if (method == "prompts/list") {
            // An error whose members have the wrong types is no JSON-RPC error either.
            return {Json{{"jsonrpc", "2.0"}, {"id", m["id"]}, {"error", {{"code", "x"}, {"message", 1}}}}};
        }
        if (method == "resources/list") {
            return {Json{{"jsonrpc", "2.0"}, {"id", m["id"]}, {"result", Json::object()}, {"error", Json::object()}}};
        }
        if (method == "ping") return {protocol::make_response(m["id"], Json::object())};
        return {};
    });
    McpClient client(exec, std::move(transport));
    drive(client.connect());
    struct Case {
        const char* method;
        const char* problem;
    };
    for (auto c :
         {Case{"tools/list", "\"jsonrpc\""}, Case{"prompts/list", "\"code\""}, Case{"resources/list", "not both"}}) {
        try {
            drive(client.request(c.method));
            FAIL() << c.method << ": expected a ClientError";
        } catch (const RpcError& e) {
            FAIL() << c.method << ": a malformed reply is not a JSON-RPC error: " << e.what();
        } catch (const ClientError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("malformed reply"), std::string::npos) << what;
            EXPECT_NE(what.find(c.method), std::string::npos) << what;
            EXPECT_NE(what.find(c.problem), std::string::npos) << what;
        }
        exec.run();  // the late proper reply, if any, is dropped quietly
    }
    EXPECT_TRUE(client.is_open());
    EXPECT_EQ(drive(client.request("ping")), Json::object());
}

TEST_F(McpClientTest, ServerPingIsAnsweredWithoutAHandler) {
    std::vector<Json> replies;
    ScriptedTransport* raw = nullptr;
    auto transport = std::make_unique<ScriptedTransport>(exec, [&](const Json& m) -> std::vector<Json> {
        const std::string method = m.value("method", "");
        if (method == "initialize") return {init_reply(m)};
        if (!m.contains("method")) replies.push_back(m);
        if (method == "notifications/initialized") return {protocol::make_request("srv-1", "ping", nullptr)};
        return {};
    });
    raw = transport.get();
    McpClient client(exec, std::move(transport));
    drive(client.connect());
    exec.run();
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_EQ(replies[0], protocol::make_response("srv-1", Json::object()));
    (void)raw;
}

TEST_F(McpClientTest, ADyingConnectionFailsPendingRequestsAndTellsTheOwner) {
    auto transport = std::make_unique<ScriptedTransport>(exec, [](const Json& m) -> std::vector<Json> {
        if (m.value("method", "") == "initialize") return {init_reply(m)};
        return {};  // never answers anything else
    });
    auto* raw = transport.get();
    McpClient client(exec, std::move(transport));
    std::string disconnect_reason;
    client.on_disconnect([&](const std::string& reason) { disconnect_reason = reason; });
    drive(client.connect());
    bool done = false;
    std::exception_ptr error;
    spawn(client.request("tools/list"), [&](std::optional<Json>, std::exception_ptr e) {
        error = e;
        done = true;
    });
    exec.run();
    EXPECT_FALSE(done);
    raw->die("the server process exited with status 3");
    exec.run();
    ASSERT_TRUE(done);
    try {
        std::rethrow_exception(error);
    } catch (const TransportError& e) {
        EXPECT_STREQ(e.what(), "the server process exited with status 3");
    }
    EXPECT_EQ(disconnect_reason, "the server process exited with status 3");
    EXPECT_FALSE(client.is_open());
    EXPECT_THROW(drive(client.request("ping")), TransportError);
}

TEST_F(McpClientTest, RequestsBeforeConnectAreRefused) {
    auto client = make_client();
    EXPECT_THROW(drive(client->request("ping")), ClientError);
}

}  // namespace
