// The console's door in the HTTP endpoint: which paths reach the console's handler, and the
// verdict it hands over (loopback without auth, credentials, a profile's token, Host and
// Origin as for /mcp).
#include <gtest/gtest.h>

#include "console_test_support.hpp"
#include "manual_executor.hpp"
#include "providers/source_table.hpp"
#include "server/server.hpp"
#include "transports/http_endpoint.hpp"

using namespace toolport;
using test_support::ConsoleRequest;

namespace {

// Records what the endpoint handed over and answers 299 (a status no other path gives).
class RecordingConsole final : public ConsoleHandler {
public:
    HttpAnswer answer(const HttpRequestView& req, std::string_view subpath, const ConsoleAccess& access) override {
        ++calls;
        last_subpath = std::string(subpath);
        last = access;
        HttpAnswer a;
        a.reply = format_reply(req.version(), req.keep_alive(), 299, {}, {});
        return a;
    }
    int calls = 0;
    std::string last_subpath;
    ConsoleAccess last;
};

class ConsoleAccessTest : public ::testing::Test {
protected:
    void make(HttpOptions options) {
        console = std::make_shared<RecordingConsole>();
        options.console.handler = console;
        server = std::make_unique<McpServer>(exec, ServerOptions{});
        endpoint = std::make_unique<HttpEndpoint>(*server, exec, std::move(options));
    }
    ~ConsoleAccessTest() override {
        if (endpoint) endpoint->stop();
        exec.run();
    }
    unsigned status(std::string target, std::map<std::string, std::string> headers = {}) {
        ConsoleRequest req(HttpMethod::get, std::move(target), std::move(headers));
        auto answer = endpoint->answer(req);
        exec.run();
        return answer.reply ? answer.reply->status : 0;
    }

    test_support::ManualExecutor exec;
    std::shared_ptr<RecordingConsole> console;
    std::unique_ptr<McpServer> server;
    std::unique_ptr<HttpEndpoint> endpoint;
};

TEST_F(ConsoleAccessTest, OnlyThePathAndWhatIsUnderItReachTheConsole) {
    make(HttpOptions{});
    EXPECT_EQ(status("/console"), 299u);
    EXPECT_EQ(console->last_subpath, "");
    EXPECT_EQ(status("/console/"), 299u);
    EXPECT_EQ(console->last_subpath, "/");
    EXPECT_EQ(status("/console/api/me?x=1"), 299u);
    EXPECT_EQ(console->last_subpath, "/api/me");
    EXPECT_EQ(console->last.verdict, ConsoleAccess::Verdict::allowed);
    EXPECT_EQ(console->last.auth, "none");
    const int before = console->calls;
    EXPECT_EQ(status("/consoles"), 404u);
    EXPECT_EQ(status("/mcp/console"), 404u);
    EXPECT_EQ(console->calls, before);
}

TEST_F(ConsoleAccessTest, ADisabledConsoleIsNotServed) {
    HttpOptions options;
    options.console.enabled = false;
    make(std::move(options));
    EXPECT_EQ(status("/console/api/me"), 404u);
    EXPECT_EQ(console->calls, 0);
}

TEST_F(ConsoleAccessTest, WithoutAuthOnlyALoopbackListenerLetsCallersIn) {
    HttpOptions options;
    options.host = "0.0.0.0";
    options.allowed_hosts = {"127.0.0.1:8080"};
    make(std::move(options));
    EXPECT_EQ(status("/console/api/me"), 299u);
    EXPECT_EQ(console->last.verdict, ConsoleAccess::Verdict::open_off_loopback);
    EXPECT_NE(console->last.why.find("loopback"), std::string::npos);
}

TEST_F(ConsoleAccessTest, HostAndOriginAreCheckedAsForTheMcpEndpoint) {
    make(HttpOptions{});
    EXPECT_EQ(status("/console/api/me", {{"Host", "evil.example"}}), 403u);
    EXPECT_EQ(status("/console/", {{"Origin", "https://evil.example"}}), 403u);
    EXPECT_EQ(console->calls, 0);
    EXPECT_EQ(status("/console/", {{"Origin", "http://127.0.0.1:8080"}}), 299u);
}

TEST_F(ConsoleAccessTest, TheServersBearerTokensAreOperatorsAndOthersNeedACredential) {
    HttpOptions options;
    options.bearer_tokens = {"operator-token-123456"};
    make(std::move(options));
    EXPECT_EQ(status("/console/api/me"), 299u);
    EXPECT_EQ(console->last.verdict, ConsoleAccess::Verdict::needs_credential);
    EXPECT_EQ(console->last.challenge, "Bearer realm=\"toolport\"");
    EXPECT_EQ(status("/console/api/me", {{"Authorization", "Bearer wrong"}}), 299u);
    EXPECT_EQ(console->last.verdict, ConsoleAccess::Verdict::needs_credential);
    EXPECT_NE(console->last.challenge.find("invalid_token"), std::string::npos);
    EXPECT_EQ(status("/console/api/me", {{"Authorization", "Bearer operator-token-123456"}}), 299u);
    EXPECT_EQ(console->last.verdict, ConsoleAccess::Verdict::allowed);
    EXPECT_EQ(console->last.auth, "bearer");
    EXPECT_FALSE(console->last.principal.empty());
    EXPECT_EQ(console->last.principal.find("operator-token"), std::string::npos) << "a digest, never the token";
}

TEST_F(ConsoleAccessTest, AGatewayProfilesTokenIsNoOperators) {
    HttpOptions options;
    options.bearer_tokens = {"operator-token-123456"};
    make(std::move(options));
    server->add_view("cursor", ViewSpec{[](const ToolSpec&) { return true; }, {}}, {"profile-token-abcdef"});
    EXPECT_EQ(status("/console/api/me", {{"Authorization", "Bearer profile-token-abcdef"}}), 299u);
    EXPECT_EQ(console->last.verdict, ConsoleAccess::Verdict::not_operator);
    EXPECT_NE(console->last.why.find("cursor"), std::string::npos);
}

}  // namespace
