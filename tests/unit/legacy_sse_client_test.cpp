// The legacy HTTP+SSE client transport (MCP 2024-11-05). Against Toolport's own server
// with legacy SSE on (GET /sse + POST /messages, served from a second thread): an
// McpClient lists and calls tools, hears notifications and answers the server's requests,
// fails only the request whose response is too large, and ends when the server goes.
// Against scripted servers, for what Toolport's server never does: name an endpoint of
// another origin, end the stream at once, answer too late or never name its endpoint.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "async/executor.hpp"
#include "client/legacy_sse_transport.hpp"
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

// The conformance pack plus "sized", whose text result is `n` characters long.
struct LegacyServer {
    explicit LegacyServer(HttpOptions options = with_legacy_sse())
        : http(std::move(options), [](McpServer& server) {
              ToolSpec sized;
              sized.name = "sized";
              sized.description = "Answers with a text of n characters";
              sized.handler = [](RequestContext&, const Json& arguments) -> Task<ToolResult> {
                  co_return ToolResult::text(std::string(arguments.value("n", 0), 'x'));
              };
              server.registry().add_tool(std::move(sized));
          }) {}
    static HttpOptions with_legacy_sse() {
        HttpOptions options;
        options.legacy_sse = true;
        return options;
    }
    std::string url(const std::string& path = "/sse") const {
        return "http://127.0.0.1:" + std::to_string(http.port()) + path;
    }

    test_support::HttpServerThread http;
};

HttpClientOptions options_for(const std::string& url) {
    HttpClientOptions options;
    options.url = url;
    return options;
}

std::unique_ptr<ClientTransport> legacy_to(SyncClient& client, const std::string& url) {
    return make_legacy_sse_transport(client.executor(), options_for(url));
}

// Waits on the client's loop until `condition` holds (a deadline only for failures).
Task<void> poll_until(Executor& executor, std::function<bool()> condition) {
    for (int i = 0; !condition(); ++i) {
        if (i > 1000) throw std::runtime_error("condition not met within 10 s");
        co_await executor.sleep(10ms);
    }
}

// Waits from the test's thread (for the server's session count, which lives on its thread).
bool eventually(const std::function<bool()>& condition) {
    for (int i = 0; i < 1000; ++i) {
        if (condition()) return true;
        std::this_thread::sleep_for(10ms);
    }
    return condition();
}

// What a transport used without an McpClient hands its owner.
struct Recorder {
    std::vector<Json> messages;
    std::vector<std::string> closed;
    ClientTransport::Handlers handlers() {
        ClientTransport::Handlers h;
        h.on_message = [this](Json message) { messages.push_back(std::move(message)); };
        h.on_closed = [this](const std::string& reason) { closed.push_back(reason); };
        return h;
    }
};

// A scripted server whose GET /sse answers with `events` (and then ends the stream).
test_support::ScriptedServer stream_of(const std::string& events) {
    return test_support::ScriptedServer([events](const test_support::SeenRequest& request) {
        test_support::ScriptedReply reply;
        if (request.method != "GET") {
            reply.status = 202;
            return reply;
        }
        reply.headers = {{"Content-Type", "text/event-stream"}};
        reply.body = events;
        return reply;
    });
}

std::string error_of(SyncClient& loop, ClientTransport& transport, Recorder& recorder) {
    try {
        loop.run(transport.open(recorder.handlers()));
    } catch (const TransportError& e) {
        return e.what();
    }
    return "(opened)";
}

// An HTTP server that answers every request with the header of an event stream and a
// comment, then says nothing more until it is destroyed (plain sockets: no Asio here).
class SilentStreamServer {
public:
    SilentStreamServer() {
        listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t length = sizeof address;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), length) != 0 || ::listen(listener_, 8) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            throw std::runtime_error("cannot listen on loopback");
        }
        port_ = ntohs(address.sin_port);
        thread_ = std::thread([this]() { serve(); });
    }
    ~SilentStreamServer() {
        stop_.set_value();
        ::shutdown(listener_, SHUT_RDWR);  // wakes accept()
        thread_.join();
        ::close(listener_);
    }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/sse"; }

private:
    void serve() {
        int connection = ::accept(listener_, nullptr, nullptr);
        if (connection < 0) return;
        std::string request;
        char buffer[1024];
        while (request.find("\r\n\r\n") == std::string::npos) {
            auto n = ::read(connection, buffer, sizeof buffer);
            if (n <= 0) break;
            request.append(buffer, static_cast<std::size_t>(n));
        }
        const std::string answer =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
            "b\r\n: waiting\n\n\r\n";
        [[maybe_unused]] auto written = ::write(connection, answer.data(), answer.size());
        stop_requested_.wait();
        ::close(connection);
    }

    int listener_ = -1;
    unsigned short port_ = 0;
    std::promise<void> stop_;
    std::shared_future<void> stop_requested_ = stop_.get_future().share();
    std::thread thread_;
};

Task<Json> answer_forty_two(const ServerRequest& request) {
    if (request.method != "elicitation/create") throw RpcError(-32601, "unexpected " + request.method);
    co_return Json{{"action", "accept"}, {"content", {{"response", "forty-two"}}}};
}

// ------------------------------------------------------------------ against Toolport's server

TEST(LegacySseClient, ListsAndCallsToolsThenCloseEndsTheSession) {
    LegacyServer server;
    SyncClient client;
    Json init = client.connect(legacy_to(client, server.url()));
    EXPECT_TRUE(init.contains("protocolVersion")) << init.dump();
    EXPECT_EQ(client.client().describe_server(), server.url());
    EXPECT_EQ(server.http.session_count(), 1u);

    auto tools = client.list_tools();
    EXPECT_EQ(tools.size(), 37u) << "36 conformance tools and sized, in pages of 5";
    Json result = client.call_tool("test_simple_text", Json::object());
    EXPECT_EQ(result["content"][0]["text"], "This is a simple text response for testing.");
    try {
        client.call_tool("no_such_tool", Json::object());
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32602) << "errors come back on the stream like results";
    }

    client.close();
    EXPECT_TRUE(eventually([&]() { return server.http.session_count() == 0; }))
        << "closing the stream ends the legacy session";
}

TEST(LegacySseClient, ServerRequestsAndNotificationsArriveOnTheStream) {
    LegacyServer server;
    ClientOptions options;
    options.capabilities = {{"elicitation", Json::object()}};
    SyncClient client(options);
    std::vector<std::string> logged;
    bool list_changed = false;
    client.connect(legacy_to(client, server.url()));
    client.client().on_request(answer_forty_two);
    client.client().on_notification([&](const std::string& method, const Json& params) {
        if (method == "notifications/message") logged.push_back(params["data"].get<std::string>());
        if (method == "notifications/tools/list_changed") list_changed = true;
    });

    // The server asks the client during the call; the answer goes back as a POST.
    Json result = client.call_tool("test_elicitation", {{"message", "What is the answer?"}});
    EXPECT_EQ(result["content"][0]["text"], "User response: action=accept, content={\"response\":\"forty-two\"}");

    client.call_tool("test_tool_with_logging", Json::object());
    EXPECT_EQ(logged.size(), 3u);

    client.call_tool("test_trigger_tool_change", Json::object());
    client.run(poll_until(client.event_loop(), [&]() { return list_changed; }));
    EXPECT_TRUE(list_changed);
    client.close();
}

TEST(LegacySseClient, AnOversizedResponseFailsItsRequestAndTheStreamGoesOn) {
    LegacyServer server;
    SyncClient client;
    HttpClientOptions options = options_for(server.url());
    options.max_message_bytes = 4000;  // initialize's result fits
    client.connect(make_legacy_sse_transport(client.executor(), std::move(options)));
    EXPECT_EQ(client.call_tool("sized", {{"n", 100}})["content"][0]["text"], std::string(100, 'x'));
    try {
        client.call_tool("sized", {{"n", 20000}});
        FAIL() << "expected ResponseTooLarge";
    } catch (const ResponseTooLarge& e) {
        EXPECT_EQ(e.limit, 4000u);
        EXPECT_GT(e.size, 20000u) << "the whole event was read and counted";
        EXPECT_TRUE(e.read_so_far);
    }
    EXPECT_TRUE(client.client().is_open());
    EXPECT_EQ(client.call_tool("sized", {{"n", 200}})["content"][0]["text"], std::string(200, 'x'))
        << "the events after the skipped one are read as ever";
    client.close();
}

TEST(LegacySseClient, AServerThatGoesAwayEndsTheClient) {
    auto server = std::make_unique<LegacyServer>();
    SyncClient client;
    std::vector<std::string> reasons;
    client.connect(legacy_to(client, server->url()));
    client.client().on_disconnect([&](const std::string& reason) { reasons.push_back(reason); });
    const std::string url = server->url();
    server.reset();
    client.run(poll_until(client.event_loop(), [&]() { return !reasons.empty(); }));
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_NE(reasons[0].find(url), std::string::npos) << reasons[0];
    EXPECT_FALSE(client.client().is_open());
    EXPECT_THROW(client.list_tools(), ClientError);
}

TEST(LegacySseClient, SpeaksHttpsWithAPrivateCa) {
    LegacyServer server;
    test_support::TestCa ca;
    test_support::TlsRelay relay(server.http.port(), ca.leaf({"localhost"}));
    HttpClientOptions options = options_for("https://localhost:" + std::to_string(relay.port()) + "/sse");
    {
        SyncClient untrusting;
        try {
            untrusting.connect(make_legacy_sse_transport(untrusting.executor(), options));
            FAIL() << "expected the handshake to fail";
        } catch (const TransportError& e) {
            EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos) << e.what();
        }
    }
    options.ca_file = ca.write_cert_file("legacy-sse-client-ca.pem");
    SyncClient client;
    client.connect(make_legacy_sse_transport(client.executor(), options));
    EXPECT_EQ(client.list_tools().size(), 37u);
    client.close();
    EXPECT_GE(relay.connections(), 2) << "the stream and the POSTs";
}

// ------------------------------------------------------------------ against scripted servers

TEST(LegacySseClient, AStreamTheServerEndsCallsOnClosedOnce) {
    auto scripted = stream_of("event: endpoint\ndata: /messages?sessionId=1\n\n");
    SyncClient loop;
    Recorder recorder;
    auto transport = legacy_to(loop, scripted.url("/sse"));
    loop.run(transport->open(recorder.handlers()));
    loop.run(poll_until(loop.event_loop(), [&]() { return !recorder.closed.empty(); }));
    loop.run(loop.event_loop().sleep(50ms));
    ASSERT_EQ(recorder.closed.size(), 1u);
    EXPECT_NE(recorder.closed[0].find("ended the event stream"), std::string::npos) << recorder.closed[0];
    try {
        loop.run(transport->send(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_EQ(std::string(e.what()), recorder.closed[0]);
    }
    loop.run(transport->close());  // never throws, even now
}

TEST(LegacySseClient, AnEndpointOfAnotherOriginIsRefused) {
    for (std::string endpoint :
         {"http://elsewhere.example/messages", "//elsewhere.example/messages", "https://127.0.0.1:1/messages"}) {
        auto scripted = stream_of("event: endpoint\ndata: " + endpoint + "\n\n");
        SyncClient loop;
        Recorder recorder;
        auto transport = legacy_to(loop, scripted.url("/sse"));
        const std::string error = error_of(loop, *transport, recorder);
        EXPECT_NE(error.find("another origin"), std::string::npos) << endpoint << ": " << error;
        EXPECT_EQ(scripted.requests().size(), 1u) << "nothing was posted to " << endpoint;
    }
}

TEST(LegacySseClient, AnAbsoluteEndpointOfTheSameOriginIsUsed) {
    // The scripted stream names itself (its own port, so its own origin) as the endpoint.
    std::atomic<unsigned short> port{0};
    test_support::ScriptedServer scripted([&port](const test_support::SeenRequest& request) {
        test_support::ScriptedReply reply;
        if (request.method == "POST") {
            reply.status = 202;
            reply.body = "Accepted";
            return reply;
        }
        reply.headers = {{"Content-Type", "text/event-stream"}};
        reply.body = "event: endpoint\r\ndata: http://127.0.0.1:" + std::to_string(port.load()) +
                     "/post/here?session=7\r\n\r\n"
                     "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/hello\"}\r\n\r\n";
        return reply;
    });
    port = scripted.port();
    SyncClient loop;
    Recorder recorder;
    auto transport = legacy_to(loop, scripted.url("/sse"));
    loop.run(transport->open(recorder.handlers()));
    loop.run(transport->send(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}));
    loop.run(poll_until(loop.event_loop(), [&]() { return !recorder.messages.empty(); }));
    EXPECT_EQ(recorder.messages[0]["method"], "notifications/hello") << "CRLF line ends";
    auto requests = scripted.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[1].method, "POST");
    EXPECT_EQ(requests[1].target, "/post/here?session=7");
    EXPECT_EQ(Json::parse(requests[1].body)["method"], "notifications/initialized");
    EXPECT_EQ(requests[1].header("Content-Type"), "application/json");
    loop.run(transport->close());
}

TEST(LegacySseClient, PostsAreRefusedWithTheirStatus) {
    test_support::ScriptedServer scripted([](const test_support::SeenRequest& request) {
        test_support::ScriptedReply reply;
        if (request.method == "POST") {
            reply.status = 404;
            reply.headers = {{"Content-Type", "application/json"}};
            reply.body = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Session not found"}})";
            return reply;
        }
        reply.headers = {{"Content-Type", "text/event-stream"}};
        reply.body = "event: endpoint\ndata: messages?sessionId=gone\n\n";
        reply.chunked = true;
        return reply;
    });
    SyncClient loop;
    Recorder recorder;
    auto transport = legacy_to(loop, scripted.url("/mcp/sse"));
    loop.run(transport->open(recorder.handlers()));
    try {
        loop.run(transport->send(Json{{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("HTTP 404"), std::string::npos) << what;
        EXPECT_NE(what.find("Session not found"), std::string::npos) << what;
    }
    auto requests = scripted.requests();
    ASSERT_GE(requests.size(), 2u);
    EXPECT_EQ(requests[1].target, "/mcp/messages?sessionId=gone") << "a relative endpoint, resolved against /mcp/sse";
    loop.run(transport->close());
}

TEST(LegacySseClient, OversizedNotificationsAreSkippedAndTheStreamGoesOn) {
    const std::string big(5000, 'y');
    auto scripted = stream_of(
        "event: endpoint\ndata: /messages\n\n"
        ": a comment over the limit is skipped too " +
        big +
        "\n\n"
        "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/big\",\n"
        "data: \"params\":{\"text\":\"" +
        big +
        "\"}}\n\n"
        "event: message\r\n"
        "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/small\"}\r\n\r\n");
    SyncClient loop;
    Recorder recorder;
    HttpClientOptions options = options_for(scripted.url("/sse"));
    options.max_message_bytes = 1000;
    auto transport = make_legacy_sse_transport(loop.executor(), std::move(options));
    loop.run(transport->open(recorder.handlers()));
    loop.run(poll_until(loop.event_loop(), [&]() { return !recorder.closed.empty(); }));
    ASSERT_EQ(recorder.messages.size(), 1u);
    EXPECT_EQ(recorder.messages[0]["method"], "notifications/small");
    EXPECT_NE(recorder.closed[0].find("ended the event stream"), std::string::npos)
        << "the end of the stream, not the big event, ended the connection: " << recorder.closed[0];
}

TEST(LegacySseClient, WrongUrlsFailWithinTheConnectTimeout) {
    LegacyServer server;
    auto refused = [](const std::string& url, std::chrono::milliseconds timeout = 10s) {
        SyncClient loop;
        Recorder recorder;
        HttpClientOptions options = options_for(url);
        options.connect_timeout = timeout;
        auto transport = make_legacy_sse_transport(loop.executor(), std::move(options));
        const auto started = std::chrono::steady_clock::now();
        std::string error = error_of(loop, *transport, recorder);
        EXPECT_LT(std::chrono::steady_clock::now() - started, timeout + 2s) << url;
        EXPECT_TRUE(recorder.closed.empty()) << "open() reports it; on_closed is for later";
        return error;
    };

    // Not an SSE endpoint of this server.
    std::string error = refused(server.url("/nowhere"));
    EXPECT_NE(error.find("HTTP 404"), std::string::npos) << error;

    // Nobody listens there.
    int free_port;
    {
        test_support::HttpServerThread gone;  // take a free port, then free it again
        free_port = gone.port();
    }
    error = refused("http://127.0.0.1:" + std::to_string(free_port) + "/sse");
    EXPECT_NE(error.find("cannot connect to http://127.0.0.1:"), std::string::npos) << error;

    // An answer that is no event stream.
    test_support::ScriptedServer page([](const test_support::SeenRequest&) {
        test_support::ScriptedReply reply;
        reply.headers = {{"Content-Type", "text/html"}};
        reply.body = "<html>hello</html>";
        return reply;
    });
    error = refused(page.url("/sse"));
    EXPECT_NE(error.find("not an event stream"), std::string::npos) << error;

    // A stream that ends before naming the endpoint.
    auto short_stream = stream_of("event: message\ndata: {}\n\n");
    error = refused(short_stream.url("/sse"));
    EXPECT_NE(error.find("before naming its endpoint"), std::string::npos) << error;

    // A server that takes its time to answer at all ...
    test_support::ScriptedServer slow([](const test_support::SeenRequest&) {
        test_support::ScriptedReply reply;
        reply.delay_ms = 3000;
        return reply;
    });
    error = refused(slow.url("/sse"), 300ms);
    EXPECT_NE(error.find("did not answer within 300 ms"), std::string::npos) << error;

    // ... and one that opens the stream but never names the endpoint.
    SilentStreamServer silent;
    error = refused(silent.url(), 300ms);
    EXPECT_NE(error.find("sent no endpoint event within 300 ms"), std::string::npos) << error;
}

TEST(LegacySseClient, BadOptionsAreRefusedUpFront) {
    SyncClient loop;
    HttpClientOptions options = options_for("ftp://example.com/sse");
    EXPECT_THROW(make_legacy_sse_transport(loop.executor(), options), std::invalid_argument);
    options.url = "http://127.0.0.1/sse";
    options.headers = {{"Accept", "text/html"}};
    EXPECT_THROW(make_legacy_sse_transport(loop.executor(), options), std::invalid_argument);
    options.headers = {{"X-Api-Key", "fine"}};
    EXPECT_NO_THROW(make_legacy_sse_transport(loop.executor(), options));
}

}  // namespace
