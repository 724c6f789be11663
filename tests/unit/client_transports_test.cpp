// The client's real transports with real parts: Streamable HTTP against Toolport's own
// HttpServer on a loopback port chosen by the kernel (served from a second thread), and
// stdio against real child processes. The children are this very test binary, started
// again with a --toolport-test-child=ROLE argument (client_test_servers.cpp), so the
// tests need nothing installed.
#include <signal.h>
#include <unistd.h>

#include <atomic>

#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "async/executor.hpp"
#include "client/sync_client.hpp"
#include "client_test_servers.hpp"
#include "http_test_servers.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;

namespace {

// ------------------------------------------------------------------ helpers

// The HTTP tests run twice: the server on one event loop, and with I/O threads (requests
// handed between threads, event streams moved onto the engine's loop).
int server_io_threads = 0;

class HttpClientTransport : public ::testing::TestWithParam<int> {
protected:
    void SetUp() override { server_io_threads = GetParam(); }
    void TearDown() override { server_io_threads = 0; }
};

// The conformance pack plus a tool that waits a minute unless cancelled.
struct TestServer {
    explicit TestServer(HttpOptions options = {})
        : http(with_fast_polling(options), [this](McpServer& server) {
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
    static HttpOptions with_fast_polling(HttpOptions options) {
        options.io_threads = server_io_threads;
        options.sse_retry = 20ms;  // test_reconnection resumes after this
        return options;
    }
    std::string url() const { return http.url(); }
    std::size_t session_count() { return http.session_count(); }

    std::atomic<bool> slow_cancelled{false};
    test_support::HttpServerThread http;
};

std::unique_ptr<ClientTransport> http_to(SyncClient& client, const std::string& url, bool listen = false,
                                         std::string token = {}) {
    HttpClientOptions options;
    options.url = url;
    options.listen = listen;
    options.bearer_token = std::move(token);
    return make_http_transport(client.executor(), std::move(options));
}

// Waits on the client's loop until `condition` holds (a deadline only for failures).
Task<void> poll_until(Executor& executor, std::function<bool()> condition) {
    for (int i = 0; !condition(); ++i) {
        if (i > 1000) throw std::runtime_error("condition not met within 10 s");
        co_await executor.sleep(10ms);
    }
}

std::unique_ptr<ClientTransport> child(SyncClient& client, const std::string& role,
                                       std::chrono::milliseconds grace = 2s) {
    StdioClientOptions options;
    options.argv = {test_support::test_binary_path(), "--toolport-test-child=" + role};
    options.shutdown_grace = grace;
    return make_stdio_transport(client.executor(), std::move(options));
}

Json elicitation_capability() { return {{"elicitation", Json::object()}}; }

Task<Json> answer_forty_two(const ServerRequest& request) {
    if (request.method != "elicitation/create") throw RpcError(-32601, "unexpected " + request.method);
    co_return Json{{"action", "accept"}, {"content", {{"response", "forty-two"}}}};
}

const std::string kElicitedText = "User response: action=accept, content={\"response\":\"forty-two\"}";

// ------------------------------------------------------------------ Streamable HTTP

TEST_P(HttpClientTransport, ListsEveryPageAndCallsTools) {
    TestServer server;
    SyncClient client;
    Json init = client.connect(http_to(client, server.url()));
    EXPECT_EQ(init["protocolVersion"], "2025-11-25");
    auto tools = client.list_tools();
    EXPECT_EQ(tools.size(), 37u) << "36 conformance tools and the slow one, in pages of 5";
    Json result = client.call_tool("test_simple_text", Json::object());
    EXPECT_EQ(result["content"][0]["text"], "This is a simple text response for testing.");
    Json image = client.call_tool("test_image_content", Json::object());
    EXPECT_EQ(image["content"][0]["type"], "image");
    client.close();
}

TEST_P(HttpClientTransport, RpcErrorsArriveTyped) {
    TestServer server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    try {
        client.call_tool("no_such_tool", Json::object());
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32602);
    }
}

TEST_P(HttpClientTransport, ResumesAResponseStreamTheServerEnds) {
    TestServer server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    // The server closes the call's SSE stream at once and answers 100 ms later: only a
    // client that reconnects with Last-Event-ID gets the result.
    Json result = client.call_tool("test_reconnection", Json::object());
    EXPECT_NE(result["content"][0]["text"].get<std::string>().find("completed successfully"), std::string::npos);
}

TEST_P(HttpClientTransport, ServerRequestsAndNotificationsOnTheResponseStream) {
    TestServer server;
    ClientOptions options;
    options.capabilities = elicitation_capability();
    SyncClient client(options);
    std::vector<std::string> logged;
    client.connect(http_to(client, server.url()));
    client.client().on_request(answer_forty_two);
    client.client().on_notification([&](const std::string& method, const Json& params) {
        if (method == "notifications/message") logged.push_back(params["data"].get<std::string>());
    });
    Json result = client.call_tool("test_elicitation", {{"message", "What is the answer?"}});
    EXPECT_EQ(result["content"][0]["text"], kElicitedText);
    client.call_tool("test_tool_with_logging", Json::object());
    EXPECT_EQ(logged.size(), 3u);
}

TEST_P(HttpClientTransport, ListChangedArrivesOnTheStandaloneStream) {
    TestServer server;
    SyncClient client;
    bool list_changed = false;
    client.connect(http_to(client, server.url(), /*listen=*/true));
    client.client().on_notification([&](const std::string& method, const Json&) {
        if (method == "notifications/tools/list_changed") list_changed = true;
    });
    client.call_tool("test_trigger_tool_change", Json::object());
    client.run(poll_until(client.event_loop(), [&]() { return list_changed; }));
    EXPECT_TRUE(list_changed);
    client.close();
}

TEST_P(HttpClientTransport, TimeoutCancelsTheCallOnTheServer) {
    TestServer server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    RequestOptions options;
    options.timeout = 200ms;
    EXPECT_THROW(client.call_tool("slow", Json::object(), options), RequestTimeout);
    client.run(poll_until(client.event_loop(), [&]() { return server.slow_cancelled.load(); }));
    EXPECT_TRUE(server.slow_cancelled);
    // The connection is still usable.
    EXPECT_EQ(client.call_tool("test_simple_text", Json::object())["content"][0]["type"], "text");
}

TEST_P(HttpClientTransport, AResponseOverTheLimitIsRefusedOnItsContentLength) {
    TestServer server;
    SyncClient client;
    HttpClientOptions options;
    options.url = server.url();
    options.listen = false;
    options.max_message_bytes = 350;  // initialize (~300 bytes) fits; the ~390-byte tool result does not
    client.connect(make_http_transport(client.executor(), std::move(options)));
    EXPECT_EQ(client.call_tool("test_simple_text", Json::object())["content"][0]["type"], "text");
    try {
        client.call_tool("test_multiple_content_types", Json::object());
        FAIL() << "expected ResponseTooLarge";
    } catch (const ResponseTooLarge& e) {
        EXPECT_EQ(e.limit, 350u);
        EXPECT_GT(e.size, 350u);
        EXPECT_FALSE(e.read_so_far) << "refused on Content-Length, before reading";
    }
}

TEST_P(HttpClientTransport, CloseDeletesTheSession) {
    TestServer server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    EXPECT_EQ(server.session_count(), 1u);
    client.close();
    EXPECT_EQ(server.session_count(), 0u);
}

TEST_P(HttpClientTransport, BearerTokens) {
    HttpOptions options;
    options.bearer_tokens = {"s3cret-token"};
    TestServer server(options);
    {
        SyncClient client;
        try {
            client.connect(http_to(client, server.url(), false, "wrong-token"));
            FAIL() << "expected TransportError";
        } catch (const TransportError& e) {
            std::string what = e.what();
            EXPECT_NE(what.find("HTTP 401"), std::string::npos) << what;
            EXPECT_EQ(what.find("wrong-token"), std::string::npos) << "tokens never appear in messages";
        }
    }
    SyncClient client;
    client.connect(http_to(client, server.url(), false, "s3cret-token"));
    EXPECT_EQ(client.list_tools().size(), 37u);
}

TEST_P(HttpClientTransport, AnExpiredSessionEndsTheClient) {
    HttpOptions options;
    options.session_idle_timeout = 1s;
    TestServer server(options);
    SyncClient client;
    std::string reason;
    client.connect(http_to(client, server.url()));
    client.client().on_disconnect([&](const std::string& r) { reason = r; });
    client.run(poll_until(client.event_loop(), [&]() { return server.session_count() == 0; }));
    try {
        client.list_tools();
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("HTTP 404"), std::string::npos) << e.what();
    }
    EXPECT_NE(reason.find("ended the session"), std::string::npos) << reason;
    EXPECT_FALSE(client.client().is_open());
}

TEST_P(HttpClientTransport, NobodyListening) {
    int port;
    {
        test_support::HttpServerThread server;  // take a free port, then free it again
        port = server.port();
    }
    SyncClient client;
    try {
        client.connect(http_to(client, "http://127.0.0.1:" + std::to_string(port) + "/mcp"));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot connect to http://127.0.0.1:"), std::string::npos) << e.what();
    }
}

// https: the same server behind a TLS terminator with a private CA. Everything the
// transport does (sessions, SSE replies, resumption, DELETE) goes through TLS; a client
// that does not trust the CA is refused at the handshake.
TEST_P(HttpClientTransport, SpeaksHttpsWithAPrivateCa) {
    TestServer server;
    test_support::TestCa ca;
    const auto port = static_cast<unsigned short>(std::stoi(server.url().substr(server.url().rfind(':') + 1)));
    test_support::TlsRelay relay(port, ca.leaf({"localhost"}));
    const std::string url = "https://localhost:" + std::to_string(relay.port()) + "/mcp";

    SyncClient untrusting;
    try {
        untrusting.connect(http_to(untrusting, url));
        FAIL() << "expected the handshake to fail";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos) << e.what();
    }

    SyncClient client;
    HttpClientOptions options;
    options.url = url;
    options.ca_file = ca.write_cert_file("mcp-client-ca.pem");
    client.connect(make_http_transport(client.executor(), options));
    EXPECT_EQ(client.list_tools().size(), 37u);
    // The server ends this call's event stream at once: the reply needs a resumption.
    EXPECT_NE(client.call_tool("test_reconnection", Json::object())["content"][0]["text"].get<std::string>().find(
                  "completed successfully"),
              std::string::npos);
    client.close();
    EXPECT_EQ(server.session_count(), 0u) << "DELETE went through the tunnel too";
    EXPECT_GE(relay.connections(), 1);
}

TEST_P(HttpClientTransport, BadUrlsAndHeadersAreRefusedUpFront) {
    SyncClient client;
    HttpClientOptions options;
    options.url = "ftp://example.com/mcp";
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
    options.url = "http://user:secret@example.com/mcp";
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
    options.url = "http://127.0.0.1/mcp";
    options.ca_file = "/nonexistent/ca.pem";
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument) << "a CA file is for https";
    options.url = "https://127.0.0.1/mcp";
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument) << "an unreadable CA file";
    options.ca_file.clear();
    options.url = "http://127.0.0.1/mcp";
    options.headers = {{"Bad Name", "x"}};
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
    options.headers = {{"X-Key", "a\r\nInjected: yes"}};
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
    options.headers = {{"Mcp-Session-Id", "mine"}};
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
    options.headers = {{"X-Api-Key", "fine"}};
    EXPECT_NO_THROW(make_http_transport(client.executor(), options));
}

// ------------------------------------------------------------------ stdio

INSTANTIATE_TEST_SUITE_P(ServerLoops, HttpClientTransport, ::testing::Values(0, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                             return info.param == 0 ? std::string("OneEventLoop")
                                                    : "IoThreads" + std::to_string(info.param);
                         });

TEST(StdioClientTransport, TalksToAChildProcess) {
    ClientOptions options;
    options.capabilities = elicitation_capability();
    SyncClient client(options);
    client.connect(child(client, "serve"));
    client.client().on_request(answer_forty_two);
    EXPECT_EQ(client.client().server_info()["name"], "toolport");
    EXPECT_EQ(client.list_tools().size(), 36u);
    EXPECT_EQ(client.call_tool("test_simple_text", Json::object())["content"][0]["text"],
              "This is a simple text response for testing.");
    Json result = client.call_tool("test_elicitation", {{"message", "over stdio?"}});
    EXPECT_EQ(result["content"][0]["text"], kElicitedText);
    client.close();
}

TEST(StdioClientTransport, SkipsLinesThatAreNotJson) {
    SyncClient client;
    client.connect(child(client, "banner"));
    EXPECT_EQ(client.list_tools().size(), 36u);
}

TEST(StdioClientTransport, AReplyLargerThanOneReadArrivesWhole) {
    SyncClient client;
    client.connect(child(client, "big_reply"));
    for (int i = 0; i < 2; ++i) {
        Json result = client.call_tool("big", Json::object());
        EXPECT_EQ(result["content"][0]["text"], std::string(300000, 'b'));
    }
}

TEST(StdioClientTransport, AChildThatExitsAtOnceFailsTheHandshake) {
    SyncClient client;
    try {
        client.connect(child(client, "exit3"));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("exited with status 3"), std::string::npos) << e.what();
    }
}

TEST(StdioClientTransport, AChildDyingMidCallFailsTheCallAndTellsTheOwner) {
    SyncClient client;
    std::string reason;
    client.connect(child(client, "die_on_call"));
    client.client().on_disconnect([&](const std::string& r) { reason = r; });
    try {
        client.call_tool("anything", Json::object());
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("exited with status 7"), std::string::npos) << e.what();
    }
    EXPECT_NE(reason.find("exited with status 7"), std::string::npos);
    EXPECT_THROW(client.list_tools(), TransportError);
}

TEST(StdioClientTransport, AStubbornChildIsKilledAndReaped) {
    SyncClient client;
    client.connect(child(client, "stubborn", 100ms));
    const pid_t pid = std::stoi(client.client().server_info()["version"].get<std::string>());
    ASSERT_EQ(::kill(pid, 0), 0) << "the child runs";
    client.close();  // stdin closed (ignored), SIGTERM (ignored), SIGKILL
    EXPECT_EQ(::kill(pid, 0), -1) << "killed and reaped: not even a zombie is left";
    EXPECT_EQ(errno, ESRCH);
}

TEST(StdioClientTransport, AMissingProgramIsAClearError) {
    SyncClient client;
    StdioClientOptions options;
    options.argv = {"toolport-test-no-such-program"};
    try {
        client.connect(make_stdio_transport(client.executor(), options));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_EQ(std::string(e.what()), "cannot start \"toolport-test-no-such-program\": No such file or directory");
    }
}

}  // namespace
