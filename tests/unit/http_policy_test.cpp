// HTTP request checks: Origin/Host validation, bearer auth, Accept/Content-Type, session ids.
#include <gtest/gtest.h>

#include <string>

#include "transports/http_policy.hpp"

using namespace toolport;
using namespace toolport::http_policy;

// ---- loopback names -----------------------------------------------------------------------

TEST(HttpPolicy, IsLoopbackHost) {
    for (const char* h : {"localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "[::1]"}) {
        EXPECT_TRUE(is_loopback_host(h)) << h;
    }
    for (const char* h : {"", "example.com", "0.0.0.0", "10.0.0.1", "localhost.example", "[::2]", "128.0.0.1"}) {
        EXPECT_FALSE(is_loopback_host(h)) << h;
    }
}

// host[:port] and nothing else: an IPv6 literal in brackets, or URI host characters.
TEST(HttpPolicy, AuthorityHost) {
    const std::pair<const char*, const char*> good[] = {{"localhost", "localhost"},
                                                        {"localhost:8080", "localhost"},
                                                        {"127.0.0.1:1", "127.0.0.1"},
                                                        {"[::1]", "[::1]"},
                                                        {"[::1]:8080", "[::1]"},
                                                        {"[::ffff:127.0.0.1]:9", "[::ffff:127.0.0.1]"},
                                                        {"mcp.example.com", "mcp.example.com"},
                                                        {"localhost:", "localhost"}};
    for (const auto& [authority, host] : good) {
        auto parsed = authority_host(authority);
        ASSERT_TRUE(parsed.has_value()) << authority;
        EXPECT_EQ(*parsed, host) << authority;
    }
    for (const char* bad : {"", "[::1].evil.com", "[::1].evil.com:80", "[::1]evil", "[::1]:80:80", "[::1", "[]",
                            "[localhost]", "localhost@evil.com", "localhost:80@evil.com", "localhost/x", "localhost:8o",
                            "localhost:123456", "local host", ":8080", "a:b:c", "[::1]:80/", "localhost\t"}) {
        EXPECT_FALSE(authority_host(bad).has_value()) << bad;
    }
}

// ---- Origin ---------------------------------------------------------------------------------

TEST(HttpPolicy, OriginDefaultAllowsLoopbackOrigins) {
    HttpOptions o;
    for (const char* origin : {"http://localhost", "http://localhost:3000", "https://localhost:8443",
                               "http://127.0.0.1", "http://127.0.0.1:6274", "https://127.0.0.1:1", "http://[::1]",
                               "http://[::1]:8080", "HTTP://LocalHost:5173"}) {
        EXPECT_TRUE(origin_allowed(o, origin)) << origin;
    }
}

TEST(HttpPolicy, OriginAbsentIsAllowed) {
    HttpOptions o;
    EXPECT_TRUE(origin_allowed(o, ""));
    o.allowed_origins = {"https://only.example"};
    EXPECT_TRUE(origin_allowed(o, ""));
}

TEST(HttpPolicy, OriginDefaultRefusesOthers) {
    HttpOptions o;
    for (const char* origin : {"http://evil.example", "https://evil.example:443", "null", "file://", "ftp://localhost",
                               "localhost", "http://localhost.evil.com", "http://evil.com:127"}) {
        EXPECT_FALSE(origin_allowed(o, origin)) << origin;
    }
}

TEST(HttpPolicy, OriginDefaultRefusesLoopbackLookalikeDomain) {
    HttpOptions o;
    EXPECT_FALSE(origin_allowed(o, "http://127.0.0.1.evil.com"));
    EXPECT_FALSE(origin_allowed(o, "http://127.0.0.1.evil.com:8080"));
    EXPECT_FALSE(origin_allowed(o, "https://127.attacker.example"));
}

// An origin is scheme://host[:port]: one that only starts like a loopback literal is not one.
TEST(HttpPolicy, OriginDefaultRefusesWhatOnlyStartsLikeALoopbackLiteral) {
    HttpOptions o;
    for (const char* origin : {"http://[::1].evil.com", "http://[::1].evil.com:8080", "https://[::1]evil.com",
                               "http://[::1]:80.evil.com", "http://localhost@evil.com", "http://localhost:80@evil.com",
                               "http://127.0.0.1:80@evil.com", "http://localhost/evil", "http://[::1]:8080/x"}) {
        EXPECT_FALSE(origin_allowed(o, origin)) << origin;
    }
}

TEST(HttpPolicy, OriginExplicitAllowList) {
    HttpOptions o;
    o.allowed_origins = {"http://app.example:*", "https://exact.example", "https://Port.Example:8443"};
    // Wildcard port.
    EXPECT_TRUE(origin_allowed(o, "http://app.example"));
    EXPECT_TRUE(origin_allowed(o, "http://app.example:3000"));
    EXPECT_TRUE(origin_allowed(o, "HTTP://APP.EXAMPLE:1"));
    EXPECT_FALSE(origin_allowed(o, "https://app.example:3000"));  // scheme is part of the entry
    EXPECT_FALSE(origin_allowed(o, "http://app.example.evil.com"));
    EXPECT_FALSE(origin_allowed(o, "http://app.examplex:1"));
    EXPECT_FALSE(origin_allowed(o, "http://sub.app.example:1"));
    EXPECT_FALSE(origin_allowed(o, "http://app.example:1@evil.example"));  // a port, and only a port
    EXPECT_FALSE(origin_allowed(o, "http://app.example:"));
    // Exact entries.
    EXPECT_TRUE(origin_allowed(o, "https://exact.example"));
    EXPECT_FALSE(origin_allowed(o, "https://exact.example:8443"));
    EXPECT_FALSE(origin_allowed(o, "http://exact.example"));
    EXPECT_TRUE(origin_allowed(o, "https://port.example:8443"));
    EXPECT_FALSE(origin_allowed(o, "https://port.example"));
    // An explicit list replaces the loopback default.
    EXPECT_FALSE(origin_allowed(o, "http://localhost:3000"));
    EXPECT_FALSE(origin_allowed(o, "null"));
}

TEST(HttpPolicy, OriginStarAllowsEverything) {
    HttpOptions o;
    o.allowed_origins = {"*"};
    EXPECT_TRUE(origin_allowed(o, "http://evil.example"));
    EXPECT_TRUE(origin_allowed(o, "null"));
}

TEST(HttpPolicy, OriginLocalhostWildcardAsInReadme) {
    HttpOptions o;
    o.allowed_origins = {"http://localhost:*"};
    EXPECT_TRUE(origin_allowed(o, "http://localhost:6274"));
    EXPECT_FALSE(origin_allowed(o, "http://127.0.0.1:6274"));
}

// ---- Host -----------------------------------------------------------------------------------

TEST(HttpPolicy, HostDefaultOnLoopbackBind) {
    HttpOptions o;  // host 127.0.0.1
    ASSERT_EQ(o.host, "127.0.0.1");
    for (const char* h :
         {"localhost:8080", "localhost", "127.0.0.1", "127.0.0.1:8080", "[::1]:1", "[::1]", "LocalHost:9"}) {
        EXPECT_TRUE(host_allowed(o, h)) << h;
    }
    EXPECT_TRUE(host_allowed(o, ""));  // HTTP/1.0 without Host
    for (const char* h :
         {"evil.example:8080", "evil.example", "localhost.evil.example:8080", "10.0.0.1:8080", "[::2]:8080"}) {
        EXPECT_FALSE(host_allowed(o, h)) << h;
    }
}

TEST(HttpPolicy, HostDefaultRefusesLoopbackLookalikeDomain) {
    HttpOptions o;
    EXPECT_FALSE(host_allowed(o, "127.0.0.1.evil.com:8080"));
    EXPECT_FALSE(host_allowed(o, "127.0.0.1.evil.com"));
}

TEST(HttpPolicy, HostDefaultRefusesWhatOnlyStartsLikeALoopbackLiteral) {
    HttpOptions o;
    for (const char* h : {"[::1].evil.com", "[::1].evil.com:8080", "[::1]evil.com", "[::1]:8080.evil.com",
                          "localhost@evil.com", "127.0.0.1:80@evil.com", "localhost:80:80", "localhost/x"}) {
        EXPECT_FALSE(host_allowed(o, h)) << h;
    }
    o.host = "::1";
    EXPECT_FALSE(host_allowed(o, "[::1].evil.com:8080"));
}

TEST(HttpPolicy, HostDefaultOnOtherBindAllowsAnything) {
    HttpOptions o;
    o.host = "0.0.0.0";
    for (const char* h : {"evil.example:8080", "localhost:8080", "10.0.0.1", "", "anything"}) {
        EXPECT_TRUE(host_allowed(o, h)) << h;
    }
}

TEST(HttpPolicy, HostDefaultOnIpv6LoopbackBind) {
    HttpOptions o;
    o.host = "::1";
    EXPECT_TRUE(host_allowed(o, "[::1]:8080"));
    EXPECT_FALSE(host_allowed(o, "evil.example:8080"));
}

TEST(HttpPolicy, HostExplicitAllowList) {
    HttpOptions o;
    o.host = "0.0.0.0";
    o.allowed_hosts = {"mcp.example.com", "other.example:9000"};
    EXPECT_TRUE(host_allowed(o, "mcp.example.com"));
    EXPECT_TRUE(host_allowed(o, "mcp.example.com:8080"));  // bare name matches any port
    EXPECT_TRUE(host_allowed(o, "MCP.Example.COM:1"));
    EXPECT_TRUE(host_allowed(o, "other.example:9000"));
    EXPECT_FALSE(host_allowed(o, "other.example:9001"));
    EXPECT_FALSE(host_allowed(o, "evil.example"));
    EXPECT_FALSE(host_allowed(o, "localhost"));
    EXPECT_FALSE(host_allowed(o, ""));
}

// ---- public text (/health) --------------------------------------------------------------------

TEST(HttpPolicy, PublicTextKeepsNoCredentialsOfUrls) {
    EXPECT_EQ(public_text("connected (2025-11-25)"), "connected (2025-11-25)");
    EXPECT_EQ(
        public_text("reconnecting in 1.0 s: HTTP 401 from https://user:s3cret@api.example/mcp?api_key=k3y#x; "
                    "run: toolport login https://api.example/mcp?token=abc"),
        "reconnecting in 1.0 s: HTTP 401 from https://api.example/mcp; run: toolport login https://api.example/mcp");
    EXPECT_EQ(public_text("stale (the last read failed: http://[::1]:8080/openapi.yaml?key=1: HTTP 500)"),
              "stale (the last read failed: http://[::1]:8080/openapi.yaml HTTP 500)");
    EXPECT_EQ(public_text("unavailable: /home/alice/api.yaml cannot be read"),
              "unavailable: ~/api.yaml cannot be read");
    EXPECT_EQ(public_text("a\nb"), "a b");
}

// ---- Authorization ----------------------------------------------------------------------------

TEST(HttpPolicy, AuthorizedWithoutTokensIsAlwaysTrue) {
    HttpOptions o;
    EXPECT_TRUE(authorized(o, ""));
    EXPECT_TRUE(authorized(o, "Bearer anything"));
    EXPECT_TRUE(authorized(o, "Basic Zm9vOmJhcg=="));
}

TEST(HttpPolicy, AuthorizedChecksBearerTokens) {
    HttpOptions o;
    o.bearer_tokens = {"tok", "second-token"};
    EXPECT_TRUE(authorized(o, "Bearer tok"));
    EXPECT_TRUE(authorized(o, "bearer tok"));
    EXPECT_TRUE(authorized(o, "BEARER tok"));
    EXPECT_TRUE(authorized(o, "Bearer second-token"));
    EXPECT_TRUE(authorized(o, "Bearer   tok"));  // extra spaces before the token

    EXPECT_FALSE(authorized(o, ""));
    EXPECT_FALSE(authorized(o, "Bearer"));
    EXPECT_FALSE(authorized(o, "Bearer "));
    EXPECT_FALSE(authorized(o, "Bearer wrong"));
    EXPECT_FALSE(authorized(o, "Bearer TOK"));  // tokens are case-sensitive
    EXPECT_FALSE(authorized(o, "Bearer to"));   // prefix of a real token
    EXPECT_FALSE(authorized(o, "Bearer second"));
    EXPECT_FALSE(authorized(o, "Bearer tokx"));
    EXPECT_FALSE(authorized(o, "Bearer tok "));
    EXPECT_FALSE(authorized(o, "tok"));
    EXPECT_FALSE(authorized(o, "Basic dG9r"));
    EXPECT_FALSE(authorized(o, "Basic tok"));
    EXPECT_FALSE(authorized(o, "Bearertok"));
}

// ---- Accept / Content-Type --------------------------------------------------------------------

TEST(HttpPolicy, AcceptsMediaTypes) {
    const std::string both = "application/json, text/event-stream";
    EXPECT_TRUE(accepts(both, "application/json"));
    EXPECT_TRUE(accepts(both, "text/event-stream"));
    EXPECT_TRUE(accepts("application/json,text/event-stream", "text/event-stream"));
    EXPECT_TRUE(accepts("*/*", "application/json"));
    EXPECT_TRUE(accepts("*/*", "text/event-stream"));
    EXPECT_TRUE(accepts("text/*", "text/event-stream"));
    EXPECT_FALSE(accepts("text/*", "application/json"));
    EXPECT_TRUE(accepts("application/*", "application/json"));
    EXPECT_TRUE(accepts("application/json;q=0.9, text/event-stream;q=0.8", "application/json"));
    EXPECT_TRUE(accepts("application/json;q=0.9, text/event-stream;q=0.8", "text/event-stream"));
    EXPECT_TRUE(accepts("text/html, application/json ; charset=utf-8", "application/json"));
    EXPECT_TRUE(accepts("Application/JSON", "application/json"));
    EXPECT_TRUE(accepts("TEXT/*", "text/event-stream"));
    EXPECT_FALSE(accepts("application/json;Q=0", "application/json"));  // parameter names ignore case

    EXPECT_FALSE(accepts("", "application/json"));
    EXPECT_FALSE(accepts("application/json", "text/event-stream"));
    EXPECT_FALSE(accepts("text/event-stream", "application/json"));
    EXPECT_FALSE(accepts("text/html", "text/event-stream"));
    EXPECT_FALSE(accepts("application/jsonx", "application/json"));
    EXPECT_FALSE(accepts("application/json-seq", "application/json"));
    EXPECT_FALSE(accepts("te/*", "text/event-stream"));
}

TEST(HttpPolicy, AcceptWithQZeroMeansNotAcceptable) {
    // RFC 9110 §12.4.2: "a value of 0 means not acceptable".
    EXPECT_FALSE(accepts("application/json;q=0", "application/json"));
    EXPECT_FALSE(accepts("text/event-stream; q=0.0, application/json", "text/event-stream"));
}

TEST(HttpPolicy, JsonContentType) {
    EXPECT_TRUE(is_json_content_type("application/json"));
    EXPECT_TRUE(is_json_content_type("application/json; charset=utf-8"));
    EXPECT_TRUE(is_json_content_type("application/json;charset=UTF-8"));
    EXPECT_TRUE(is_json_content_type("Application/JSON"));
    EXPECT_TRUE(is_json_content_type("application/json ; charset=utf-8"));
    EXPECT_FALSE(is_json_content_type("text/json"));
    EXPECT_FALSE(is_json_content_type(""));
    EXPECT_FALSE(is_json_content_type("application/jsonp"));
    EXPECT_FALSE(is_json_content_type("application/json-patch+json"));
    EXPECT_FALSE(is_json_content_type("text/plain; x=application/json"));
}

// ---- version header, session ids ---------------------------------------------------------------

TEST(HttpPolicy, ReadVersionHeader) {
    auto absent = read_version_header("", false);
    EXPECT_FALSE(absent.present);
    EXPECT_FALSE(absent.revision);
    auto good = read_version_header("2025-06-18", true);
    EXPECT_TRUE(good.present);
    EXPECT_EQ(good.revision, protocol::Revision::v2025_06_18);
    auto bad = read_version_header("1999-01-01", true);
    EXPECT_TRUE(bad.present);
    EXPECT_FALSE(bad.revision);
}

TEST(HttpPolicy, ValidSessionId) {
    EXPECT_TRUE(valid_session_id("abc"));
    EXPECT_TRUE(valid_session_id("0f3e2a9c-1b2d-4e5f-8a7b-123456789abc"));
    EXPECT_TRUE(valid_session_id("!~"));
    EXPECT_TRUE(valid_session_id(std::string(256, 'a')));
    EXPECT_FALSE(valid_session_id(""));
    EXPECT_FALSE(valid_session_id(std::string(257, 'a')));
    EXPECT_FALSE(valid_session_id("a b"));
    EXPECT_FALSE(valid_session_id("a\tb"));
    EXPECT_FALSE(valid_session_id("abc\n"));
    EXPECT_FALSE(valid_session_id("a\x7f"));
    EXPECT_FALSE(valid_session_id("caf\xc3\xa9"));
    EXPECT_FALSE(valid_session_id(std::string_view("a\0b", 3)));
}

// ---- trace context headers ----------------------------------------------------------------

TEST(HttpPolicy, TraceHeadersGoIntoMetaUnlessMetaHasItsOwn) {
    const TraceHeaders headers{"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=1", "user=alice"};
    protocol::Message plain = protocol::Request{Json(1), "tools/call", Json{{"name", "echo"}}};
    attach_trace_headers(plain, headers);
    const Json& meta = std::get<protocol::Request>(plain).params["_meta"];
    EXPECT_EQ(meta["traceparent"], headers.traceparent);
    EXPECT_EQ(meta["tracestate"], "rojo=1");
    EXPECT_EQ(meta["baggage"], "user=alice");

    // _meta wins, field by field: its traceparent keeps its own tracestate (none here).
    protocol::Message own = protocol::Request{
        Json(2), "tools/call",
        Json::parse(
            R"({"name":"echo","_meta":{"traceparent":"00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01"}})")};
    attach_trace_headers(own, headers);
    const Json& own_meta = std::get<protocol::Request>(own).params["_meta"];
    EXPECT_EQ(own_meta["traceparent"], "00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01");
    EXPECT_FALSE(own_meta.contains("tracestate"));
    EXPECT_EQ(own_meta["baggage"], "user=alice");

    // Oversized values are not carried; notifications are left alone.
    protocol::Message big = protocol::Request{Json(3), "tools/call", Json::object()};
    attach_trace_headers(big, TraceHeaders{std::string(300, 'a'), "", std::string(9000, 'b')});
    EXPECT_FALSE(std::get<protocol::Request>(big).params["_meta"].contains("traceparent"));
    EXPECT_FALSE(std::get<protocol::Request>(big).params["_meta"].contains("baggage"));
    protocol::Message note = protocol::Notification{"notifications/progress", Json::object()};
    attach_trace_headers(note, headers);
    EXPECT_FALSE(std::get<protocol::Notification>(note).params.contains("_meta"));
}
