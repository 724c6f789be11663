// McpClient in the stateless revision (2026-07-28) over real wires: Streamable HTTP
// against Toolport's own HttpServer on a loopback port (which checks MCP-Protocol-Version,
// Mcp-Method, Mcp-Name and Mcp-Param-* against the body, and answers each POST without a
// session), stdio against this test binary re-run as a conformance server, and a scripted
// HTTP server of the stateless revision only, which answers initialize with 404 / -32601.
#include <algorithm>
#include <atomic>
#include <map>

#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "async/executor.hpp"
#include "client/stateless_http_headers.hpp"
#include "client/sync_client.hpp"
#include "client_test_servers.hpp"
#include "http_test_servers.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;

namespace {

ClientOptions stateless(Json capabilities = Json::object()) {
    ClientOptions options;
    options.protocol_version = "2026-07-28";
    options.capabilities = std::move(capabilities);
    return options;
}

// The conformance pack plus a tool that waits a minute unless cancelled.
struct TestServer {
    TestServer()
        : http({}, [this](McpServer& server) {
              ToolSpec slow;
              slow.name = "slow";
              slow.description = "Waits a minute unless cancelled";
              slow.handler = [this](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                  try {
                      co_await ctx.sleep(60s);
                  } catch (const OperationCancelled&) {
                      slow_cancelled = true;
                      throw;
                  }
                  co_return ToolResult::text("done");
              };
              server.registry().add_tool(std::move(slow));
          }) {}
    std::atomic<bool> slow_cancelled{false};
    test_support::HttpServerThread http;
};

std::unique_ptr<ClientTransport> http_to(SyncClient& loop, const std::string& url) {
    HttpClientOptions options;
    options.url = url;
    return make_http_transport(loop.executor(), std::move(options));
}

std::unique_ptr<ClientTransport> conformance_child(SyncClient& loop) {
    StdioClientOptions options;
    options.argv = {test_support::test_binary_path(), "--toolport-test-child=serve"};
    return make_stdio_transport(loop.executor(), std::move(options));
}

// Waits on the client's loop until `condition` holds (a deadline only for failures).
Task<void> poll_until(Executor& executor, std::function<bool()> condition) {
    for (int i = 0; !condition(); ++i) {
        if (i > 1000) throw std::runtime_error("condition not met within 10 s");
        co_await executor.sleep(10ms);
    }
}

Json accept(const std::string& field, const std::string& value) {
    return {{"action", "accept"}, {"content", {{field, value}}}};
}

// ------------------------------------------------------------------ Streamable HTTP

// The tasks extension routes tasks/get, tasks/update and tasks/cancel by task: Mcp-Name
// mirrors their taskId (a server of the revision refuses them without it, -32020).
TEST(StatelessHttpHeaders, TasksMethodsNameTheirTask) {
    StatelessHttpHeaders headers;
    for (const char* method : {"tasks/get", "tasks/update", "tasks/cancel"}) {
        auto list = headers.for_request(
            Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", method}, {"params", {{"taskId", "3f2a9c"}}}});
        std::map<std::string, std::string> by_name(list.begin(), list.end());
        EXPECT_EQ(by_name["Mcp-Method"], method);
        EXPECT_EQ(by_name["Mcp-Name"], "3f2a9c") << method;
    }
    auto listed = headers.for_request(
        Json{{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/list"}, {"params", Json::object()}});
    for (const auto& [name, value] : listed) EXPECT_NE(name, "Mcp-Name");
}

TEST(McpClientStatelessHttp, DiscoversListsAndCallsWithoutASession) {
    TestServer server;
    SyncClient client(stateless());
    Json discovered = client.connect(http_to(client, server.http.url()));
    EXPECT_EQ(client.client().protocol_version(), "2026-07-28");
    EXPECT_EQ(client.client().server_info()["name"], "toolport");
    EXPECT_TRUE(discovered["supportedVersions"].is_array());
    auto tools = client.list_tools();
    EXPECT_EQ(tools.size(), 37u) << "36 conformance tools and the slow one, in pages of 5";
    Json result = client.call_tool("test_simple_text", Json::object());
    EXPECT_EQ(result["content"][0]["text"], "This is a simple text response for testing.");
    EXPECT_EQ(result["resultType"], "complete");
    EXPECT_EQ(server.http.session_count(), 0u) << "the stateless revision keeps no session";
    client.close();
}

TEST(McpClientStatelessHttp, MirrorsMarkedArgumentsInHeadersOnceTheToolIsListed) {
    TestServer server;
    SyncClient client(stateless());
    client.connect(http_to(client, server.http.url()));
    // Before tools/list the client cannot know the argument is mirrored; the server says so.
    try {
        client.call_tool("test_custom_header", {{"region", "eu-west"}});
        FAIL() << "expected -32020";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32020);
        EXPECT_NE(e.message.find("Mcp-Param-Region"), std::string::npos) << e.message;
    }
    client.list_tools();
    EXPECT_EQ(client.call_tool("test_custom_header", {{"region", "eu-west"}})["content"][0]["text"], "Region: eu-west");
    // Not plain ASCII, and white space at the ends: both travel base64-encoded.
    EXPECT_EQ(client.call_tool("test_custom_header", {{"region", "Zürich"}})["content"][0]["text"], "Region: Zürich");
    EXPECT_EQ(client.call_tool("test_custom_header", {{"region", " padded "}})["content"][0]["text"],
              "Region:  padded ");
}

TEST(McpClientStatelessHttp, AnswersInputRequiredAcrossRounds) {
    TestServer server;
    SyncClient client(stateless({{"elicitation", Json::object()}}));
    client.connect(http_to(client, server.http.url()));
    int rounds = 0;
    RequestOptions options;
    options.on_input_required = [&](const Json& questions) -> Task<Json> {
        ++rounds;
        if (questions.contains("step1")) co_return Json{{"step1", accept("name", "Ada")}};
        co_return Json{{"step2", accept("color", "teal")}};
    };
    Json result = client.call_tool("test_input_required_result_multi_round", Json::object(), options);
    EXPECT_EQ(result["content"][0]["text"], "Multi-round complete for Ada who likes teal");
    EXPECT_EQ(rounds, 2);
}

TEST(McpClientStatelessHttp, PerRequestCapabilities) {
    TestServer server;
    SyncClient client(stateless());
    client.connect(http_to(client, server.http.url()));
    try {
        client.call_tool("test_missing_capability", Json::object());
        FAIL() << "expected -32021 (HTTP 400)";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32021);
    }
    RequestOptions options;
    options.client_capabilities = Json{{"sampling", Json::object()}};
    EXPECT_EQ(client.call_tool("test_missing_capability", Json::object(), options)["content"][0]["text"], "Success");
}

TEST(McpClientStatelessHttp, ListChangedArrivesOnTheListenStream) {
    TestServer server;
    SyncClient loop;
    McpClient client(loop.executor(), http_to(loop, server.http.url()), stateless());
    std::vector<std::string> notes;
    client.on_notification([&](const std::string& method, const Json&) { notes.push_back(method); });
    loop.run(client.connect());
    auto listed = [&] { return std::count(notes.begin(), notes.end(), "notifications/tools/list_changed"); };
    // The listen POST may reach the server after the call: call until a change is heard.
    loop.run([](McpClient& client, Executor& executor, std::function<long()> listed) -> Task<void> {
        for (int i = 0; listed() == 0 && i < 100; ++i) {
            co_await client.call_tool("test_trigger_tool_change");
            co_await executor.sleep(50ms);
        }
    }(client, loop.executor(), listed));
    EXPECT_GE(listed(), 1);
    EXPECT_EQ(std::count(notes.begin(), notes.end(), "notifications/subscriptions/acknowledged"), 0);
    loop.run(client.close());
}

TEST(McpClientStatelessHttp, ATimeoutClosesTheStreamWhichCancelsTheCall) {
    TestServer server;
    SyncClient client(stateless());
    client.connect(http_to(client, server.http.url()));
    RequestOptions options;
    options.timeout = 300ms;
    EXPECT_THROW(client.call_tool("slow", Json::object(), options), RequestTimeout);
    client.run(poll_until(client.executor(), [&] { return server.slow_cancelled.load(); }));
    EXPECT_TRUE(server.slow_cancelled);
    // No notification went anywhere (it could not: there is no session), and the client works on.
    EXPECT_EQ(client.call_tool("test_simple_text", Json::object())["content"][0]["type"], "text");
    EXPECT_THROW(client.run(client.client().notify("notifications/roots/list_changed")), ClientError);
}

// A server of the stateless revision only, as Toolport's own endpoint answers a request
// it has no method for: HTTP 404 with the JSON-RPC error.
test_support::ScriptedReply modern_only(const test_support::SeenRequest& request) {
    const Json body = Json::parse(request.body);
    const std::string method = body.value("method", "");
    test_support::ScriptedReply reply;
    reply.headers = {{"Content-Type", "application/json"}};
    if (method == "initialize") {
        reply.status = 404;
        reply.body = protocol::make_error(body["id"], -32601, "Method not found: initialize").dump();
    } else if (method == "server/discover") {
        reply.body = protocol::make_response(body["id"], {{"supportedVersions", {"2026-07-28"}},
                                                          {"capabilities", {{"tools", Json::object()}}},
                                                          {"serverInfo", {{"name", "modern-only"}, {"version", "1"}}}})
                         .dump();
    } else {
        reply.body = protocol::make_response(body["id"], {{"tools", Json::array()}, {"resultType", "complete"}}).dump();
    }
    return reply;
}

TEST(McpClientStatelessHttp, AutoFallsBackWhenInitializeIsAnswered404) {
    test_support::ScriptedServer server(modern_only);
    SyncClient client;  // protocol_version "" = auto
    client.connect(http_to(client, server.url("/mcp")));
    EXPECT_EQ(client.client().protocol_version(), "2026-07-28");
    EXPECT_EQ(client.client().server_info()["name"], "modern-only");
    client.request("tools/list");
    client.close();
    auto seen = server.requests();
    ASSERT_EQ(seen.size(), 3u) << "no GET stream, no DELETE";
    EXPECT_EQ(Json::parse(seen[0].body)["method"], "initialize");
    EXPECT_EQ(seen[0].header("MCP-Protocol-Version"), "");
    for (std::size_t i = 1; i < seen.size(); ++i) {
        const Json body = Json::parse(seen[i].body);
        EXPECT_EQ(seen[i].method, "POST");
        EXPECT_EQ(seen[i].header("MCP-Protocol-Version"), "2026-07-28");
        EXPECT_EQ(seen[i].header("Mcp-Method"), body["method"]);
        EXPECT_EQ(seen[i].header("Mcp-Session-Id"), "");
        EXPECT_EQ(body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"], "2026-07-28");
    }
}

// ------------------------------------------------------------------ stdio

TEST(McpClientStatelessStdio, SpeaksStatelesslyToAChildProcess) {
    SyncClient loop;
    McpClient client(loop.executor(), conformance_child(loop), stateless({{"elicitation", Json::object()}}));
    std::vector<std::string> notes;
    client.on_notification([&](const std::string& method, const Json&) { notes.push_back(method); });
    loop.run(client.connect());
    EXPECT_EQ(client.protocol_version(), "2026-07-28");
    EXPECT_EQ(client.server_info()["name"], "toolport");

    RequestOptions options;
    options.on_input_required = [](const Json& questions) -> Task<Json> {
        EXPECT_TRUE(questions.contains("user_name")) << questions.dump();
        co_return Json{{"user_name", accept("name", "Ada")}};
    };
    Json greeting = loop.run(client.call_tool("test_input_required_result_elicitation", Json::object(), options));
    EXPECT_EQ(greeting["content"][0]["text"], "Hello, Ada!");

    // The listen was sent before this call on the same pipe, so it is open by now.
    loop.run(client.call_tool("test_trigger_tool_change"));
    loop.run(poll_until(loop.executor(),
                        [&] { return std::count(notes.begin(), notes.end(), "notifications/tools/list_changed") > 0; }));
    // The server waits for its requests before it exits: the open listen is cancelled
    // first, or closing would take the 2 s grace and a signal.
    const auto closing = std::chrono::steady_clock::now();
    loop.run(client.close());
    EXPECT_LT(std::chrono::steady_clock::now() - closing, 1s);
}

}  // namespace
