// The console's handler on its own: how it words refusals (JSON for the API, HTML for the
// page), the header fields every answer carries, unknown paths and wrong methods, GET api/me.
#include <gtest/gtest.h>

#include "console/console_api.hpp"
#include "console/console_reply.hpp"
#include "console_test_support.hpp"

using namespace toolport;
using test_support::ConsoleRequest;
using test_support::head_field;

namespace {

struct Answered {
    unsigned status = 0;
    std::string head;
    std::string body;
    Json json;
};

class ConsoleApiTest : public ::testing::Test {
protected:
    ConsoleApiTest() {
        console::ConsoleContext context;
        context.trace_viewer_url = "https://traces.example/trace/{trace_id}";
        api = std::make_unique<console::ConsoleApi>(std::move(context));
    }
    Answered ask(HttpMethod method, std::string subpath, const ConsoleAccess& access = {}, std::string body = {}) {
        ConsoleRequest req(method, "/console" + subpath, {}, std::move(body));
        auto answer = api->answer(req, subpath, access);
        EXPECT_TRUE(answer.reply.has_value());
        if (!answer.reply) return {};
        Answered a{answer.reply->status, answer.reply->head, answer.reply->body,
                   Json::parse(answer.reply->body, nullptr, false)};
        return a;
    }
    std::unique_ptr<console::ConsoleApi> api;
};

void expect_console_headers(const Answered& a) {
    EXPECT_EQ(head_field(a.head, "Content-Security-Policy"), std::string(console::kContentSecurityPolicy));
    EXPECT_EQ(head_field(a.head, "X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(head_field(a.head, "Referrer-Policy"), "no-referrer");
}

void expect_error(const Answered& a, unsigned status, const std::string& code) {
    EXPECT_EQ(a.status, status) << a.body;
    ASSERT_TRUE(a.json.is_object()) << a.body;
    EXPECT_EQ(a.json["error"]["code"], code);
    EXPECT_FALSE(a.json["error"]["message"].get<std::string>().empty());
    EXPECT_FALSE(a.json["error"]["suggestion"].get<std::string>().empty());
    EXPECT_EQ(head_field(a.head, "Content-Type"), "application/json");
    EXPECT_EQ(head_field(a.head, "Cache-Control"), "no-store");
    expect_console_headers(a);
}

TEST_F(ConsoleApiTest, MeSaysWhoAsksAndHowTracesAreViewed) {
    ConsoleAccess access;
    access.auth = "oauth";
    access.principal = "oauth:abc";
    access.scopes = {"toolport:operator", "mcp:tools"};
    auto a = ask(HttpMethod::get, "/api/me", access);
    EXPECT_EQ(a.status, 200u);
    EXPECT_EQ(a.json, (Json{{"principal", "oauth:abc"},
                            {"scopes", {"toolport:operator", "mcp:tools"}},
                            {"auth", "oauth"},
                            {"trace_viewer_url", "https://traces.example/trace/{trace_id}"}}));
    EXPECT_EQ(head_field(a.head, "Cache-Control"), "no-store");
    expect_console_headers(a);
}

TEST_F(ConsoleApiTest, RefusalsOfTheApiAreJsonWithTheirChallenge) {
    using V = ConsoleAccess::Verdict;
    ConsoleAccess access;
    access.verdict = V::needs_credential;
    access.why = "no credential was sent";
    access.challenge = "Bearer realm=\"toolport\"";
    auto a = ask(HttpMethod::get, "/api/me", access);
    expect_error(a, 401, "unauthorized");
    EXPECT_EQ(head_field(a.head, "WWW-Authenticate"), "Bearer realm=\"toolport\"");
    access.verdict = V::insufficient_scope;
    access.challenge = "Bearer error=\"insufficient_scope\", scope=\"toolport:operator\"";
    a = ask(HttpMethod::get, "/api/me", access);
    expect_error(a, 403, "insufficient_scope");
    EXPECT_EQ(head_field(a.head, "WWW-Authenticate"), access.challenge);
    access.verdict = V::not_operator;
    expect_error(ask(HttpMethod::get, "/api/me", access), 403, "not_operator");
    access.verdict = V::open_off_loopback;
    expect_error(ask(HttpMethod::get, "/api/overview", access), 403, "loopback_only");
}

TEST_F(ConsoleApiTest, ThePageIsServedWithoutACredentialButNotOpenOffLoopback) {
    using V = ConsoleAccess::Verdict;
    ConsoleAccess access;
    access.verdict = V::needs_credential;
    auto page = ask(HttpMethod::get, "/", access);
    EXPECT_NE(page.status, 401u) << "the page asks for the token itself";
    expect_console_headers(page);
    access.verdict = V::open_off_loopback;
    auto refused = ask(HttpMethod::get, "/", access);
    EXPECT_EQ(refused.status, 403u);
    EXPECT_EQ(head_field(refused.head, "Content-Type"), "text/html; charset=utf-8");
    EXPECT_NE(refused.body.find("loopback"), std::string::npos);
    EXPECT_EQ(refused.body.find("<script"), std::string::npos);
    expect_console_headers(refused);
    expect_error(ask(HttpMethod::post, "/"), 405, "method_not_allowed");
}

TEST_F(ConsoleApiTest, UnknownPathsAre404AndWrongMethods405) {
    auto a = ask(HttpMethod::get, "/api/nothing-here");
    expect_error(a, 404, "not_found");
    a = ask(HttpMethod::get, "/api/mee");
    expect_error(a, 404, "not_found");
    EXPECT_NE(a.json["error"]["suggestion"].get<std::string>().find("api/me"), std::string::npos);
    expect_error(ask(HttpMethod::get, "/api"), 404, "not_found");
    a = ask(HttpMethod::delete_, "/api/me");
    expect_error(a, 405, "method_not_allowed");
    EXPECT_EQ(head_field(a.head, "Allow"), "GET");
}

TEST_F(ConsoleApiTest, PinsWithPinningOffAreAnEmptyListAndNothingToApprove) {
    auto a = ask(HttpMethod::get, "/api/pins");
    EXPECT_EQ(a.status, 200u) << a.body;
    EXPECT_EQ(a.json["pinning"], "off");
    EXPECT_TRUE(a.json["sources"].empty());
    expect_error(ask(HttpMethod::post, "/api/pins/approve", {}, R"({"source":"files"})"), 404, "not_found");
    a = ask(HttpMethod::get, "/api/pins/approve");
    expect_error(a, 405, "method_not_allowed");
    EXPECT_EQ(head_field(a.head, "Allow"), "POST");
    a = ask(HttpMethod::post, "/api/pins");
    EXPECT_EQ(head_field(a.head, "Allow"), "GET");
    a = ask(HttpMethod::get, "/api/pin");
    expect_error(a, 404, "not_found");
    EXPECT_NE(a.json["error"]["suggestion"].get<std::string>().find("api/pins"), std::string::npos);
}

}  // namespace
