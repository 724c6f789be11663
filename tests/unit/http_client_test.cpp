// The downstream HTTP client against real servers on loopback: TLS with a CA the test
// generates, a CONNECT proxy, gzip bodies, redirects, pooling, resets, retries, deadlines
// and cancellation, each checked from the client's and the server's side.
#include <cstdlib>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "async/cancel_token.hpp"
#include "client/client_errors.hpp"
#include "http_client/body_decoder.hpp"
#include "http_client/http_client.hpp"
#include "http_client/proxy.hpp"
#include "http_client/retry_policy.hpp"
#include "http_client/url.hpp"
#include "http_test_servers.hpp"
#include "drive_on_loop.hpp"

using namespace toolport;
using namespace toolport::http_client;
using namespace toolport::test_support;
using namespace std::chrono_literals;

namespace {

ScriptedReply ok(std::string body = "hello") {
    ScriptedReply r;
    r.body = std::move(body);
    r.headers = {{"Content-Type", "text/plain"}};
    return r;
}

class HttpClientTest : public ::testing::Test {
protected:
    ClientOptions no_proxy() {
        ClientOptions o;
        o.proxy = ProxySettings{};
        return o;
    }

    // Runs one call to the end on this test's event loop.
    Response run(HttpClient& client, Request request, CallOptions options = {}) {
        return drive(client.fetch(std::move(request), std::move(options)));
    }

    // Runs any task of the client to the end on this test's event loop.
    template <typename T>
    T drive(Task<T> task) {
        return test_support::drive_on(io, std::move(task));
    }

    template <typename Error>
    Error failure(HttpClient& client, Request request, CallOptions options = {}) {
        try {
            run(client, std::move(request), std::move(options));
        } catch (const Error& e) {
            return e;
        }
        ADD_FAILURE() << "expected the call to fail";
        throw std::runtime_error("no failure");
    }

    boost::asio::io_context io;
    AsioExecutor executor{io};
};

}  // namespace

// ---- TLS -------------------------------------------------------------------------------

TEST_F(HttpClientTest, HttpsWithATrustedCaConnects) {
    TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    ScriptedServer server([](const SeenRequest&) { return ok("secure"); }, &leaf);
    auto options = no_proxy();
    options.ca_file = ca.write_cert_file("trusted_ca.pem");
    HttpClient client(executor, options);
    auto r = run(client, {.url = "https://localhost:" + std::to_string(server.port()) + "/x"});
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.body, "secure");
    // By IP address too (the certificate names 127.0.0.1).
    EXPECT_EQ(run(client, {.url = server.url("/y")}).body, "secure");
}

TEST_F(HttpClientTest, SslCertFileIsHonouredLikeOtherOpenSslPrograms) {
    TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    ScriptedServer server([](const SeenRequest&) { return ok("via env"); }, &leaf);
    const char* before = std::getenv("SSL_CERT_FILE");
    std::string saved = before ? before : "";
    ::setenv("SSL_CERT_FILE", ca.write_cert_file("env_ca.pem").c_str(), 1);
    HttpClient client(executor, no_proxy());
    if (before) ::setenv("SSL_CERT_FILE", saved.c_str(), 1);
    else ::unsetenv("SSL_CERT_FILE");
    EXPECT_EQ(run(client, {.url = "https://localhost:" + std::to_string(server.port()) + "/"}).body, "via env");
}

TEST_F(HttpClientTest, WrongNameExpiredAndUntrustedCertificatesAreRefused) {
    TestCa ca;
    TestCa stranger("Some Other CA");
    auto options = no_proxy();
    options.ca_file = ca.write_cert_file("ca_for_refusals.pem");
    HttpClient client(executor, options);

    auto other_name = ca.leaf({"other.example"});
    {
        ScriptedServer server([](const SeenRequest&) { return ok(); }, &other_name);
        auto e = failure<HttpError>(client, {.url = "https://localhost:" + std::to_string(server.port()) + "/"});
        EXPECT_EQ(e.kind, HttpError::Kind::tls);
        EXPECT_NE(std::string(e.what()).find("TLS handshake with https://localhost"), std::string::npos) << e.what();
        EXPECT_TRUE(server.requests().empty());
    }
    auto expired = ca.leaf({"localhost"}, -2);
    {
        ScriptedServer server([](const SeenRequest&) { return ok(); }, &expired);
        auto e = failure<HttpError>(client, {.url = "https://localhost:" + std::to_string(server.port()) + "/"});
        EXPECT_EQ(e.kind, HttpError::Kind::tls);
        EXPECT_NE(std::string(e.what()).find("certificate has expired"), std::string::npos) << e.what();
    }
    auto untrusted = stranger.leaf({"localhost"});
    {
        ScriptedServer server([](const SeenRequest&) { return ok(); }, &untrusted);
        auto e = failure<HttpError>(client, {.url = "https://localhost:" + std::to_string(server.port()) + "/"});
        EXPECT_EQ(e.kind, HttpError::Kind::tls);
        EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos) << e.what();
        EXPECT_TRUE(server.requests().empty());

        auto insecure = no_proxy();
        insecure.insecure_skip_verify = true;
        HttpClient careless(executor, insecure);
        EXPECT_EQ(run(careless, {.url = "https://localhost:" + std::to_string(server.port()) + "/"}).status, 200u);
    }
}

TEST_F(HttpClientTest, ABadCaFileIsRefusedUpFront) {
    auto options = no_proxy();
    options.ca_file = "/nonexistent/ca.pem";
    EXPECT_THROW(HttpClient(executor, options), std::invalid_argument);
}

// ---- proxies ---------------------------------------------------------------------------

TEST_F(HttpClientTest, HttpsGoesThroughAConnectTunnelUnlessNoProxySaysOtherwise) {
    TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    ScriptedServer server([](const SeenRequest&) { return ok("tunnelled"); }, &leaf);
    ConnectProxy proxy;
    auto options = no_proxy();
    options.ca_file = ca.write_cert_file("proxy_ca.pem");
    options.proxy.https_proxy = ProxySettings::parse("http://127.0.0.1:" + std::to_string(proxy.port()));
    const std::string url = "https://localhost:" + std::to_string(server.port()) + "/";
    {
        HttpClient client(executor, options);
        EXPECT_EQ(run(client, {.url = url}).body, "tunnelled");
        ASSERT_EQ(proxy.connect_targets().size(), 1u);
        EXPECT_EQ(proxy.connect_targets()[0], "localhost:" + std::to_string(server.port()));
    }
    options.proxy.no_proxy = {"localhost"};
    HttpClient direct(executor, options);
    EXPECT_EQ(run(direct, {.url = url}).body, "tunnelled");
    EXPECT_EQ(proxy.connect_targets().size(), 1u);  // not through the proxy this time
}

TEST(HttpProxySettings, ParsesProxyUrlsAndMatchesNoProxyLikeCurl) {
    auto p = ProxySettings::parse("http://user:p%40ss@proxy.corp:3128");
    EXPECT_EQ(p.host, "proxy.corp");
    EXPECT_EQ(p.port, 3128);
    EXPECT_EQ(p.authorization, "Basic dXNlcjpwQHNz");  // user:p@ss
    EXPECT_EQ(ProxySettings::parse("proxy.corp").port, 80);
    EXPECT_THROW(ProxySettings::parse("socks5://proxy:1080"), std::invalid_argument);
    EXPECT_THROW(ProxySettings::parse("http://proxy:99999"), std::invalid_argument);

    ProxySettings s;
    s.https_proxy = ProxySettings::parse("http://proxy:3128");
    s.no_proxy = {".internal.example", "api.example.com", "10.0.0.1", "localhost:8080"};
    EXPECT_TRUE(s.bypasses("svc.internal.example", 443));
    EXPECT_TRUE(s.bypasses("internal.example", 443));
    EXPECT_FALSE(s.bypasses("notinternal.example", 443));
    EXPECT_TRUE(s.bypasses("API.example.com", 443));
    EXPECT_TRUE(s.bypasses("sub.api.example.com", 443));
    EXPECT_FALSE(s.bypasses("example.com", 443));
    EXPECT_TRUE(s.bypasses("10.0.0.1", 80));
    EXPECT_TRUE(s.bypasses("localhost", 8080));
    EXPECT_FALSE(s.bypasses("localhost", 9090));
    EXPECT_EQ(s.proxy_for(true, "tango.makegov.com", 443), &*s.https_proxy);
    EXPECT_EQ(s.proxy_for(false, "tango.makegov.com", 80), nullptr);  // no HTTP_PROXY
    s.no_proxy = {"*"};
    EXPECT_EQ(s.proxy_for(true, "tango.makegov.com", 443), nullptr);
}

// ---- bodies ----------------------------------------------------------------------------

TEST_F(HttpClientTest, GzipAndDeflateBodiesAreDecoded) {
    const std::string text(50000, 'z');
    ScriptedServer server([&](const SeenRequest& r) {
        ScriptedReply reply;
        if (r.target == "/gzip") {
            reply.body = gzip(text);
            reply.headers = {{"Content-Encoding", "gzip"}};
        } else {
            reply.body = zlib_deflate(text);
            reply.headers = {{"Content-Encoding", "deflate"}};
            reply.chunked = true;
        }
        return reply;
    });
    HttpClient client(executor, no_proxy());
    EXPECT_EQ(run(client, {.url = server.url("/gzip")}).body, text);
    EXPECT_EQ(run(client, {.url = server.url("/deflate")}).body, text);
    EXPECT_EQ(server.requests()[0].header("Accept-Encoding"), "gzip, deflate");
}

TEST_F(HttpClientTest, TheSizeCapStopsAGzipBombAndAnAnnouncedLargeBody) {
    const std::string bomb = gzip(std::string(10 << 20, '\0'));  // 10 MiB of zeros, ~10 kB compressed
    ScriptedServer server([&](const SeenRequest& r) {
        ScriptedReply reply;
        if (r.target == "/bomb") {
            reply.body = bomb;
            reply.headers = {{"Content-Encoding", "gzip"}};
        } else {
            reply.body = std::string(2 << 20, 'x');
        }
        return reply;
    });
    HttpClient client(executor, no_proxy());
    auto e = failure<client::ResponseTooLarge>(client, {.url = server.url("/bomb")}, {.max_response_bytes = 1 << 20});
    EXPECT_TRUE(e.read_so_far);
    EXPECT_LT(bomb.size(), 1u << 20);  // the compressed bytes were within the cap
    auto announced = failure<client::ResponseTooLarge>(client, {.url = server.url("/big")},
                                                       {.max_response_bytes = 1 << 20});
    EXPECT_FALSE(announced.read_so_far);
    EXPECT_EQ(announced.size, 2u << 20);
}

TEST(HttpBodyDecoder, CorruptAndTruncatedStreamsAreErrors) {
    std::string out;
    BodyDecoder corrupt("gzip", 1 << 20);
    EXPECT_THROW(corrupt.feed("definitely not gzip", out), DecodeError);
    auto full = test_support::gzip(std::string(1000, 'a'));
    BodyDecoder truncated("gzip", 1 << 20);
    EXPECT_TRUE(truncated.feed(std::string_view(full).substr(0, full.size() / 2), out));
    EXPECT_THROW(truncated.finish(), DecodeError);
    EXPECT_THROW(BodyDecoder("br", 10), DecodeError);
    BodyDecoder identity("", 4);
    std::string plain;
    EXPECT_TRUE(identity.feed("abcd", plain));
    EXPECT_FALSE(identity.feed("e", plain));
}

// ---- redirects -------------------------------------------------------------------------

TEST_F(HttpClientTest, RedirectsStayOnTheRequestsHost) {
    ScriptedServer elsewhere([](const SeenRequest&) { return ok("elsewhere"); });
    ScriptedServer server([&](const SeenRequest& r) {
        ScriptedReply reply;
        if (r.target == "/old") {
            reply.status = 301;
            reply.headers = {{"Location", "/new?x=1"}};
        } else if (r.target == "/away") {
            reply.status = 302;
            reply.headers = {{"Location", elsewhere.url("/stolen")}};
        } else {
            reply = ok("moved here: " + r.target);
        }
        return reply;
    });
    HttpClient client(executor, no_proxy());
    auto r = run(client, {.url = server.url("/old")});
    EXPECT_EQ(r.body, "moved here: /new?x=1");
    EXPECT_EQ(r.attempts, 2);
    auto e = failure<HttpError>(client, {.url = server.url("/away")});
    EXPECT_EQ(e.kind, HttpError::Kind::redirect_refused);
    EXPECT_TRUE(elsewhere.requests().empty());
}

TEST(DownstreamUrl, ParsesResolvesAndNeverDisplaysTheQuery) {
    auto u = parse_url("HTTPS://Tango.MakeGov.com/api/contracts/?api_key=secret&limit=1");
    EXPECT_TRUE(u.https);
    EXPECT_EQ(u.host, "tango.makegov.com");
    EXPECT_EQ(u.port, 443);
    EXPECT_EQ(u.target, "/api/contracts/?api_key=secret&limit=1");
    EXPECT_EQ(u.display(), "https://tango.makegov.com/api/contracts/");
    EXPECT_EQ(parse_url("http://[::1]:8080").authority(), "[::1]:8080");
    EXPECT_THROW(parse_url("ftp://x"), std::invalid_argument);
    EXPECT_THROW(parse_url("http://user:pw@host/"), std::invalid_argument);
    EXPECT_THROW(parse_url("http://host:0/"), std::invalid_argument);
    EXPECT_THROW(parse_url("http://ho st/"), std::invalid_argument);
    EXPECT_THROW(parse_url("http://host/\r\nX: y"), std::invalid_argument);
    EXPECT_EQ(resolve_location(u, "/next/")->target, "/next/");
    EXPECT_EQ(resolve_location(u, "page2")->target, "/api/contracts/page2");
    EXPECT_EQ(resolve_location(u, "//evil.example/x")->host, "evil.example");
    EXPECT_FALSE(resolve_location(u, "javascript:alert(1)"));
}

// ---- pooling, resets, retries ----------------------------------------------------------

TEST_F(HttpClientTest, SequentialRequestsReuseOneConnection) {
    ScriptedServer server([](const SeenRequest&) { return ok(); });
    HttpClient client(executor, no_proxy());
    for (int i = 0; i < 20; ++i) EXPECT_EQ(run(client, {.url = server.url("/n")}).status, 200u);
    EXPECT_EQ(server.connections(), 1);
    EXPECT_EQ(client.stats().connections_opened, 1u);
    EXPECT_EQ(client.stats().connections_reused, 19u);
}

TEST_F(HttpClientTest, TheHeadHoldsTheStatusPhraseAndTheFieldsInTheirOrderWithoutTrailers) {
    // Written byte for byte: no reason phrase, a field repeated around another, a trailer.
    const std::string answer =
        "HTTP/1.1 200 \r\nX-A: 1\r\nSet-Cookie: a=1\r\nX-B: 2\r\nset-cookie: b=2\r\n"
        "Transfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\nX-Trailer: t\r\n\r\n";
    namespace net = boost::asio;
    net::io_context server_io;
    net::ip::tcp::acceptor acceptor(server_io, {net::ip::make_address("127.0.0.1"), 0});
    const std::string url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/";
    std::thread server([&] {
        net::ip::tcp::socket socket(server_io);
        boost::system::error_code ec;
        acceptor.accept(socket, ec);
        net::streambuf request;
        for (int i = 0; i < 2 && !ec; ++i) {
            net::read_until(socket, request, "\r\n\r\n", ec);
            request.consume(request.size());
            if (!ec) net::write(socket, net::buffer(answer), ec);
        }
    });
    // The fields as the server sent them, except that a repeated one follows the last of
    // its name (as Beast's field container kept them); the trailer is not in the head.
    const Headers expected = {{"X-A", "1"},
                              {"Set-Cookie", "a=1"},
                              {"set-cookie", "b=2"},
                              {"X-B", "2"},
                              {"Transfer-Encoding", "chunked"}};
    HttpClient client(executor, no_proxy());
    auto response = run(client, {.url = url});
    EXPECT_EQ(response.status, 200u);
    EXPECT_EQ(response.reason, "OK") << "the status's standard phrase when the server sent none";
    EXPECT_EQ(response.headers, expected);
    EXPECT_EQ(response.header("SET-COOKIE"), "a=1") << "the first value";
    EXPECT_EQ(response.body, "ok");
    auto stream = drive(client.open({.url = url}));
    EXPECT_EQ(stream->head().reason, "OK");
    EXPECT_EQ(stream->head().headers, expected);
    EXPECT_EQ(drive(stream->read_all(100)), "ok");
    EXPECT_EQ(client.stats().connections_reused, 1u);
    server.join();
}

TEST_F(HttpClientTest, PostsOfEverySizeArriveWholeWithTheirOwnLengthOnOneConnection) {
    // The request line and fields are kept from one request to the next like it; only
    // Content-Length differs, and each request must carry its own.
    ScriptedServer server([](const SeenRequest& r) { return ok(std::to_string(r.body.size())); });
    HttpClient client(executor, no_proxy());
    std::string big(900000, 'b');
    for (std::size_t i = 0; i < big.size(); i += 997) big[i] = static_cast<char>('a' + i % 26);
    const std::vector<std::string> bodies = {big, "", "small", big.substr(0, 70000), "x"};
    for (const auto& body : bodies) {
        auto response = run(client, {.method = "POST",
                                     .url = server.url("/post"),
                                     .headers = {{"Content-Type", "text/plain"}},
                                     .body = body});
        EXPECT_EQ(response.body, std::to_string(body.size()));
    }
    const auto seen = server.requests();
    ASSERT_EQ(seen.size(), bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        EXPECT_EQ(seen[i].body, bodies[i]) << i;
        EXPECT_EQ(seen[i].header("Content-Length"), std::to_string(bodies[i].size())) << i;
        EXPECT_EQ(seen[i].header("Content-Type"), "text/plain") << i;
        EXPECT_EQ(seen[i].target, "/post") << i;
    }
    EXPECT_EQ(server.connections(), 1);
}

TEST_F(HttpClientTest, ABodyTheSocketCannotTakeAtOnceIsWrittenWhole) {
    // The server reads nothing for a while: the socket takes part of an 8 MB body at once,
    // the client writes the rest as the server reads it.
    namespace net = boost::asio;
    net::io_context server_io;
    net::ip::tcp::acceptor acceptor(server_io, {net::ip::make_address("127.0.0.1"), 0});
    const std::string url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port()) + "/big";
    std::string received;
    std::thread server([&] {
        net::ip::tcp::socket socket(server_io);
        boost::system::error_code ec;
        acceptor.accept(socket, ec);
        std::this_thread::sleep_for(200ms);
        net::streambuf in;
        const std::size_t head = net::read_until(socket, in, "\r\n\r\n", ec);
        if (ec) return;
        const std::string text(net::buffers_begin(in.data()), net::buffers_begin(in.data()) + head);
        in.consume(head);
        const auto at = text.find("Content-Length: ");
        const std::size_t length = at == std::string::npos ? 0 : std::stoul(text.substr(at + 16));
        if (in.size() < length) net::read(socket, in, net::transfer_exactly(length - in.size()), ec);
        received.assign(net::buffers_begin(in.data()), net::buffers_end(in.data()));
        const std::string size = std::to_string(received.size());
        net::write(socket,
                   net::buffer("HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(size.size()) + "\r\n\r\n" + size),
                   ec);
    });
    std::string body(8u << 20, 'b');
    for (std::size_t i = 0; i < body.size(); i += 4093) body[i] = static_cast<char>('a' + i % 26);
    HttpClient client(executor, no_proxy());
    auto response = run(client, {.method = "POST", .url = url, .body = body});
    server.join();
    EXPECT_EQ(response.body, std::to_string(body.size()));
    EXPECT_TRUE(received == body) << "the body arrived whole and in order";
}

TEST_F(HttpClientTest, AConnectionTheServerClosedIsReplacedTransparently) {
    ScriptedServer server([](const SeenRequest&) {
        auto r = ok();
        r.close = true;  // every answer closes its connection
        return r;
    });
    HttpClient client(executor, no_proxy());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(run(client, {.url = server.url("/")}).status, 200u);
    EXPECT_EQ(server.connections(), 3);
}

TEST_F(HttpClientTest, AResetMidBodyIsRetriedForGetButNotForPost) {
    int calls = 0;
    ScriptedServer server([&](const SeenRequest&) {
        auto r = ok(std::string(5000, 'b'));
        if (++calls == 1) r.reset_after_bytes = 100;
        return r;
    });
    HttpClient client(executor, no_proxy());
    auto r = run(client, {.url = server.url("/get")});
    EXPECT_EQ(r.body.size(), 5000u);
    EXPECT_EQ(r.attempts, 2);
    EXPECT_EQ(server.requests().size(), 2u);

    calls = 0;
    auto e = failure<HttpError>(client, {.method = "POST", .url = server.url("/post"), .body = "{}"});
    EXPECT_EQ(e.kind, HttpError::Kind::connection_reset);
    EXPECT_EQ(server.requests().size(), 3u);  // the POST went once
}

TEST_F(HttpClientTest, RetryAfterIsHonouredAndEveryAttemptCounts) {
    int calls = 0;
    ScriptedServer server([&](const SeenRequest&) {
        if (++calls == 1) {
            ScriptedReply busy;
            busy.status = 503;
            busy.headers = {{"Retry-After", "1"}};
            return busy;
        }
        return ok("recovered");
    });
    HttpClient client(executor, no_proxy());
    int paced = 0;
    const auto started = std::chrono::steady_clock::now();
    auto r = run(client, {.url = server.url("/")}, {.before_attempt = [&paced]() -> Task<void> {
                     ++paced;
                     co_return;
                 }});
    EXPECT_EQ(r.body, "recovered");
    EXPECT_EQ(r.attempts, 2);
    EXPECT_EQ(paced, 2);
    EXPECT_GE(std::chrono::steady_clock::now() - started, 1s);

    // A deadline sooner than Retry-After: the 503 is the answer, at once.
    calls = 0;
    auto hurried = run(client, {.url = server.url("/")}, {.deadline = std::chrono::steady_clock::now() + 500ms});
    EXPECT_EQ(hurried.status, 503u);
    EXPECT_EQ(hurried.attempts, 1);
}

TEST_F(HttpClientTest, TheDeadlineBoundsASlowAnswer) {
    ScriptedServer server([](const SeenRequest&) {
        auto r = ok();
        r.delay_ms = 2000;
        return r;
    });
    HttpClient client(executor, no_proxy());
    const auto started = std::chrono::steady_clock::now();
    auto e = failure<HttpError>(client, {.url = server.url("/slow")},
                                {.deadline = std::chrono::steady_clock::now() + 200ms, .max_attempts = 1});
    EXPECT_EQ(e.kind, HttpError::Kind::timeout);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
}

TEST_F(HttpClientTest, CancellationEndsTheCallAndClosesTheConnection) {
    ScriptedServer server([](const SeenRequest&) {
        auto r = ok();
        r.delay_ms = 3000;
        return r;
    });
    HttpClient client(executor, no_proxy());
    CancelToken token;
    auto cancel_later = executor.schedule_after(100ms, [&token] { token.cancel("the client gave up"); });
    const auto started = std::chrono::steady_clock::now();
    EXPECT_THROW(run(client, {.url = server.url("/slow")}, {.cancel = &token}), OperationCancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

TEST_F(HttpClientTest, HeaderInjectionAndBadUrlsAreRefusedBeforeAnythingIsSent) {
    ScriptedServer server([](const SeenRequest&) { return ok(); });
    HttpClient client(executor, no_proxy());
    EXPECT_EQ(failure<HttpError>(client, {.url = server.url("/"), .headers = {{"X-Key", "a\r\nInjected: 1"}}}).kind,
              HttpError::Kind::invalid_request);
    EXPECT_EQ(failure<HttpError>(client, {.url = server.url("/"), .headers = {{"Bad Name", "v"}}}).kind,
              HttpError::Kind::invalid_request);
    EXPECT_EQ(failure<HttpError>(client, {.url = "file:///etc/passwd"}).kind, HttpError::Kind::invalid_request);
    EXPECT_TRUE(server.requests().empty());
    auto refused = failure<HttpError>(client, {.url = "http://127.0.0.1:1/"});
    EXPECT_EQ(refused.kind, HttpError::Kind::connect);
}

TEST_F(HttpClientTest, ARequestLikeTheLastIsCheckedAgainWhenItsMethodOrFieldsDiffer) {
    // The client remembers the last method and fields that passed (checked_url): the same
    // URL with other fields, or a refused request sent again, is checked in full.
    ScriptedServer server([](const SeenRequest&) { return ok(); });
    HttpClient client(executor, no_proxy());
    const Request good{.url = server.url("/"), .headers = {{"X-Key", "value"}}};
    EXPECT_EQ(run(client, good).status, 200u);
    EXPECT_EQ(run(client, good).status, 200u);
    Request injected = good;
    injected.headers[0].second = "value\r\nInjected: 1";
    EXPECT_EQ(failure<HttpError>(client, injected).kind, HttpError::Kind::invalid_request);
    EXPECT_EQ(failure<HttpError>(client, injected).kind, HttpError::Kind::invalid_request);
    Request bad_method = good;
    bad_method.method = "GET /x";
    EXPECT_EQ(failure<HttpError>(client, bad_method).kind, HttpError::Kind::invalid_request);
    Request reserved = good;
    reserved.headers.emplace_back("Content-Length", "5");
    EXPECT_EQ(failure<HttpError>(client, reserved).kind, HttpError::Kind::invalid_request);
    EXPECT_EQ(run(client, good).status, 200u);
    EXPECT_EQ(server.requests().size(), 3u);
}

TEST_F(HttpClientTest, ConnectionsPerOriginAreCappedAndTheRestWait) {
    ScriptedServer server([](const SeenRequest&) {
        auto r = ok();
        r.delay_ms = 100;
        return r;
    });
    ClientOptions options = no_proxy();
    options.max_connections_per_origin = 2;
    HttpClient client(executor, options);
    // Six calls at once: two connections, each serving three calls in turn.
    int done = 0;
    for (int i = 0; i < 6; ++i) {
        spawn(client.fetch({.url = server.url("/busy")}), [&](std::optional<Response> r, std::exception_ptr e) {
            EXPECT_FALSE(e);
            if (r) EXPECT_EQ(r->status, 200u);
            ++done;
        });
    }
    io.restart();
    while (done < 6 && io.run_one_for(10s) > 0) {}
    EXPECT_EQ(done, 6);
    EXPECT_EQ(server.connections(), 2);
    EXPECT_EQ(client.stats().connections_opened, 2u);
    EXPECT_EQ(client.stats().connections_reused, 4u);

    // A call that cannot get a connection before its deadline says why.
    std::vector<std::unique_ptr<ResponseStream>> held;
    held.push_back(drive(client.open({.url = server.url("/held")})));
    held.push_back(drive(client.open({.url = server.url("/held")})));
    auto e = failure<HttpError>(client, {.url = server.url("/late")},
                                {.deadline = std::chrono::steady_clock::now() + 150ms, .max_attempts = 1});
    EXPECT_EQ(e.kind, HttpError::Kind::timeout);
    EXPECT_NE(std::string(e.what()).find("connections"), std::string::npos) << e.what();
    held.clear();  // dropped before their ends: closed, and their places freed
    EXPECT_EQ(run(client, {.url = server.url("/after")}).status, 200u);
}

// ---- streams (open) ----------------------------------------------------------------

TEST_F(HttpClientTest, AStreamedBodyArrivesInPiecesAndItsConnectionReturnsToThePool) {
    const std::string big(100000, 'x');
    ScriptedServer server([&](const SeenRequest& r) {
        auto reply = ok(r.target == "/gz" ? gzip(big) : big);
        reply.chunked = true;
        if (r.target == "/gz") reply.headers.emplace_back("Content-Encoding", "gzip");
        return reply;
    });
    HttpClient client(executor, no_proxy());
    for (const char* path : {"/plain", "/gz"}) {
        auto stream = drive(client.open({.url = server.url(path)}));
        EXPECT_EQ(stream->head().status, 200u);
        EXPECT_EQ(stream->head().header("content-type"), "text/plain");
        EXPECT_FALSE(stream->content_length()) << "chunked";
        std::string body;
        int pieces = 0;
        while (auto piece = drive(stream->read_some())) {
            EXPECT_FALSE(piece->empty());
            body += *piece;
            ++pieces;
        }
        EXPECT_EQ(body, big) << path;
        if (std::string(path) == "/plain") EXPECT_GT(pieces, 1) << "read as it arrives, not all at once";
    }
    EXPECT_EQ(server.connections(), 1) << "both streams, read to their end, used one connection";
    EXPECT_EQ(run(client, {.url = server.url("/plain")}).body, big);
    EXPECT_EQ(server.connections(), 1);
}

TEST_F(HttpClientTest, AStreamDroppedBeforeItsEndClosesItsConnection) {
    ScriptedServer server([](const SeenRequest&) { return ok(std::string(200000, 'y')); });
    HttpClient client(executor, no_proxy());
    {
        auto stream = drive(client.open({.url = server.url("/")}));
        EXPECT_EQ(stream->content_length(), 200000u);
        EXPECT_TRUE(drive(stream->read_some()));
    }
    EXPECT_EQ(run(client, {.url = server.url("/")}).body.size(), 200000u);
    EXPECT_EQ(server.connections(), 2) << "the half-read connection was not reused";
}

TEST_F(HttpClientTest, StreamsAreCappedDeadlinedAndCancelled) {
    ScriptedServer server([](const SeenRequest& r) {
        auto reply = ok(std::string(5000, 'z'));
        if (r.target == "/slow") reply.delay_ms = 3000;
        return reply;
    });
    HttpClient client(executor, no_proxy());
    // read_all's limit, on the announced length.
    auto stream = drive(client.open({.url = server.url("/")}));
    EXPECT_THROW(drive(stream->read_all(1000)), client::ResponseTooLarge);
    EXPECT_EQ(drive(drive(client.open({.url = server.url("/")}))->read_all(5000)).size(), 5000u);

    // A deadline on the header.
    const auto started = std::chrono::steady_clock::now();
    try {
        drive(client.open({.url = server.url("/slow")}, {.deadline = std::chrono::steady_clock::now() + 200ms}));
        ADD_FAILURE() << "expected a timeout";
    } catch (const HttpError& e) {
        EXPECT_EQ(e.kind, HttpError::Kind::timeout);
    }
    EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);

    // The cancel token, while waiting for the header.
    CancelToken token;
    auto cancel_later = executor.schedule_after(100ms, [&token] { token.cancel("abandoned"); });
    EXPECT_THROW(drive(client.open({.url = server.url("/slow")}, {.cancel = &token})), OperationCancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 2500ms);
}

TEST_F(HttpClientTest, ABodyReadAheadIsHandedOutByTheReadsWithItsErrorAndCap) {
    int calls = 0;
    ScriptedServer server([&](const SeenRequest& r) {
        ++calls;
        if (r.target == "/gz") {
            auto reply = ok(gzip(std::string(3000, 'g')));
            reply.headers.emplace_back("Content-Encoding", "gzip");
            return reply;
        }
        auto reply = ok(std::string(5000, 'a'));
        if (r.target == "/cut") reply.reset_after_bytes = 1000;
        if (r.target == "/big") reply.body = std::string(20000, 'b');
        return reply;
    });
    HttpClient client(executor, no_proxy());
    const StreamOptions ahead{.read_ahead = 10000};

    // Read with the header, so its connection is free again before the body is asked for
    // (unread, it would hold it, and the second request would need a connection of its own).
    auto stream = drive(client.open({.url = server.url("/")}, ahead));
    auto second = drive(client.open({.url = server.url("/")}, ahead));
    EXPECT_EQ(server.connections(), 1) << "the body read ahead freed its connection";
    EXPECT_EQ(stream->content_length(), 5000u);
    EXPECT_EQ(drive(stream->read_all(5000)), std::string(5000, 'a'));
    // read_some: the whole body, then its end.
    stream = std::move(second);
    auto piece = drive(stream->read_some());
    ASSERT_TRUE(piece);
    EXPECT_EQ(piece->size(), 5000u);
    EXPECT_FALSE(drive(stream->read_some()));

    // The caller's cap still applies to the announced length.
    stream = drive(client.open({.url = server.url("/")}, ahead));
    EXPECT_THROW(drive(stream->read_all(1000)), client::ResponseTooLarge);

    // A body cut short: open() has the header; the reads get the error.
    stream = drive(client.open({.url = server.url("/cut")}, ahead));
    EXPECT_EQ(stream->head().status, 200u);
    try {
        drive(stream->read_all(5000));
        ADD_FAILURE() << "expected the cut body to fail";
    } catch (const HttpError& e) {
        EXPECT_EQ(e.kind, HttpError::Kind::connection_reset) << e.what();
    }
    stream = drive(client.open({.url = server.url("/cut")}, ahead));
    std::size_t handed_out = 0;
    try {
        while (auto part = drive(stream->read_some())) handed_out += part->size();
        ADD_FAILURE() << "expected the cut body to fail";
    } catch (const HttpError& e) {
        EXPECT_EQ(e.kind, HttpError::Kind::connection_reset) << e.what();
    }
    EXPECT_LE(handed_out, 1000u) << "the bytes that came, then the error";

    // Longer than read_ahead, or encoded: read as before, piece by piece.
    stream = drive(client.open({.url = server.url("/big")}, ahead));
    EXPECT_EQ(drive(stream->read_all(20000)).size(), 20000u);
    stream = drive(client.open({.url = server.url("/gz")}, ahead));
    EXPECT_EQ(drive(stream->read_all(3000)), std::string(3000, 'g'));
    EXPECT_EQ(calls, 7);
}

TEST_F(HttpClientTest, ReadAllStopsAGzipBombAtItsLimitWhileDecodingIt) {
    // 10 MiB of zeros arrive as ~10 kB of gzip, one read: the limit must stop the decoding
    // itself, not the assembled body after the whole piece was inflated into memory.
    const std::string bomb = gzip(std::string(10 << 20, '\0'));
    ScriptedServer server([&](const SeenRequest&) {
        ScriptedReply reply;
        reply.body = bomb;
        reply.headers = {{"Content-Encoding", "gzip"}};
        reply.chunked = true;  // no announced length: the size is learnt by reading
        return reply;
    });
    HttpClient client(executor, no_proxy());
    auto stream = drive(client.open({.url = server.url("/bomb")}));
    try {
        drive(stream->read_all(1 << 20));
        ADD_FAILURE() << "expected ResponseTooLarge";
    } catch (const client::ResponseTooLarge& e) {
        EXPECT_TRUE(e.read_so_far);
        EXPECT_EQ(e.limit, 1u << 20);
        EXPECT_LE(e.size, (1u << 20) + 16384) << "decoded past the limit before stopping";
        EXPECT_NE(std::string(e.what()).find("over 1048576 bytes"), std::string::npos) << e.what();
    }
}

TEST_F(HttpClientTest, ALimitedStreamStopsAtItsLimitPieceByPiece) {
    const std::string bomb = gzip(std::string(10 << 20, '\0'));
    ScriptedServer server([&](const SeenRequest& r) {
        ScriptedReply reply;
        reply.body = r.target == "/bomb" ? bomb : std::string(200000, 'x');
        if (r.target == "/bomb") reply.headers = {{"Content-Encoding", "gzip"}};
        reply.chunked = true;
        return reply;
    });
    HttpClient client(executor, no_proxy());
    for (const char* path : {"/plain", "/bomb"}) {
        auto stream = drive(client.open({.url = server.url(path)}));
        stream->limit(50000);
        std::size_t handed_out = 0;
        try {
            while (auto piece = drive(stream->read_some())) handed_out += piece->size();
            ADD_FAILURE() << path << ": expected ResponseTooLarge";
        } catch (const client::ResponseTooLarge& e) {
            EXPECT_EQ(e.limit, 50000u) << path;
        }
        EXPECT_LE(handed_out, 50000u) << path << ": more than the limit was handed out";
    }
    EXPECT_EQ(run(client, {.url = server.url("/plain")}).body.size(), 200000u) << "the client serves on";
}

TEST(HttpRetryPolicy, RetryAfterBackoffAndIdempotence) {
    const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
    EXPECT_EQ(parse_retry_after("120", now), std::chrono::milliseconds(120000));
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), std::chrono::milliseconds(10000));
    EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", now), std::chrono::milliseconds(0));
    EXPECT_FALSE(parse_retry_after("soon", now));
    EXPECT_FALSE(parse_retry_after("", now));
    EXPECT_EQ(backoff(2, 0.0), 50ms);
    EXPECT_EQ(backoff(3, 0.999), 199ms);
    EXPECT_EQ(backoff(30, 0.0), 2500ms);  // capped at 5 s, jitter in the upper half
    EXPECT_EQ(backoff(2, 0.0, 3s), 3s);
    EXPECT_TRUE(idempotent("GET"));
    EXPECT_FALSE(idempotent("POST"));
    EXPECT_TRUE(retryable_status(503));
    EXPECT_FALSE(retryable_status(500));
}
