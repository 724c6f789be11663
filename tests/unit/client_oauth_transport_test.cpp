// The Streamable HTTP transport's authorization hooks against Toolport's own server with
// bearer tokens on: the authorizer's header goes on every request, a refused request is
// sent again when the authorizer obtained new credentials, and no more than three times.
#include <gtest/gtest.h>

#include "client/http_authorizer.hpp"
#include "client/sync_client.hpp"
#include "client_test_servers.hpp"
#include "transports/http_options.hpp"

using namespace toolport;
using namespace toolport::client;

namespace {

// Hands out `next` once refused; records what the transport told it.
struct ScriptedAuthorizer : HttpAuthorizer {
    std::string current, next;
    bool grant = true;
    std::vector<std::pair<unsigned, std::string>> refusals;
    int asked = 0;

    Task<std::string> authorization() override {
        ++asked;
        co_return current.empty() ? std::string() : "Bearer " + current;
    }
    Task<bool> refused(unsigned status, std::string www_authenticate) override {
        refusals.emplace_back(status, std::move(www_authenticate));
        if (grant) current = next;
        co_return grant;
    }
};

std::unique_ptr<ClientTransport> http_with(SyncClient& client, const std::string& url,
                                           std::shared_ptr<HttpAuthorizer> authorizer) {
    HttpClientOptions options;
    options.url = url;
    options.listen = false;
    options.authorizer = std::move(authorizer);
    return make_http_transport(client.executor(), std::move(options));
}

HttpOptions with_token() {
    HttpOptions options;
    options.bearer_tokens = {"s3cret-token"};
    return options;
}

TEST(ClientOAuthTransport, ARefusedRequestIsSentAgainWithTheNewCredentials) {
    test_support::HttpServerThread server(with_token());
    auto authorizer = std::make_shared<ScriptedAuthorizer>();
    authorizer->next = "s3cret-token";
    SyncClient client;
    client.connect(http_with(client, server.url(), authorizer));
    EXPECT_FALSE(client.list_tools().empty());
    ASSERT_EQ(authorizer->refusals.size(), 1u);  // initialize, once
    EXPECT_EQ(authorizer->refusals[0].first, 401u);
    EXPECT_NE(authorizer->refusals[0].second.find("Bearer"), std::string::npos) << authorizer->refusals[0].second;
    EXPECT_GE(authorizer->asked, 4);  // every request asked for the header
    client.close();
}

TEST(ClientOAuthTransport, AuthorizingIsTriedThreeTimesAtMost) {
    test_support::HttpServerThread server(with_token());
    auto authorizer = std::make_shared<ScriptedAuthorizer>();
    authorizer->next = "still-wrong";
    SyncClient client;
    try {
        client.connect(http_with(client, server.url(), authorizer));
        FAIL() << "a server that refuses every token was used";
    } catch (const TransportError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("HTTP 401"), std::string::npos) << what;
        EXPECT_EQ(what.find("still-wrong"), std::string::npos) << "tokens never appear in messages";
    }
    EXPECT_EQ(authorizer->refusals.size(), 3u);
}

TEST(ClientOAuthTransport, ARefusalTheAuthorizerCannotHelpEndsTheRequest) {
    test_support::HttpServerThread server(with_token());
    auto authorizer = std::make_shared<ScriptedAuthorizer>();
    authorizer->grant = false;
    SyncClient client;
    try {
        client.connect(http_with(client, server.url(), authorizer));
        FAIL() << "expected TransportError";
    } catch (const TransportError& e) {
        EXPECT_NE(std::string(e.what()).find("HTTP 401 and authorizing again cannot help"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(authorizer->refusals.size(), 1u);
}

TEST(ClientOAuthTransport, AnAuthorizerAndABearerTokenAreNotBothAccepted) {
    SyncClient client;
    HttpClientOptions options;
    options.url = "http://127.0.0.1:1/mcp";
    options.bearer_token = "t";
    options.authorizer = std::make_shared<ScriptedAuthorizer>();
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
    options.bearer_token.clear();
    options.headers = {{"Authorization", "Basic x"}};
    EXPECT_THROW(make_http_transport(client.executor(), options), std::invalid_argument);
}

}  // namespace
