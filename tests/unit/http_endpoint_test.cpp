// HttpEndpoint without sockets, on the manual executor: every POST ends (answered, or
// answered with an error when its request is cancelled or its session ends, or let go when
// its client leaves), malformed messages are answered on the POST, batches keep every
// reply, sessions belong to their creator and end with their streams.
#include <gtest/gtest.h>

#include <map>

#include "auth/authenticator.hpp"
#include "auth_test_support.hpp"
#include "manual_executor.hpp"
#include "providers/source_table.hpp"
#include "server/server.hpp"
#include "transports/event_stream.hpp"
#include "transports/http_endpoint.hpp"
#include "util/json.hpp"

using namespace toolport;
using namespace std::chrono_literals;

namespace {

// A request as a connection would hand it over.
class FakeRequest final : public HttpRequestView {
public:
    FakeRequest(HttpMethod method, std::string body, std::map<std::string, std::string> headers)
        : method_(method), body_(std::move(body)), headers_(std::move(headers)) {}
    HttpMethod method() const override { return method_; }
    std::string_view target() const override { return target_; }
    unsigned version() const override { return version_; }
    bool keep_alive() const override { return true; }
    std::string_view header(std::string_view name) const override {
        auto it = find(name);
        return it == headers_.end() ? std::string_view() : std::string_view(it->second);
    }
    bool has_header(std::string_view name) const override { return find(name) != headers_.end(); }
    void for_each_header(const std::function<void(std::string_view, std::string_view)>& visit) const override {
        for (const auto& [n, v] : headers_) visit(n, v);
        for (const auto& [n, v] : repeated_) visit(n, v);
    }
    const std::string& body() const override { return body_; }

    std::string target_ = "/mcp";
    unsigned version_ = 11;
    // Fields sent again after those of `headers_` (header() finds the first, as Beast's does).
    std::vector<std::pair<std::string, std::string>> repeated_;

private:
    std::map<std::string, std::string>::const_iterator find(std::string_view name) const {
        for (auto it = headers_.begin(); it != headers_.end(); ++it) {
            if (strcasecmp(it->first.c_str(), std::string(name).c_str()) == 0) return it;
        }
        return headers_.end();
    }
    HttpMethod method_;
    std::string body_;
    std::map<std::string, std::string> headers_;
};

struct Reply {
    unsigned status = 0;
    Json body;  // null when the body is not JSON (or empty)
};

class HttpEndpointTest : public ::testing::Test {
protected:
    HttpEndpointTest() { make_endpoint(HttpOptions{}); }
    // Whatever a test left running (a sleeping tool) ends: sessions close, time runs out.
    ~HttpEndpointTest() override {
        endpoint->stop();
        exec.advance(std::chrono::hours(1));
    }

    void make_endpoint(HttpOptions options) {
        if (endpoint) endpoint->stop();
        exec.run();
        endpoint.reset();
        sources.clear();
        server = std::make_unique<McpServer>(exec, ServerOptions{});
        sources.push_back(providers::start_source("testing", *server));
        endpoint = std::make_unique<HttpEndpoint>(*server, exec, std::move(options));
        endpoint->start();
    }

    std::map<std::string, std::string> headers(const std::string& session = {}, const std::string& token = {}) {
        std::map<std::string, std::string> h{{"Host", "127.0.0.1:8080"},
                                             {"Content-Type", "application/json"},
                                             {"Accept", "application/json, text/event-stream"}};
        if (!session.empty()) h["Mcp-Session-Id"] = session;
        if (!token.empty()) h["Authorization"] = "Bearer " + token;
        return h;
    }

    HttpAnswer send(HttpMethod method, const std::string& body, std::map<std::string, std::string> h) {
        FakeRequest req(method, body, std::move(h));
        auto answer = endpoint->answer(req);
        exec.run();
        return answer;
    }
    HttpAnswer post(const Json& body, const std::string& session = {}, const std::string& token = {}) {
        return send(HttpMethod::post, body.dump(), headers(session, token));
    }

    static Reply reply_of(const HttpAnswer& answer) {
        EXPECT_TRUE(answer.reply.has_value()) << "expected a reply";
        if (!answer.reply) return {};
        Reply r{answer.reply->status, Json::parse(answer.reply->body, nullptr, false)};
        if (r.body.is_discarded()) r.body = nullptr;
        return r;
    }

    // Initializes a session with `revision`; returns its id.
    std::string initialize(const std::string& revision = "2025-06-18", const std::string& token = {}) {
        auto answer = post({{"jsonrpc", "2.0"},
                            {"id", 0},
                            {"method", "initialize"},
                            {"params",
                             {{"protocolVersion", revision},
                              {"capabilities", Json::object()},
                              {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}},
                           {}, token);
        EXPECT_EQ(reply_of(answer).status, 200u);
        auto head = answer.reply->head;
        auto at = head.find("Mcp-Session-Id: ");
        EXPECT_NE(at, std::string::npos);
        auto sid = head.substr(at + 16, head.find("\r\n", at) - at - 16);
        EXPECT_EQ(reply_of(post({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, sid, token)).status,
                  202u);
        return sid;
    }

    static Json sleep_call(const Json& id, int ms) {
        return {{"jsonrpc", "2.0"},
                {"id", id},
                {"method", "tools/call"},
                {"params", {{"name", "test_sleep"}, {"arguments", {{"ms", ms}}}}}};
    }
    static Json ping(const Json& id) { return {{"jsonrpc", "2.0"}, {"id", id}, {"method", "ping"}}; }

    // Waits (in virtual time) for a pending answer the way a connection does.
    HttpAnswer settle(HttpAnswer answer) {
        if (!answer.pending) return answer;
        bool woken = false;
        answer.pending->set_waker([&woken] { woken = true; });
        exec.run();
        EXPECT_TRUE(answer.pending->ready());
        return answer.pending->take();
    }

    test_support::ManualExecutor exec;
    std::unique_ptr<McpServer> server;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::unique_ptr<HttpEndpoint> endpoint;
};

// Tools see the request headers a source asked for (per-user credentials), as the latest
// request of the session sent them, and no others.
TEST_F(HttpEndpointTest, ForwardedClientHeadersReachTheToolsAndNothingElseDoes) {
    server->forward_client_header("X-Service-Key");
    providers::SourceContext probe("probe", *server);
    probe.add_tool({.name = "show_headers", .handler = [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
                        co_return ToolResult::structured(Json(ctx.caller().client_headers));
                    }});
    auto sid = initialize();
    auto call = [&](std::map<std::string, std::string> extra) {
        auto h = headers(sid);
        h.insert(extra.begin(), extra.end());
        Json body = {{"jsonrpc", "2.0"},
                     {"id", 7},
                     {"method", "tools/call"},
                     {"params", {{"name", "show_headers"}, {"arguments", Json::object()}}}};
        return reply_of(settle(send(HttpMethod::post, body.dump(), h))).body["result"]["structuredContent"];
    };
    EXPECT_EQ(call({{"X-Service-Key", "k1"}, {"X-Other", "secret"}}), (Json{{"x-service-key", "k1"}}));
    EXPECT_EQ(call({{"x-service-key", "k2"}}), (Json{{"x-service-key", "k2"}}));
    EXPECT_EQ(call({}), Json::object());
}

TEST_F(HttpEndpointTest, ACancelledRequestEndsItsPostWithAnError) {
    auto sid = initialize();
    auto answer = post(sleep_call(7, 60000), sid);
    ASSERT_TRUE(answer.pending);
    bool woken = false;
    answer.pending->set_waker([&woken] { woken = true; });
    EXPECT_FALSE(answer.pending->ready());
    post({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 7}, {"reason", "user"}}}},
         sid);
    EXPECT_TRUE(woken);
    ASSERT_TRUE(answer.pending->ready());
    auto r = reply_of(answer.pending->take());
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body["id"], 7);
    EXPECT_EQ(r.body["error"]["code"], protocol::error_code::kRequestCancelled);
    EXPECT_EQ(r.body["error"]["message"], "Request cancelled: user");
}

TEST_F(HttpEndpointTest, DeletingTheSessionEndsItsPostsAndStreams) {
    auto sid = initialize();
    auto call = post(sleep_call(1, 60000), sid);
    ASSERT_TRUE(call.pending);
    auto get = send(HttpMethod::get, "", headers(sid));
    ASSERT_TRUE(get.stream);
    std::string chunk;
    EXPECT_EQ(get.stream->next(chunk), EventStream::Step::wait);  // the priming event
    int stream_wakes = 0;
    get.stream->set_waker([&] { ++stream_wakes; });

    EXPECT_EQ(reply_of(send(HttpMethod::delete_, "", headers(sid))).status, 200u);
    EXPECT_GE(stream_wakes, 1);
    chunk.clear();
    EXPECT_EQ(get.stream->next(chunk), EventStream::Step::end);
    ASSERT_TRUE(call.pending->ready());
    auto r = reply_of(call.pending->take());
    EXPECT_EQ(r.body["id"], 1);
    EXPECT_EQ(r.body["error"]["message"].get<std::string>().rfind("Session ended: the client deleted the session", 0),
              0u);
    EXPECT_EQ(endpoint->session_count(), 0u);
    EXPECT_EQ(exec.pending_timers(), 1u);  // only the sweep: the sleeping tool was cancelled
}

TEST_F(HttpEndpointTest, ASecondPostReusingAnInFlightIdIsRefusedAndTheFirstStillAnswered) {
    auto sid = initialize();
    auto first = post(sleep_call(3, 1000), sid);
    ASSERT_TRUE(first.pending);
    auto second = reply_of(post(ping(3), sid));
    EXPECT_EQ(second.status, 400u);
    EXPECT_EQ(second.body["id"], 3);
    EXPECT_EQ(second.body["error"]["code"], protocol::error_code::kInvalidRequest);
    exec.advance(1000ms);
    auto r = reply_of(settle(std::move(first)));
    EXPECT_EQ(r.body["id"], 3);
    EXPECT_EQ(r.body["result"]["content"][0]["text"], "slept 1000 ms");
}

TEST_F(HttpEndpointTest, ABatchWithARepeatedIdAnswersBoth) {
    auto sid = initialize("2025-03-26");
    auto r = reply_of(settle(post(Json::array({ping(1), ping(1), ping(2)}), sid)));
    EXPECT_EQ(r.status, 200u);
    ASSERT_TRUE(r.body.is_array());
    ASSERT_EQ(r.body.size(), 3u);
    int results = 0, errors = 0;
    for (const auto& m : r.body) {
        if (m.contains("result")) ++results;
        if (m.contains("error")) {
            ++errors;
            EXPECT_EQ(m["id"], 1);
        }
    }
    EXPECT_EQ(results, 2);
    EXPECT_EQ(errors, 1);
}

TEST_F(HttpEndpointTest, ABatchKeepsEveryReplyBeyondTheReplayLog) {
    HttpOptions options;
    options.max_replay_events = 16;
    make_endpoint(options);
    auto sid = initialize("2025-03-26");
    Json batch = Json::array();
    for (int i = 0; i < 1000; ++i) batch.push_back(ping(i));
    auto r = reply_of(settle(post(batch, sid)));
    ASSERT_EQ(r.status, 200u);
    ASSERT_EQ(r.body.size(), 1000u);
    std::vector<bool> seen(1000);
    for (const auto& m : r.body) seen[m["id"].get<int>()] = true;
    EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 1000);
}

TEST_F(HttpEndpointTest, ABatchOverTheLimitIsRefusedWhole) {
    HttpOptions options;
    options.max_batch_size = 10;
    make_endpoint(options);
    auto sid = initialize("2025-03-26");
    Json batch = Json::array();
    for (int i = 0; i < 11; ++i) batch.push_back(ping(i));
    auto r = reply_of(post(batch, sid));
    EXPECT_EQ(r.status, 400u);
    EXPECT_EQ(r.body["error"]["code"], protocol::error_code::kInvalidRequest);
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find("10"), std::string::npos) << r.body.dump();
}

TEST_F(HttpEndpointTest, MessagesWithoutAUsableIdAreAnsweredOnThePost) {
    auto sid = initialize();
    for (std::string body :
         {"42", R"({"jsonrpc":"2.0","id":true,"method":"ping"})", R"({"jsonrpc":"2.0","id":null,"method":"ping"})",
          R"({"jsonrpc":"2.0","id":[],"method":"ping"})", R"({"jsonrpc":"2.0","id":{},"method":"ping"})"}) {
        auto r = reply_of(send(HttpMethod::post, body, headers(sid)));
        EXPECT_EQ(r.status, 400u) << body;
        EXPECT_TRUE(r.body["id"].is_null()) << body;
        EXPECT_EQ(r.body["error"]["code"], protocol::error_code::kInvalidRequest) << body;
    }
}

TEST_F(HttpEndpointTest, MalformedBatchMembersAreAnsweredInTheBatchReply) {
    auto sid = initialize("2025-03-26");
    auto only_bad = reply_of(send(HttpMethod::post, "[[1], 2]", headers(sid)));
    EXPECT_EQ(only_bad.status, 400u);
    ASSERT_TRUE(only_bad.body.is_array());
    EXPECT_EQ(only_bad.body.size(), 2u);
    auto mixed = reply_of(
        settle(send(HttpMethod::post, R"([[1], {"jsonrpc":"2.0","id":9,"method":"ping"}])", headers(sid))));
    EXPECT_EQ(mixed.status, 200u);
    ASSERT_EQ(mixed.body.size(), 2u);
}

TEST_F(HttpEndpointTest, AStatelessCallIsCancelledWhenItsClientLeaves) {
    auto h = headers();
    h["MCP-Protocol-Version"] = "2026-07-28";
    h["Mcp-Method"] = "tools/call";
    h["Mcp-Name"] = "test_sleep";
    Json call = sleep_call(1, 6000);
    call["params"]["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                               {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
    auto answer = send(HttpMethod::post, call.dump(), h);
    ASSERT_TRUE(answer.pending);
    answer.pending->set_waker([] {});
    EXPECT_EQ(exec.pending_timers(), 2u);  // the sweep and the tool's sleep
    answer.pending->client_gone();
    exec.run();
    EXPECT_TRUE(answer.pending->ready());
    EXPECT_FALSE(answer.pending->take().reply);  // nobody to answer
    EXPECT_EQ(exec.pending_timers(), 1u);        // the tool's sleep was cancelled
}

TEST_F(HttpEndpointTest, AStatelessNotificationIsAcceptedAndDropped) {
    // The 2.x SDK POSTs notifications/cancelled when it closes a 2026-07-28 stream; there is
    // no session to reach and nothing to do, and "initialize first" would be wrong advice.
    auto h = headers();
    h["MCP-Protocol-Version"] = "2026-07-28";
    Json cancelled = {{"jsonrpc", "2.0"},
                      {"method", "notifications/cancelled"},
                      {"params",
                       {{"requestId", 3}, {"_meta", {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"}}}}}};
    EXPECT_EQ(reply_of(send(HttpMethod::post, cancelled.dump(), h)).status, 202u);
    // Before 2026-07-28 a notification still needs its session.
    h["MCP-Protocol-Version"] = "2025-11-25";
    EXPECT_EQ(reply_of(send(HttpMethod::post, cancelled.dump(), h)).status, 400u);
}

TEST_F(HttpEndpointTest, AStatefulCallGoesOnWhenItsClientLeaves) {
    auto sid = initialize();
    auto answer = post(sleep_call(1, 500), sid);
    ASSERT_TRUE(answer.pending);
    answer.pending->set_waker([] {});
    answer.pending->client_gone();
    EXPECT_FALSE(answer.pending->take().reply);
    EXPECT_EQ(exec.pending_timers(), 2u);  // disconnection is not cancellation here
}

TEST_F(HttpEndpointTest, ASessionServesOnlyTheCredentialThatCreatedIt) {
    HttpOptions options;
    options.bearer_tokens = {"token-a", "token-b"};
    make_endpoint(options);
    auto sid = initialize("2025-06-18", "token-a");
    EXPECT_EQ(reply_of(settle(post(ping(1), sid, "token-a"))).status, 200u);
    auto other = reply_of(post(ping(2), sid, "token-b"));
    EXPECT_EQ(other.status, 404u);
    EXPECT_EQ(reply_of(send(HttpMethod::delete_, "", headers(sid, "token-b"))).status, 404u);
    EXPECT_EQ(endpoint->session_count(), 1u);
}

TEST_F(HttpEndpointTest, Http11WithoutHostIsRefused) {
    auto h = headers();
    h.erase("Host");
    auto r = reply_of(send(HttpMethod::post, ping(1).dump(), h));
    EXPECT_EQ(r.status, 400u);
    FakeRequest old(HttpMethod::get, "", {});
    old.version_ = 10;
    old.target_ = "/nowhere";
    EXPECT_EQ(reply_of(endpoint->answer(old)).status, 404u);  // HTTP/1.0 needs no Host
}

// RFC 9112 §3.2: more than one Host, or an empty one, is a 400 (it skipped the check, or the
// first one won); a Host that only starts like a loopback literal is no loopback name (403),
// on every endpoint, the legacy SSE ones too.
TEST_F(HttpEndpointTest, RepeatedEmptyAndLookalikeHostsAreRefused) {
    auto answer_for = [&](const std::string& target, HttpMethod method, std::map<std::string, std::string> h,
                          std::vector<std::pair<std::string, std::string>> repeated = {}) {
        FakeRequest req(method, method == HttpMethod::post ? ping(1).dump() : std::string(), std::move(h));
        req.target_ = target;
        req.repeated_ = std::move(repeated);
        auto r = reply_of(endpoint->answer(req));
        exec.run();
        return r;
    };
    auto with_host = [&](const std::string& host) {
        auto h = headers();
        h["Host"] = host;
        return h;
    };
    for (const char* target : {"/mcp", "/sse", "/messages", "/metrics"}) {
        const auto method = std::string_view(target) == "/sse" || std::string_view(target) == "/metrics"
                                ? HttpMethod::get
                                : HttpMethod::post;
        auto twice = answer_for(target, method, headers(), {{"host", "evil.example"}});
        EXPECT_EQ(twice.status, 400u) << target;
        EXPECT_NE(twice.body["error"]["message"].get<std::string>().find("more than one Host"), std::string::npos);
        auto same_twice = answer_for(target, method, headers(), {{"Host", "127.0.0.1:8080"}});
        EXPECT_EQ(same_twice.status, 400u) << target;
        auto empty = answer_for(target, method, with_host(""));
        EXPECT_EQ(empty.status, 400u) << target;
        EXPECT_NE(empty.body["error"]["message"].get<std::string>().find("Host header is empty"), std::string::npos);
        EXPECT_EQ(answer_for(target, method, with_host("  ")).status, 400u) << target;
        EXPECT_EQ(answer_for(target, method, with_host("[::1].evil.com")).status, 403u) << target;
        EXPECT_EQ(answer_for(target, method, with_host("[::1].evil.com:8080")).status, 403u) << target;
        auto h = headers();
        h["Origin"] = "http://[::1].evil.com";
        EXPECT_EQ(answer_for(target, method, h).status, 403u) << target;
    }
    // HTTP/1.0 without any Host still passes, and a plain loopback Host too.
    FakeRequest old(HttpMethod::get, "", {});
    old.version_ = 10;
    old.target_ = "/nowhere";
    EXPECT_EQ(reply_of(endpoint->answer(old)).status, 404u);
    EXPECT_EQ(answer_for("/metrics", HttpMethod::get, with_host("[::1]:8080")).status, 200u);
}

TEST_F(HttpEndpointTest, UnfinishedHandshakesExpireSoon) {
    HttpOptions options;
    options.handshake_timeout = 2s;
    make_endpoint(options);
    auto established = initialize();
    auto answer = post({{"jsonrpc", "2.0"},
                        {"id", 0},
                        {"method", "initialize"},
                        {"params",
                         {{"protocolVersion", "2025-06-18"},
                          {"capabilities", Json::object()},
                          {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}});
    EXPECT_EQ(endpoint->session_count(), 2u);
    exec.advance(3s);
    EXPECT_EQ(endpoint->session_count(), 1u);
    EXPECT_EQ(reply_of(settle(post(ping(1), established))).status, 200u);
}

TEST_F(HttpEndpointTest, StoppingEndsWhatIsPending) {
    auto sid = initialize();
    auto call = post(sleep_call(1, 60000), sid);
    ASSERT_TRUE(call.pending);
    endpoint->stop();
    EXPECT_TRUE(call.pending->ready());
    EXPECT_FALSE(call.pending->take().reply);
    FakeRequest req(HttpMethod::post, ping(1).dump(), headers(sid));
    auto after = endpoint->answer(req);
    EXPECT_FALSE(after.reply || after.stream || after.pending);
}

}  // namespace

// Gateway profiles chosen by bearer token (McpServer::add_view with tokens): the token
// authenticates, selects its view at the plain MCP path, and never reaches another view or
// the server's other endpoints; the server's own tokens still reach everything.
class HttpEndpointProfileTokenTest : public HttpEndpointTest {
protected:
    void make_endpoint_with_profiles(HttpOptions options) {
        make_endpoint(std::move(options));
        server->add_view("sleepy", [](const ToolSpec& t) { return t.name == "test_sleep"; }, {"sleepy-token"});
        server->add_view("failing", [](const ToolSpec& t) { return t.name == "test_fail"; },
                         {"failing-token", "failing-2"});
    }

    HttpAnswer send_to(const std::string& target, HttpMethod method, const Json& body,
                       std::map<std::string, std::string> h) {
        FakeRequest req(method, body.is_null() ? std::string() : body.dump(), std::move(h));
        req.target_ = target;
        auto answer = endpoint->answer(req);
        exec.run();
        return answer;
    }

    static Json initialize_request() {
        return {{"jsonrpc", "2.0"},
                {"id", 0},
                {"method", "initialize"},
                {"params",
                 {{"protocolVersion", "2025-06-18"},
                  {"capabilities", Json::object()},
                  {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}};
    }

    // The tools a session lists, by name.
    std::vector<std::string> tool_names(const std::string& target, const std::string& sid, const std::string& token) {
        auto r = reply_of(
            settle(send_to(target, HttpMethod::post, {{"jsonrpc", "2.0"}, {"id", 9}, {"method", "tools/list"}},
                           headers(sid, token))));
        EXPECT_EQ(r.status, 200u) << r.body.dump();
        std::vector<std::string> names;
        for (const auto& t : r.body["result"]["tools"]) names.push_back(t["name"]);
        return names;
    }

    // Initializes a session at `target` with `token`; returns its id ("" when refused).
    std::string initialize_at(const std::string& target, const std::string& token) {
        auto answer = send_to(target, HttpMethod::post, initialize_request(), headers({}, token));
        if (reply_of(answer).status != 200u) return {};
        auto head = answer.reply->head;
        auto at = head.find("Mcp-Session-Id: ");
        auto sid = head.substr(at + 16, head.find("\r\n", at) - at - 16);
        send_to(target, HttpMethod::post, {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                headers(sid, token));
        return sid;
    }
};

TEST_F(HttpEndpointProfileTokenTest, AProfileTokenTurnsAuthOnAndSelectsItsProfileAtTheMcpPath) {
    make_endpoint_with_profiles(HttpOptions{});  // no server tokens: the profile tokens alone
    auto anonymous = reply_of(send_to("/mcp", HttpMethod::post, initialize_request(), headers()));
    EXPECT_EQ(anonymous.status, 401u);
    EXPECT_EQ(reply_of(send_to("/mcp", HttpMethod::post, initialize_request(), headers({}, "guess"))).status, 401u);
    EXPECT_EQ(reply_of(send_to("/mcp/sleepy", HttpMethod::post, initialize_request(), headers())).status, 401u);

    auto sid = initialize_at("/mcp", "sleepy-token");
    ASSERT_FALSE(sid.empty());
    EXPECT_EQ(tool_names("/mcp", sid, "sleepy-token"), (std::vector<std::string>{"test_sleep"}));
    // Bound to the token that made it: another profile's token does not find it.
    auto stolen = reply_of(send_to("/mcp", HttpMethod::post, ping(3), headers(sid, "failing-token")));
    EXPECT_EQ(stolen.status, 404u);
    // A profile's second token is its own credential too.
    auto second = initialize_at("/mcp", "failing-2");
    ASSERT_FALSE(second.empty());
    EXPECT_EQ(tool_names("/mcp", second, "failing-2"), (std::vector<std::string>{"test_fail"}));
    // Its own view path serves it as well, the same view.
    auto own = initialize_at("/mcp/sleepy", "sleepy-token");
    ASSERT_FALSE(own.empty());
    EXPECT_EQ(tool_names("/mcp/sleepy", own, "sleepy-token"), (std::vector<std::string>{"test_sleep"}));
}

TEST_F(HttpEndpointProfileTokenTest, AProfileTokenNeverReachesAnotherProfileOrTheServersOtherEndpoints) {
    make_endpoint_with_profiles(HttpOptions{});
    auto refused = reply_of(
        send_to("/mcp/failing", HttpMethod::post, initialize_request(), headers({}, "sleepy-token")));
    EXPECT_EQ(refused.status, 403u);
    auto message = refused.body["error"]["message"].get<std::string>();
    EXPECT_EQ(refused.body["error"]["code"], -32600);
    EXPECT_NE(message.find("\"sleepy\""), std::string::npos) << message;
    EXPECT_NE(message.find("\"failing\""), std::string::npos) << message;
    EXPECT_EQ(message.find("sleepy-token"), std::string::npos) << "never the token: " << message;
    EXPECT_EQ(endpoint->session_count(), 0u);
    // Nor with a session made at /mcp: the path is refused before the session is looked up.
    auto sid = initialize_at("/mcp", "sleepy-token");
    EXPECT_EQ(reply_of(send_to("/mcp/failing", HttpMethod::post, ping(4), headers(sid, "sleepy-token"))).status, 403u);
    EXPECT_EQ(reply_of(send_to("/metrics", HttpMethod::get, nullptr, headers({}, "sleepy-token"))).status, 403u);
    EXPECT_EQ(reply_of(send_to("/metrics", HttpMethod::get, nullptr, headers())).status, 401u);
    // A path that is no endpoint is 404 for a profile's token as for anyone.
    EXPECT_EQ(reply_of(send_to("/mcp/nope", HttpMethod::post, initialize_request(), headers({}, "sleepy-token"))).status,
              404u);
}

TEST_F(HttpEndpointProfileTokenTest, TheServersOwnTokensKeepEveryPath) {
    HttpOptions options;
    options.bearer_tokens = {"admin-token"};
    make_endpoint_with_profiles(options);
    auto all = initialize_at("/mcp", "admin-token");
    ASSERT_FALSE(all.empty());
    auto every = tool_names("/mcp", all, "admin-token");
    EXPECT_GT(every.size(), 2u);
    auto in_view = initialize_at("/mcp/failing", "admin-token");
    ASSERT_FALSE(in_view.empty());
    EXPECT_EQ(tool_names("/mcp/failing", in_view, "admin-token"), (std::vector<std::string>{"test_fail"}));
    // Sessions stay bound to the view they were made in.
    EXPECT_EQ(reply_of(send_to("/mcp", HttpMethod::post, ping(5), headers(in_view, "admin-token"))).status, 404u);
    EXPECT_EQ(reply_of(send_to("/metrics", HttpMethod::get, nullptr, headers({}, "admin-token"))).status, 200u);
    // The profile's token beside them is still its profile only.
    auto sid = initialize_at("/mcp", "sleepy-token");
    EXPECT_EQ(tool_names("/mcp", sid, "sleepy-token"), (std::vector<std::string>{"test_sleep"}));
    EXPECT_EQ(reply_of(send_to("/mcp", HttpMethod::post, ping(6), headers(sid, "admin-token"))).status, 404u);
}

// OAuth (`auth:`): a token seen for the first time is answered once verified; after that
// it comes from the verified cache and is answered at once (no pending answer).
TEST_F(HttpEndpointTest, OAuthTokensAreVerifiedOnceThenAnsweredSynchronously) {
    auto key = test_support::make_ec_key("k1");
    auto jwks = auth::parse_jwks(test_support::jwks_text(Json::array({test_support::public_jwk(key, "ES256")})));
    HttpOptions options;
    options.bearer_tokens = {"static-token"};
    options.oauth.issuer = "https://as.example.test";
    options.oauth.resource = "http://127.0.0.1:8080/mcp";
    options.oauth.required_scopes = {"mcp:tools"};
    options.oauth.scopes_supported = {"mcp:tools"};
    options.oauth.authenticator = std::make_shared<auth::TokenAuthenticator>(
        auth::AuthenticatorOptions{.verifier = {.issuer = options.oauth.issuer, .audiences = {options.oauth.resource}}},
        std::make_shared<auth::StaticKeySource>(std::move(jwks)));
    make_endpoint(options);
    auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto token_for = [&](const std::string& sub, const std::string& scope) {
        return test_support::sign_token(key, "ES256",
                                        {{"iss", "https://as.example.test"},
                                         {"aud", "http://127.0.0.1:8080/mcp"},
                                         {"sub", sub},
                                         {"exp", now + 300},
                                         {"scope", scope}});
    };

    // The metadata, without a token.
    auto h = headers();
    h.erase("Authorization");
    FakeRequest prm(HttpMethod::get, "", h);
    prm.target_ = "/.well-known/oauth-protected-resource/mcp";
    auto doc = reply_of(endpoint->answer(prm));
    EXPECT_EQ(doc.status, 200u);
    EXPECT_EQ(doc.body["resource"], "http://127.0.0.1:8080/mcp");
    EXPECT_EQ(doc.body["authorization_servers"], Json::array({"https://as.example.test"}));

    // No token: 401 at once, pointing at the metadata.
    auto none = post(ping(1));
    ASSERT_TRUE(none.reply);
    EXPECT_EQ(none.reply->status, 401u);
    EXPECT_NE(none.reply->head.find("WWW-Authenticate: Bearer resource_metadata=\"http://127.0.0.1:8080/"
                                    ".well-known/oauth-protected-resource/mcp\", scope=\"mcp:tools\""),
              std::string::npos)
        << none.reply->head;

    const auto alice = token_for("alice", "mcp:tools");
    auto first = post(ping(1), {}, alice);
    EXPECT_TRUE(first.pending) << "a token not verified yet waits for its verification";
    EXPECT_EQ(reply_of(settle(std::move(first))).status, 400u);  // verified: a ping without a session
    auto again = post(ping(1), {}, alice);
    EXPECT_FALSE(again.pending) << "a verified token is answered without waiting";
    EXPECT_EQ(reply_of(again).status, 400u);
    EXPECT_EQ(options.oauth.authenticator->verifier().signature_checks(), 1u);

    // A session belongs to its user: another user's token gets 404, a static token too.
    auto sid = initialize("2025-06-18", alice);
    EXPECT_EQ(reply_of(settle(post(ping(2), sid, token_for("alice", "mcp:tools other")))).status, 200u);
    EXPECT_EQ(reply_of(settle(post(ping(3), sid, token_for("bob", "mcp:tools")))).status, 404u);
    EXPECT_EQ(reply_of(post(ping(4), sid, "static-token")).status, 404u);

    // Without the required scope: 403 insufficient_scope.
    auto scoped = settle(post(ping(5), {}, token_for("carol", "openid")));
    ASSERT_TRUE(scoped.reply);
    EXPECT_EQ(scoped.reply->status, 403u);
    EXPECT_NE(scoped.reply->head.find("error=\"insufficient_scope\""), std::string::npos);

    // A refused token: 401 invalid_token, with the reason and without the token.
    auto expired = test_support::sign_token(key, "ES256",
                                            {{"iss", "https://as.example.test"},
                                             {"aud", "http://127.0.0.1:8080/mcp"},
                                             {"sub", "alice"},
                                             {"exp", now - 3600}});
    auto refused = settle(post(ping(6), {}, expired));
    ASSERT_TRUE(refused.reply);
    EXPECT_EQ(refused.reply->status, 401u);
    EXPECT_NE(refused.reply->head.find("Bearer error=\"invalid_token\""), std::string::npos);
    EXPECT_NE(refused.reply->body.find("expired"), std::string::npos) << refused.reply->body;
    EXPECT_EQ(refused.reply->body.find(expired.substr(0, expired.find('.'))), std::string::npos);
}

// /metrics and /admin/reload are the operator's: an OAuth access token (an end user's) gets
// 403 there unless it has auth.admin_scope (then the step-up challenge names it); the
// server's own static tokens reach them, a profile's never.
TEST_F(HttpEndpointTest, OperatorEndpointsNeedTheAdminScopeOrAStaticToken) {
    auto key = test_support::make_ec_key("k1");
    auto jwks = auth::parse_jwks(test_support::jwks_text(Json::array({test_support::public_jwk(key, "ES256")})));
    int reloads = 0;
    bool start_next = true;
    auto make = [&](const std::string& admin_scope) {
        HttpOptions options;
        options.bearer_tokens = {"static-token"};
        options.oauth.issuer = "https://as.example.test";
        options.oauth.resource = "http://127.0.0.1:8080/mcp";
        options.oauth.required_scopes = {"mcp:tools"};
        options.oauth.admin_scope = admin_scope;
        options.oauth.authenticator = std::make_shared<auth::TokenAuthenticator>(
            auth::AuthenticatorOptions{
                .verifier = {.issuer = options.oauth.issuer, .audiences = {options.oauth.resource}}},
            std::make_shared<auth::StaticKeySource>(jwks));
        options.reload = [&]() {
            ++reloads;
            return AdminReload{.started = start_next, .body = R"({"reloading":["shop"]})", .retry_after = 3s};
        };
        make_endpoint(options);
    };
    auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    auto token_for = [&](const std::string& sub, const std::string& scope) {
        return test_support::sign_token(key, "ES256",
                                        {{"iss", "https://as.example.test"},
                                         {"aud", "http://127.0.0.1:8080/mcp"},
                                         {"sub", sub},
                                         {"exp", now + 300},
                                         {"scope", scope}});
    };
    auto ask = [&](const std::string& target, HttpMethod method, const std::string& token) {
        auto h = headers({}, token);
        FakeRequest req(method, "", h);
        req.target_ = target;
        auto answer = settle(endpoint->answer(req));
        exec.run();
        return answer;
    };

    // No admin scope configured: an end user's token never reaches them.
    make("");
    const auto user = token_for("alice", "mcp:tools");
    for (auto [target, method] : {std::pair{"/metrics", HttpMethod::get}, std::pair{"/admin/reload", HttpMethod::post}}) {
        auto refused = ask(target, method, user);
        ASSERT_TRUE(refused.reply) << target;
        EXPECT_EQ(refused.reply->status, 403u) << target;
        EXPECT_NE(refused.reply->body.find("server's own bearer tokens"), std::string::npos) << refused.reply->body;
        EXPECT_EQ(ask(target, method, "static-token").reply->status, method == HttpMethod::get ? 200u : 202u) << target;
    }
    EXPECT_EQ(reloads, 1);
    // The token still serves MCP.
    EXPECT_EQ(reply_of(settle(post(ping(1), {}, user))).status, 400u);  // verified: a ping without a session

    // With one: a token without it gets the step-up challenge naming it; one with it passes.
    make("toolport:admin");
    reloads = 0;
    for (auto [target, method] : {std::pair{"/metrics", HttpMethod::get}, std::pair{"/admin/reload", HttpMethod::post}}) {
        auto refused = ask(target, method, user);
        ASSERT_TRUE(refused.reply) << target;
        EXPECT_EQ(refused.reply->status, 403u) << target;
        EXPECT_NE(refused.reply->head.find("error=\"insufficient_scope\""), std::string::npos) << refused.reply->head;
        EXPECT_NE(refused.reply->head.find("scope=\"mcp:tools toolport:admin\""), std::string::npos)
            << refused.reply->head;
        auto operator_token = token_for("ops", "mcp:tools toolport:admin");
        EXPECT_EQ(ask(target, method, operator_token).reply->status, method == HttpMethod::get ? 200u : 202u) << target;
    }
    EXPECT_EQ(reloads, 1);

    // A reload asked too soon after the last is answered 200 with that one's report and
    // Retry-After, not 202.
    start_next = false;
    auto coalesced = ask("/admin/reload", HttpMethod::post, "static-token");
    ASSERT_TRUE(coalesced.reply);
    EXPECT_EQ(coalesced.reply->status, 200u);
    EXPECT_NE(coalesced.reply->head.find("Retry-After: 3"), std::string::npos) << coalesced.reply->head;
    EXPECT_EQ(coalesced.reply->body, R"({"reloading":["shop"]})");
}
