// UpstreamCredentials (src/auth/upstream_credentials.hpp) against a scripted authorization
// server on loopback: exchanged tokens cached per caller until shortly before they expire,
// one request in flight per key, a rejected token dropped, client_credentials shared by
// every caller, failures as UpstreamCredentialsError (never cached), the token endpoint
// found from the issuer's metadata; and the `auth:` settings' checks.
#include <gtest/gtest.h>

#include <map>

#include "auth/upstream_credentials.hpp"
#include "providers/credentials_tool_error.hpp"
#include "auth_test_support.hpp"
#include "error_of.hpp"
#include "server/tool_error.hpp"
#include "util/base64.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

// A token endpoint that numbers what it issues ("issued-1", ...) and can be told to refuse.
struct AuthorizationServer {
    std::mutex mutex;
    std::string issuer;
    int issued = 0;
    int expires_in = 3600;
    int delay_ms = 0;
    unsigned status = 200;
    std::string error_body;

    ScriptedReply answer(const SeenRequest& request) {
        std::lock_guard lock(mutex);
        ScriptedReply reply;
        reply.headers = {{"Content-Type", "application/json"}};
        if (request.target == "/.well-known/oauth-authorization-server") {
            reply.body = json{{"issuer", issuer}, {"token_endpoint", issuer + "/oauth2/token"}}.dump();
            return reply;
        }
        if (request.target != "/oauth2/token") {
            reply.status = 404;
            return reply;
        }
        reply.delay_ms = delay_ms;
        if (status != 200) {
            reply.status = status;
            reply.body = error_body;
            return reply;
        }
        auto fields = form_fields(request.body);
        std::string prefix = fields["grant_type"] == "client_credentials" ? "own-" : "exchanged-";
        reply.body = json{{"access_token", prefix + std::to_string(++issued)},
                          {"token_type", "Bearer"},
                          {"expires_in", expires_in},
                          {"issued_token_type", "urn:ietf:params:oauth:token-type:access_token"}}
                         .dump();
        return reply;
    }
};

class UpstreamCredentialsTest : public LoopbackAuthServerTest<AuthorizationServer> {
protected:
    UpstreamAuthSettings settings(UpstreamAuthSettings::Type type) {
        UpstreamAuthSettings s;
        s.type = type;
        s.token_endpoint = state.issuer + "/oauth2/token";
        s.allow_http = true;
        s.client = {.method = ClientAuthentication::Method::client_secret_basic,
                    .client_id = "toolport",
                    .client_secret = "gateway-secret"};
        s.audience = "https://files.example.test";
        s.resource = "https://files.example.test/mcp";
        s.scope = "files:read";
        return s;
    }

    std::shared_ptr<UpstreamCredentials> make(UpstreamAuthSettings s) {
        return std::make_shared<UpstreamCredentials>("upstream files", std::move(s), http,
                                                     [this] { return steady_now; });
    }

    // Runs `tasks` together until all have finished; their results (or errors) in order.
    std::vector<std::pair<std::string, std::exception_ptr>> run_all(std::vector<Task<std::string>> tasks) {
        std::vector<std::pair<std::string, std::exception_ptr>> out(tasks.size());
        std::size_t finished = 0;
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            spawn(std::move(tasks[i]), [&, i](std::optional<std::string> r, std::exception_ptr e) {
                out[i] = {r.value_or(""), e};
                ++finished;
            });
        }
        io.restart();
        while (finished < out.size() && io.run_one_for(10s) > 0) {}
        EXPECT_EQ(finished, out.size()) << "the tasks did not finish";
        return out;
    }

    UpstreamCredentialsError refused(Task<std::string> task) {
        try {
            drive(std::move(task));
        } catch (const UpstreamCredentialsError& e) {
            return e;
        }
        ADD_FAILURE() << "no UpstreamCredentialsError";
        return UpstreamCredentialsError(UpstreamCredentialsError::Kind::unavailable, "");
    }

    std::vector<SeenRequest> token_requests() const { return requests_to("/oauth2/token"); }

    std::chrono::steady_clock::time_point steady_now = std::chrono::steady_clock::now();
};

}  // namespace

TEST_F(UpstreamCredentialsTest, ExchangesEachCallersTokenOnceAndSendsRfc8693Parameters) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::token_exchange));
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-1");
    EXPECT_EQ(drive(credentials->for_caller("bob-token")), "Bearer exchanged-2");
    // Cached: the same caller's token is not exchanged again.
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-1");
    EXPECT_EQ(drive(credentials->for_caller("bob-token")), "Bearer exchanged-2");
    auto seen = token_requests();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(credentials->stats().exchanges, 2u);
    EXPECT_EQ(credentials->stats().cache_hits, 2u);

    auto fields = form_fields(seen[0].body);
    EXPECT_EQ(fields, (std::map<std::string, std::string>{
                          {"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                          {"subject_token", "alice-token"},
                          {"subject_token_type", "urn:ietf:params:oauth:token-type:access_token"},
                          {"requested_token_type", "urn:ietf:params:oauth:token-type:access_token"},
                          {"audience", "https://files.example.test"},
                          {"resource", "https://files.example.test/mcp"},
                          {"scope", "files:read"}}));
    EXPECT_EQ(seen[0].header("Authorization"), "Basic " + util::base64_encode("toolport:gateway-secret"));
    EXPECT_EQ(form_fields(seen[1].body)["subject_token"], "bob-token");
}

TEST_F(UpstreamCredentialsTest, ConcurrentCallsForOneCallerShareOneRequest) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::token_exchange));
    {
        std::lock_guard lock(state.mutex);
        state.delay_ms = 150;  // all three ask while the first request is out
    }
    std::vector<Task<std::string>> tasks;
    tasks.push_back(credentials->for_caller("alice-token"));
    tasks.push_back(credentials->for_caller("alice-token"));
    tasks.push_back(credentials->for_caller("bob-token"));
    auto results = run_all(std::move(tasks));
    for (auto& [value, error] : results) EXPECT_FALSE(error);
    EXPECT_EQ(results[0].first, results[1].first);
    EXPECT_NE(results[0].first, results[2].first);
    EXPECT_EQ(token_requests().size(), 2u);
}

TEST_F(UpstreamCredentialsTest, AnExchangedTokenIsUsedUntilShortlyBeforeItExpires) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::token_exchange));
    {
        std::lock_guard lock(state.mutex);
        state.expires_in = 300;  // margin: min(30 s, 300 / 4) = 30 s
    }
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-1");
    steady_now += 269s;
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-1");
    steady_now += 2s;  // 271 s: within the margin
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-2");
    {
        std::lock_guard lock(state.mutex);
        state.expires_in = 20;  // short-lived: used for 15 s
    }
    EXPECT_EQ(drive(credentials->for_caller("bob-token")), "Bearer exchanged-3");
    steady_now += 14s;
    EXPECT_EQ(drive(credentials->for_caller("bob-token")), "Bearer exchanged-3");
    steady_now += 2s;
    EXPECT_EQ(drive(credentials->for_caller("bob-token")), "Bearer exchanged-4");
}

TEST_F(UpstreamCredentialsTest, ARejectedTokenIsObtainedAgain) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::token_exchange));
    auto first = drive(credentials->for_caller("alice-token"));
    auto bobs = drive(credentials->for_caller("bob-token"));
    credentials->rejected(first);
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-3");
    // Only that token went.
    EXPECT_EQ(drive(credentials->for_caller("bob-token")), bobs);
    EXPECT_EQ(token_requests().size(), 3u);
}

TEST_F(UpstreamCredentialsTest, ClientCredentialsIsOneTokenForEveryCaller) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::client_credentials));
    EXPECT_EQ(drive(credentials->for_source()), "Bearer own-1");
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer own-1");
    EXPECT_EQ(drive(credentials->for_caller("")), "Bearer own-1");
    auto seen = token_requests();
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(form_fields(seen[0].body),
              (std::map<std::string, std::string>{{"grant_type", "client_credentials"},
                                                  {"scope", "files:read"},
                                                  {"resource", "https://files.example.test/mcp"},
                                                  {"audience", "https://files.example.test"}}));
    // Refreshed before it expires (3600 s, margin 30 s).
    steady_now += 3571s;
    EXPECT_EQ(drive(credentials->for_source()), "Bearer own-2");
}

TEST_F(UpstreamCredentialsTest, TokenExchangeSourceRequestsUseClientCredentialsOrNothing) {
    auto s = settings(UpstreamAuthSettings::Type::token_exchange);
    EXPECT_EQ(drive(make(s)->for_source()), "Bearer own-1");
    s.own_requests_authorized = false;
    EXPECT_EQ(drive(make(s)->for_source()), "");
    EXPECT_EQ(token_requests().size(), 1u);
}

TEST_F(UpstreamCredentialsTest, ACallerWithoutATokenCannotBeExchangedFor) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::token_exchange));
    auto e = refused(credentials->for_caller(""));
    EXPECT_EQ(e.kind, UpstreamCredentialsError::Kind::unavailable);
    EXPECT_EQ(e.code(), "upstream_credentials_unavailable");
    auto fields = providers::credentials_tool_error(e).to_json();
    EXPECT_EQ(fields["error_code"], "UPSTREAM_CREDENTIALS_UNAVAILABLE");
    EXPECT_NE(fields["suggestion"].get<std::string>().find("OAuth access token"), std::string::npos);
    EXPECT_FALSE(fields["recoverable"].get<bool>());
    EXPECT_TRUE(providers::credentials_tool_error(e).to_result().is_error);
    EXPECT_TRUE(token_requests().empty());
}

TEST_F(UpstreamCredentialsTest, RefusalsAreErrorsWithTheServersCodeAndAreNotCached) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::token_exchange));
    {
        std::lock_guard lock(state.mutex);
        state.status = 400;
        state.error_body = R"({"error":"invalid_grant","error_description":"subject token expired"})";
        state.delay_ms = 100;
    }
    // Two waiting for one request get its failure.
    std::vector<Task<std::string>> tasks;
    tasks.push_back(credentials->for_caller("alice-token"));
    tasks.push_back(credentials->for_caller("alice-token"));
    auto results = run_all(std::move(tasks));
    EXPECT_EQ(token_requests().size(), 1u);
    for (auto& [value, error] : results) {
        ASSERT_TRUE(error);
        try {
            std::rethrow_exception(error);
        } catch (const UpstreamCredentialsError& e) {
            EXPECT_EQ(e.kind, UpstreamCredentialsError::Kind::authorization_failed);
            EXPECT_EQ(e.as_error, "invalid_grant");
            EXPECT_FALSE(e.transient);
            std::string message = e.what();
            EXPECT_NE(message.find("upstream files"), std::string::npos) << message;
            EXPECT_NE(message.find("subject token expired"), std::string::npos) << message;
            EXPECT_EQ(message.find("alice-token"), std::string::npos) << message;
            EXPECT_EQ(message.find("gateway-secret"), std::string::npos) << message;
            auto fields = providers::credentials_tool_error(e).to_json();
            EXPECT_EQ(fields["error_code"], "UPSTREAM_AUTHORIZATION_FAILED");
            EXPECT_EQ(fields["authorization_server_error"], "invalid_grant");
        }
    }
    EXPECT_EQ(credentials->stats().failures, 1u);
    // Not remembered: once the server agrees, the caller gets a token.
    {
        std::lock_guard lock(state.mutex);
        state.status = 200;
        state.delay_ms = 0;
    }
    EXPECT_EQ(drive(credentials->for_caller("alice-token")), "Bearer exchanged-1");
}

TEST_F(UpstreamCredentialsTest, AnUnreachableServerIsATransientFailure) {
    auto s = settings(UpstreamAuthSettings::Type::client_credentials);
    s.token_endpoint = "http://127.0.0.1:1/token";
    auto e = refused(make(s)->for_source());
    EXPECT_EQ(e.kind, UpstreamCredentialsError::Kind::authorization_failed);
    EXPECT_TRUE(e.transient);
    EXPECT_TRUE(providers::credentials_tool_error(e).is_transient());
    EXPECT_NE(std::string(e.what()).find("could not be reached"), std::string::npos) << e.what();
}

TEST_F(UpstreamCredentialsTest, TheTokenEndpointIsFoundFromTheIssuer) {
    auto s = settings(UpstreamAuthSettings::Type::client_credentials);
    s.token_endpoint.clear();
    s.issuer = state.issuer;
    auto credentials = make(s);
    EXPECT_EQ(drive(credentials->for_source()), "Bearer own-1");
    steady_now += 4000s;
    EXPECT_EQ(drive(credentials->for_source()), "Bearer own-2");
    // The metadata is read once.
    EXPECT_EQ(targets(),
              (std::vector<std::string>{"/.well-known/oauth-authorization-server", "/oauth2/token", "/oauth2/token"}));
}

TEST_F(UpstreamCredentialsTest, ANonBearerTokenIsRefused) {
    auto credentials = make(settings(UpstreamAuthSettings::Type::client_credentials));
    {
        std::lock_guard lock(state.mutex);
        state.status = 201;  // a 2xx with a body the script sets
        state.error_body = R"({"access_token":"a","token_type":"DPoP"})";
    }
    auto e = refused(credentials->for_source());
    EXPECT_NE(std::string(e.what()).find("Bearer tokens only"), std::string::npos) << e.what();
}
