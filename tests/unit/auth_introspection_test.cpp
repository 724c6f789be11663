// TokenIntrospector (src/auth/introspection.hpp) against an introspection endpoint on
// loopback: the request it sends (form body, client authentication), what it accepts and
// refuses, its positive and negative caches, one request for concurrent checks of a token,
// discovery of the endpoint; and TokenAuthenticator routing opaque tokens to it. Also the
// scope arithmetic of scope_policy.hpp.
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "auth/authenticator.hpp"
#include "auth/introspection.hpp"
#include "auth/scope_policy.hpp"
#include "auth_test_support.hpp"
#include "util/base64.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kResource = "https://mcp.example.test/mcp";

std::int64_t epoch_in(std::chrono::seconds from_now) {
    return epoch_seconds(std::chrono::system_clock::now() + from_now);
}

// The fake authorization server: answers per token what `answers` says (inactive otherwise).
struct IntrospectionState {
    std::mutex mutex;
    std::string issuer;
    std::map<std::string, json> answers;  // token -> response body
    unsigned status = 200;
    int delay_ms = 0;
    bool metadata_has_endpoint = true;

    ScriptedReply answer(const SeenRequest& request) {
        std::lock_guard lock(mutex);
        ScriptedReply reply;
        reply.headers = {{"Content-Type", "application/json"}};
        if (request.target == "/.well-known/oauth-authorization-server") {
            json metadata{{"issuer", issuer}, {"token_endpoint", issuer + "/token"}};
            if (metadata_has_endpoint) metadata["introspection_endpoint"] = issuer + "/introspect";
            reply.body = metadata.dump();
        } else if (request.target == "/introspect" && request.method == "POST") {
            reply.status = status;
            reply.delay_ms = delay_ms;
            std::string token;
            // The body is token=<form-encoded>&token_type_hint=...; test tokens need no decoding.
            auto start = request.body.find("token=");
            if (start == 0) token = request.body.substr(6, request.body.find('&') - 6);
            auto it = answers.find(token);
            reply.body = it == answers.end() ? json{{"active", false}}.dump() : it->second.dump();
        } else {
            reply.status = 404;
            reply.body = "{}";
        }
        return reply;
    }
};

class IntrospectionTest : public LoopbackAuthServerTest<IntrospectionState> {
protected:
    IntrospectionOptions options(bool discover = false) {
        IntrospectionOptions o;
        o.endpoint = discover ? "" : state.issuer + "/introspect";
        o.issuer = state.issuer;
        o.audiences = {kResource};
        o.client.method = ClientAuthentication::Method::client_secret_basic;
        o.client.client_id = "toolport rs";
        o.client.client_secret = "s3cret&=";
        o.negative_cache = 30s;
        o.allow_http = true;
        o.clock = [this] { return now; };
        return o;
    }

    void answer(const std::string& token, json body) {
        std::lock_guard lock(state.mutex);
        state.answers[token] = std::move(body);
    }

    json active(const std::string& sub, const std::string& scope = "mcp:read") {
        return json{{"active", true},      {"sub", sub},     {"aud", kResource},
                    {"iss", state.issuer}, {"scope", scope}, {"exp", epoch_in(300s)},
                    {"client_id", "app"}};
    }

    TokenErrorReason refusal(TokenIntrospector& introspector, const std::string& token) {
        try {
            drive(introspector.introspect(token));
        } catch (const TokenError& e) {
            return e.reason();
        }
        ADD_FAILURE() << "the token was accepted";
        return TokenErrorReason::malformed;
    }

    std::size_t introspections() const { return requests_to("/introspect").size(); }

    std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
};

}  // namespace

TEST_F(IntrospectionTest, AnActiveTokenIsReadAndTheRequestCarriesTheFormAndBasicAuthentication) {
    answer("opaque-1", active("alice", "mcp:read  mcp:write"));
    TokenIntrospector introspector(http, options());
    auto who = drive(introspector.introspect("opaque-1"));
    EXPECT_EQ(who->subject, "alice");
    EXPECT_EQ(who->issuer, state.issuer);
    EXPECT_EQ(who->client_id, "app");
    EXPECT_EQ(who->scopes, (std::vector<std::string>{"mcp:read", "mcp:write"}));
    auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].method, "POST");
    EXPECT_EQ(requests[0].body, "token=opaque-1&token_type_hint=access_token");
    EXPECT_EQ(requests[0].header("Content-Type"), "application/x-www-form-urlencoded");
    // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined.
    EXPECT_EQ(requests[0].header("Authorization"), "Basic " + util::base64_encode("toolport+rs:s3cret%26%3D"));
}

TEST_F(IntrospectionTest, ClientSecretPostPutsTheCredentialsInTheBody) {
    answer("opaque-1", active("alice"));
    auto o = options();
    o.client.method = ClientAuthentication::Method::client_secret_post;
    TokenIntrospector introspector(http, o);
    drive(introspector.introspect("opaque-1"));
    auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].header("Authorization"), "");
    EXPECT_EQ(requests[0].body,
              "token=opaque-1&token_type_hint=access_token&client_id=toolport+rs&client_secret=s3cret%26%3D");
}

TEST_F(IntrospectionTest, PrivateKeyJwtSignsAnAssertionForTheIntrospectionEndpoint) {
    answer("opaque-1", active("alice"));
    const TestKey key = make_ec_key("rs-key");
    auto o = options();
    o.client = {.method = ClientAuthentication::Method::private_key_jwt,
                .client_id = "toolport rs",
                .private_key_pem = private_key_pem(key),
                .key_id = key.kid};
    TokenIntrospector introspector(http, o);
    EXPECT_EQ(drive(introspector.introspect("opaque-1"))->subject, "alice");
    auto seen = requests_to("/introspect");
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0].header("Authorization"), "");
    auto fields = form_fields(seen[0].body);
    EXPECT_EQ(fields["token"], "opaque-1");
    EXPECT_EQ(fields["token_type_hint"], "access_token");
    EXPECT_EQ(fields["client_id"], "toolport rs");
    EXPECT_EQ(fields["client_assertion_type"], "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
    EXPECT_EQ(fields.count("client_secret"), 0u);
    // What the authorization server checks: signed with the client's key, issued by the
    // client about itself, for the endpoint it was sent to.
    JwtVerifier verifier({.issuer = "toolport rs", .audiences = {state.issuer + "/introspect"}});
    auto assertion = verifier.verify(fields["client_assertion"],
                                     parse_jwks(jwks_text(json::array({public_jwk(key, "ES256")}))),
                                     std::chrono::system_clock::now());
    EXPECT_EQ(assertion.subject, "toolport rs");
    EXPECT_EQ(assertion.kid, "rs-key");
}

TEST_F(IntrospectionTest, InactiveWrongAudienceWrongIssuerExpiredAndAnonymousTokensAreRefused) {
    TokenIntrospector introspector(http, options());
    EXPECT_EQ(refusal(introspector, "unknown"), TokenErrorReason::inactive);

    auto other_audience = active("bob");
    other_audience["aud"] = json::array({"https://other.example.test/mcp"});
    answer("aud", other_audience);
    EXPECT_EQ(refusal(introspector, "aud"), TokenErrorReason::wrong_audience);

    auto no_audience = active("bob");
    no_audience.erase("aud");
    answer("noaud", no_audience);
    EXPECT_EQ(refusal(introspector, "noaud"), TokenErrorReason::wrong_audience);

    auto other_issuer = active("bob");
    other_issuer["iss"] = "https://evil.example.test";
    answer("iss", other_issuer);
    EXPECT_EQ(refusal(introspector, "iss"), TokenErrorReason::wrong_issuer);

    auto expired = active("bob");
    expired["exp"] = epoch_in(-600s);
    answer("exp", expired);
    EXPECT_EQ(refusal(introspector, "exp"), TokenErrorReason::expired);

    auto anonymous = active("bob");
    anonymous.erase("sub");
    anonymous.erase("client_id");
    answer("anon", anonymous);
    EXPECT_EQ(refusal(introspector, "anon"), TokenErrorReason::missing_claim);
}

TEST_F(IntrospectionTest, AClientTokenWithoutSubIsItsClientAndAnAudienceListMayNameUs) {
    auto body = active("x");
    body.erase("sub");
    body["aud"] = json::array({"https://other.example.test", kResource});
    answer("cc", body);
    TokenIntrospector introspector(http, options());
    auto who = drive(introspector.introspect("cc"));
    EXPECT_EQ(who->subject, "client:app");
}

// Found by fuzz_auth: an exp past what system_clock holds (2262; the bound was year 9999)
// overflowed the conversion to a time_point (undefined behaviour; in practice an expiry in
// 1677, so the token was refused as expired).
TEST_F(IntrospectionTest, AnExpBeyondTheClocksRangeIsClampedTo2200) {
    TokenIntrospector introspector(http, options());
    const auto year_2200 = std::chrono::system_clock::time_point(std::chrono::seconds(7258118400));
    for (double exp : {1e10, 1e11, 1e300}) {
        SCOPED_TRACE(exp);
        auto body = active("alice");
        body["exp"] = exp;
        auto who = introspector.read_response(body, now);
        EXPECT_EQ(who->expires_at, year_2200);
    }
}

TEST_F(IntrospectionTest, AnActiveTokenIsCachedUntilItsExpAndNotAfter) {
    answer("opaque-1", active("alice"));
    TokenIntrospector introspector(http, options());
    EXPECT_EQ(introspector.cached("opaque-1"), nullptr);
    auto first = drive(introspector.introspect("opaque-1"));
    auto second = drive(introspector.introspect("opaque-1"));
    EXPECT_EQ(first, second);
    EXPECT_EQ(introspector.cached("opaque-1"), first);
    EXPECT_EQ(introspections(), 1u);
    now += 301s;  // past its exp
    EXPECT_EQ(introspector.cached("opaque-1"), nullptr);
}

TEST_F(IntrospectionTest, WithoutExpAnActiveTokenIsCachedForCacheMax) {
    auto body = active("alice");
    body.erase("exp");
    answer("noexp", body);
    auto o = options();
    o.max_cache = 60s;
    TokenIntrospector introspector(http, o);
    drive(introspector.introspect("noexp"));
    now += 59s;
    EXPECT_NE(introspector.cached("noexp"), nullptr);
    now += 2s;
    EXPECT_EQ(introspector.cached("noexp"), nullptr);
    drive(introspector.introspect("noexp"));
    EXPECT_EQ(introspections(), 2u);
}

TEST_F(IntrospectionTest, ARefusedTokenIsRememberedForTheNegativeCacheTime) {
    TokenIntrospector introspector(http, options());
    for (int i = 0; i < 5; ++i) EXPECT_EQ(refusal(introspector, "bad"), TokenErrorReason::inactive);
    EXPECT_EQ(introspections(), 1u);
    EXPECT_EQ(introspector.stats().negative_hits, 4u);
    now += 31s;
    EXPECT_EQ(refusal(introspector, "bad"), TokenErrorReason::inactive);
    EXPECT_EQ(introspections(), 2u);
}

TEST_F(IntrospectionTest, AnEndpointFailureIsUnavailableAndNotCached) {
    {
        std::lock_guard lock(state.mutex);
        state.status = 500;
    }
    TokenIntrospector introspector(http, options());
    EXPECT_EQ(refusal(introspector, "t"), TokenErrorReason::introspection_unavailable);
    EXPECT_EQ(refusal(introspector, "t"), TokenErrorReason::introspection_unavailable);
    EXPECT_EQ(introspections(), 2u);
    {
        std::lock_guard lock(state.mutex);
        state.status = 200;
        state.answers["t"] = json::array();  // not an introspection response
    }
    EXPECT_EQ(refusal(introspector, "t"), TokenErrorReason::introspection_unavailable);
}

TEST_F(IntrospectionTest, ConcurrentChecksOfOneTokenShareOneRequest) {
    answer("opaque-1", active("alice"));
    {
        std::lock_guard lock(state.mutex);
        state.delay_ms = 100;
    }
    TokenIntrospector introspector(http, options());
    std::vector<std::shared_ptr<const VerifiedToken>> got;
    int done = 0;
    for (int i = 0; i < 4; ++i) {
        spawn(introspector.introspect("opaque-1"),
              [&](std::optional<std::shared_ptr<const VerifiedToken>> r, std::exception_ptr e) {
                  EXPECT_FALSE(e);
                  if (r) got.push_back(*r);
                  ++done;
              });
    }
    while (done < 4 && io.run_one_for(10s) > 0) {}
    ASSERT_EQ(got.size(), 4u);
    for (const auto& t : got) EXPECT_EQ(t, got[0]);
    EXPECT_EQ(introspections(), 1u);
}

TEST_F(IntrospectionTest, TheEndpointIsDiscoveredFromTheIssuerMetadata) {
    answer("opaque-1", active("alice"));
    TokenIntrospector introspector(http, options(true));
    drive(introspector.introspect("opaque-1"));
    EXPECT_EQ(introspector.endpoint(), state.issuer + "/introspect");
    {
        std::lock_guard lock(state.mutex);
        state.metadata_has_endpoint = false;
    }
    TokenIntrospector without(http, options(true));
    EXPECT_EQ(refusal(without, "opaque-1"), TokenErrorReason::introspection_unavailable);
}

TEST_F(IntrospectionTest, BadOptionsAreRefused) {
    auto o = options();
    o.client.method = ClientAuthentication::Method::private_key_jwt;  // without a key
    EXPECT_THROW(TokenIntrospector(http, o), std::invalid_argument);
    o = options();
    o.client.client_secret.clear();
    EXPECT_THROW(TokenIntrospector(http, o), std::invalid_argument);
    o = options();
    o.client.client_id.clear();
    EXPECT_THROW(TokenIntrospector(http, o), std::invalid_argument);
    o = options();
    o.client = {};  // none, and no client_id: an endpoint that asks for no authentication
    EXPECT_NO_THROW(TokenIntrospector(http, o));
    o = options();
    o.allow_http = false;
    EXPECT_THROW(TokenIntrospector(http, o), std::invalid_argument);
    o = options();
    o.audiences.clear();
    EXPECT_THROW(TokenIntrospector(http, o), std::invalid_argument);
}

TEST_F(IntrospectionTest, TheAuthenticatorIntrospectsOpaqueTokensAndEveryTokenWhenOpaqueOnly) {
    answer("opaque-1", active("alice"));
    answer("aaa.bbb.ccc", active("carol"));
    auto introspector = std::make_shared<TokenIntrospector>(http, options());
    AuthenticatorOptions a;
    a.verifier = {.issuer = state.issuer, .audiences = {kResource}};
    a.introspector = introspector;
    // JWTs go to the (empty) key set; the opaque token to the endpoint.
    TokenAuthenticator mixed(a, std::make_shared<StaticKeySource>(KeySet{}));
    EXPECT_EQ(drive(mixed.authenticate("opaque-1"))->subject, "alice");
    EXPECT_NE(mixed.cached("opaque-1"), nullptr);
    EXPECT_THROW(drive(mixed.authenticate("aaa.bbb.ccc")), TokenError);
    EXPECT_EQ(introspections(), 1u);

    a.opaque_only = true;
    TokenAuthenticator opaque(a, nullptr);
    EXPECT_EQ(drive(opaque.authenticate("aaa.bbb.ccc"))->subject, "carol");
    EXPECT_EQ(introspections(), 2u);

    a.introspector = nullptr;
    EXPECT_THROW(TokenAuthenticator(a, nullptr), std::invalid_argument);
}

TEST(LooksLikeJwt, ThreeNonEmptyBase64UrlParts) {
    EXPECT_TRUE(looks_like_jwt("eyJ.eyJ.sig-_"));
    EXPECT_FALSE(looks_like_jwt("eyJ.eyJ."));
    EXPECT_FALSE(looks_like_jwt("eyJ..sig"));
    EXPECT_FALSE(looks_like_jwt("opaque-token"));
    EXPECT_FALSE(looks_like_jwt("a.b.c.d"));
    EXPECT_FALSE(looks_like_jwt("a.b/c.d"));
}

TEST(ScopePolicy, ToolScopesAddTheSourcesAndStepUpKeepsWhatTheTokenHas) {
    ScopePolicy policy;
    policy.tools["deploy"] = {"ops:write", "ops:read"};
    policy.sources["gh"] = {"ops:read", "gh"};
    policy.profiles["admin"] = {"admin"};
    EXPECT_EQ(policy.for_tool("deploy", "gh"), (std::vector<std::string>{"ops:write", "ops:read", "gh"}));
    EXPECT_EQ(policy.for_tool("other", "gh"), (std::vector<std::string>{"ops:read", "gh"}));
    EXPECT_TRUE(policy.for_tool("other", "").empty());
    EXPECT_EQ(policy.for_profile("admin"), (std::vector<std::string>{"admin"}));
    EXPECT_TRUE(policy.for_profile("").empty());
    EXPECT_EQ(missing_scopes({"gh", "x"}, policy.for_tool("deploy", "gh")),
              (std::vector<std::string>{"ops:write", "ops:read"}));
    EXPECT_EQ(scope_union({"x", "gh"}, {"gh", "ops:write"}), (std::vector<std::string>{"x", "gh", "ops:write"}));
    EXPECT_EQ(split_scope(" a  b c "), (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(join_scopes({"a", "b"}), "a b");
}
