// The client's real transports with real parts: Streamable HTTP against Toolport's own
// HttpServer on a loopback port chosen by the kernel (served from a second thread), and
// stdio against real child processes. The children are this very test binary, started
// again with a --toolport-test-child=ROLE argument (see the bottom of this file), so the
// tests need nothing installed.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <future>
#include <iostream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "client/sync_client.hpp"
#include "packs/packs.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"
#include "transports/asio_executor.hpp"
#include "transports/http_server.hpp"
#include "transports/stdio_transport.hpp"

using namespace toolport;
using namespace toolport::client;
using namespace std::chrono_literals;

namespace {

// ------------------------------------------------------------------ helpers

// An McpServer with the conformance pack (and a slow tool) behind a real HttpServer on
// 127.0.0.1:<ephemeral>, running on its own thread.
class HttpServerThread {
public:
    explicit HttpServerThread(HttpOptions options = {}) {
        ServerOptions server_options;
        server_options.page_size = 5;
        server_ = std::make_unique<McpServer>(executor_, server_options);
        packs::install_conformance(*server_);
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
        server_->registry().add_tool(std::move(slow));
        options.host = "127.0.0.1";
        options.port = 0;
        options.sse_retry = 20ms;
        http_ = std::make_unique<HttpServer>(*server_, options);
        http_->start();
        thread_ = std::thread([this]() { io_.run(); });
    }
    ~HttpServerThread() {
        boost::asio::post(io_, [this]() {
            http_->stop();
            io_.stop();
        });
        thread_.join();
        http_.reset();
        server_.reset();
    }

    std::string url() const { return "http://127.0.0.1:" + std::to_string(http_->port()) + "/mcp"; }

    std::size_t session_count() {
        std::promise<std::size_t> count;
        boost::asio::post(io_, [&]() { count.set_value(http_->session_count()); });
        return count.get_future().get();
    }

    std::atomic<bool> slow_cancelled{false};

private:
    boost::asio::io_context io_{1};
    AsioExecutor executor_{io_};
    std::unique_ptr<McpServer> server_;
    std::unique_ptr<HttpServer> http_;
    std::thread thread_;
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

std::string self_exe() {
    char path[4096];
    ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) throw std::runtime_error("cannot find this test binary");
    return std::string(path, static_cast<std::size_t>(n));
}

std::unique_ptr<ClientTransport> child(SyncClient& client, const std::string& role,
                                       std::chrono::milliseconds grace = 2s) {
    StdioClientOptions options;
    options.argv = {self_exe(), "--toolport-test-child=" + role};
    options.shutdown_grace = grace;
    return make_stdio_transport(client.executor(), std::move(options));
}

Json elicitation_capability() { return {{"elicitation", Json::object()}}; }

Task<Json> answer_forty_two(const ServerRequest& request) {
    if (request.method != "elicitation/create") throw JsonRpcError(-32601, "unexpected " + request.method);
    co_return Json{{"action", "accept"}, {"content", {{"response", "forty-two"}}}};
}

const std::string kElicitedText = "User response: action=accept, content={\"response\":\"forty-two\"}";

// ------------------------------------------------------------------ Streamable HTTP

TEST(HttpClientTransport, ListsEveryPageAndCallsTools) {
    HttpServerThread server;
    SyncClient client;
    Json init = client.connect(http_to(client, server.url()));
    EXPECT_EQ(init["protocolVersion"], "2025-11-25");
    auto tools = client.list_tools();
    EXPECT_EQ(tools.size(), 29u) << "28 conformance tools and the slow one, in pages of 5";
    Json result = client.call_tool("test_simple_text", Json::object());
    EXPECT_EQ(result["content"][0]["text"], "This is a simple text response for testing.");
    Json image = client.call_tool("test_image_content", Json::object());
    EXPECT_EQ(image["content"][0]["type"], "image");
    client.close();
}

TEST(HttpClientTransport, JsonRpcErrorsArriveTyped) {
    HttpServerThread server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    try {
        client.call_tool("no_such_tool", Json::object());
        FAIL() << "expected JsonRpcError";
    } catch (const JsonRpcError& e) {
        EXPECT_EQ(e.code, -32602);
    }
}

TEST(HttpClientTransport, ResumesAResponseStreamTheServerEnds) {
    HttpServerThread server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    // The server closes the call's SSE stream at once and answers 100 ms later: only a
    // client that reconnects with Last-Event-ID gets the result.
    Json result = client.call_tool("test_reconnection", Json::object());
    EXPECT_NE(result["content"][0]["text"].get<std::string>().find("completed successfully"), std::string::npos);
}

TEST(HttpClientTransport, ServerRequestsAndNotificationsOnTheResponseStream) {
    HttpServerThread server;
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

TEST(HttpClientTransport, ListChangedArrivesOnTheStandaloneStream) {
    HttpServerThread server;
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

TEST(HttpClientTransport, TimeoutCancelsTheCallOnTheServer) {
    HttpServerThread server;
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

TEST(HttpClientTransport, CloseDeletesTheSession) {
    HttpServerThread server;
    SyncClient client;
    client.connect(http_to(client, server.url()));
    EXPECT_EQ(server.session_count(), 1u);
    client.close();
    EXPECT_EQ(server.session_count(), 0u);
}

TEST(HttpClientTransport, BearerTokens) {
    HttpOptions options;
    options.bearer_tokens = {"s3cret-token"};
    HttpServerThread server(options);
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
    EXPECT_EQ(client.list_tools().size(), 29u);
}

TEST(HttpClientTransport, AnExpiredSessionEndsTheClient) {
    HttpOptions options;
    options.session_idle_timeout = 1s;
    HttpServerThread server(options);
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

TEST(HttpClientTransport, NobodyListening) {
    int port;
    {
        HttpServerThread server;  // take a free port, then free it again
        port = std::stoi(server.url().substr(17));
    }
    SyncClient client;
    try {
        client.connect(http_to(client, "http://127.0.0.1:" + std::to_string(port) + "/mcp"));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot connect to http://127.0.0.1:"), std::string::npos) << e.what();
    }
}

TEST(HttpClientTransport, BadUrlsAndHeadersAreRefusedUpFront) {
    SyncClient client;
    HttpClientOptions options;
    options.url = "https://example.com/mcp";
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
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

TEST(StdioClientTransport, TalksToAChildProcess) {
    ClientOptions options;
    options.capabilities = elicitation_capability();
    SyncClient client(options);
    client.connect(child(client, "serve"));
    client.client().on_request(answer_forty_two);
    EXPECT_EQ(client.client().server_info()["name"], "toolport");
    EXPECT_EQ(client.list_tools().size(), 28u);
    EXPECT_EQ(client.call_tool("test_simple_text", Json::object())["content"][0]["text"],
              "This is a simple text response for testing.");
    Json result = client.call_tool("test_elicitation", {{"message", "over stdio?"}});
    EXPECT_EQ(result["content"][0]["text"], kElicitedText);
    client.close();
}

TEST(StdioClientTransport, SkipsLinesThatAreNotJson) {
    SyncClient client;
    client.connect(child(client, "banner"));
    EXPECT_EQ(client.list_tools().size(), 28u);
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

// ------------------------------------------------------------------ the children

// The smallest stdio "server": answers initialize (with its pid as the version), then
// calls `on_request` for every later request, until stdin ends.
void minimal_server(const std::function<void(const Json& request)>& on_request) {
    std::string line;
    while (std::getline(std::cin, line)) {
        Json message = Json::parse(line, nullptr, false);
        if (!message.is_object() || !message.contains("id") || !message.contains("method")) continue;
        if (message["method"] == "initialize") {
            Json reply = protocol::make_response(
                message["id"], {{"protocolVersion", "2025-11-25"},
                                {"capabilities", Json::object()},
                                {"serverInfo", {{"name", "minimal"}, {"version", std::to_string(::getpid())}}}});
            std::cout << reply.dump() << std::endl;
        } else {
            on_request(message);
        }
    }
}

[[noreturn]] void run_child(const std::string& role) {
    spdlog::set_level(spdlog::level::off);  // stdout carries the protocol
    if (role == "exit3") std::_Exit(3);
    if (role == "die_on_call") {
        minimal_server([](const Json&) { std::_Exit(7); });
        std::_Exit(0);
    }
    if (role == "stubborn") {
        ::signal(SIGTERM, SIG_IGN);
        std::thread([]() { minimal_server([](const Json&) {}); }).detach();
        for (;;) ::pause();  // stdin closed or not, this one stays
    }
    if (role == "banner") std::cout << "Starting the server, please wait..." << std::endl;
    if (role == "serve" || role == "banner") {
        boost::asio::io_context io(1);
        AsioExecutor executor(io);
        McpServer server(executor, ServerOptions{});
        packs::install_conformance(server);
        // As in `toolport serve --stdio`: serve_stdio's loop needs work of its own from the
        // start (its reader thread posts lines only later), and SIGTERM ends the process.
        boost::asio::signal_set signals(io, SIGTERM);
        signals.async_wait([](const boost::system::error_code& ec, int) {
            if (!ec) std::_Exit(0);
        });
        std::_Exit(serve_stdio(server, StdioOptions{}));
    }
    std::_Exit(100);
}

// Runs before main() (during static initialization): a child started by the tests becomes
// its role and never returns. What the roles use initializes on first use (function-local
// statics), so it does not matter which other translation units are initialized yet.
const bool kIsChild = []() {
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    const std::string flag = std::string(1, '\0') + "--toolport-test-child=";
    auto at = all.find(flag);
    if (at == std::string::npos) return false;
    std::string role = all.substr(at + flag.size());
    role = role.substr(0, role.find('\0'));
    run_child(role);
}();

}  // namespace
