// The OAuth token endpoint client (src/auth/token_endpoint.hpp) against a scripted token
// endpoint on loopback: the wire form of each client authentication method, the success
// body's parsing, error bodies as TokenEndpointError, and malformed answers.
#include <gtest/gtest.h>

#include <map>

#include "auth/jwt.hpp"
#include "auth/token_endpoint.hpp"
#include "auth_test_support.hpp"
#include "util/base64.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

json decode_part(const std::string& part) { return json::parse(*util::base64url_decode(part)); }

// A token endpoint that gives every request the same reply.
struct TokenEndpointState {
    std::mutex mutex;
    ScriptedReply reply;

    TokenEndpointState() {
        reply.headers = {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}};
        reply.body = R"({"access_token":"at-1","token_type":"Bearer","expires_in":3600})";
    }
    ScriptedReply answer(const SeenRequest&) {
        std::lock_guard lock(mutex);
        return reply;
    }
};

class TokenEndpointTest : public LoopbackAuthServerTest<TokenEndpointState> {
protected:
    void answer(unsigned status, std::string body) {
        std::lock_guard lock(state.mutex);
        state.reply.status = status;
        state.reply.body = std::move(body);
    }

    TokenResponse request(const ClientAuthentication& client,
                          std::vector<std::pair<std::string, std::string>> grant = {{"grant_type",
                                                                                     "client_credentials"},
                                                                                    {"scope", "read write"}}) {
        return drive(request_token(http, endpoint, client, std::move(grant)));
    }

    // The error request() ends with; fails the test when it succeeds.
    TokenEndpointError refused(const ClientAuthentication& client) {
        try {
            request(client);
        } catch (const TokenEndpointError& e) {
            return e;
        }
        ADD_FAILURE() << "the request did not fail";
        return TokenEndpointError(0, "", "");
    }

    SeenRequest last() const {
        auto seen = server.requests();
        EXPECT_FALSE(seen.empty());
        return seen.empty() ? SeenRequest{} : seen.back();
    }

    std::string endpoint = server.url("/oauth/token");
};

ClientAuthentication secret_client(ClientAuthentication::Method method) {
    ClientAuthentication c;
    c.method = method;
    c.client_id = "tool port:1";
    c.client_secret = "s3cr+t/ é&=";
    return c;
}

}  // namespace

TEST(TokenEndpointForm, EncodesAsTheUrlencodedSerializerDoes) {
    EXPECT_EQ(form_urlencode("AZaz09*-._"), "AZaz09*-._");
    EXPECT_EQ(form_urlencode("a b"), "a+b");
    EXPECT_EQ(form_urlencode("a+b&c=d/e:f~"), "a%2Bb%26c%3Dd%2Fe%3Af%7E");
    EXPECT_EQ(form_urlencode("é"), "%C3%A9");
    EXPECT_EQ(form_urlencode(std::string_view("\0\n", 2)), "%00%0A");
    EXPECT_EQ(form_urlencode(""), "");
}

TEST(TokenEndpointMethods, NamesRoundTrip) {
    using M = ClientAuthentication::Method;
    for (M m : {M::none, M::client_secret_basic, M::client_secret_post, M::private_key_jwt})
        EXPECT_EQ(parse_method(method_name(m)), m);
    EXPECT_FALSE(parse_method("client_secret_jwt"));
    EXPECT_FALSE(parse_method(""));
}

TEST_F(TokenEndpointTest, ClientSecretBasicFormEncodesIdAndSecretBeforeBase64) {
    auto token = request(secret_client(ClientAuthentication::Method::client_secret_basic));
    EXPECT_EQ(token.access_token, "at-1");
    EXPECT_EQ(token.token_type, "Bearer");
    ASSERT_TRUE(token.expires_in);
    EXPECT_EQ(*token.expires_in, 3600s);
    EXPECT_EQ(token.raw["access_token"], "at-1");

    auto seen = last();
    EXPECT_EQ(seen.method, "POST");
    EXPECT_EQ(seen.target, "/oauth/token");
    EXPECT_EQ(seen.header("Content-Type"), "application/x-www-form-urlencoded");
    EXPECT_EQ(seen.header("Accept"), "application/json");
    EXPECT_EQ(seen.header("Authorization"), "Basic " + util::base64_encode("tool+port%3A1:s3cr%2Bt%2F+%C3%A9%26%3D"));
    auto fields = form_fields(seen.body);
    EXPECT_EQ(fields,
              (std::map<std::string, std::string>{{"grant_type", "client_credentials"}, {"scope", "read write"}}));
    EXPECT_NE(seen.body.find("scope=read+write"), std::string::npos) << seen.body;
}

TEST_F(TokenEndpointTest, ClientSecretPostPutsTheCredentialsInTheBody) {
    request(secret_client(ClientAuthentication::Method::client_secret_post));
    auto seen = last();
    EXPECT_EQ(seen.header("Authorization"), "");
    auto fields = form_fields(seen.body);
    EXPECT_EQ(fields["client_id"], "tool port:1");
    EXPECT_EQ(fields["client_secret"], "s3cr+t/ é&=");
    EXPECT_EQ(fields["grant_type"], "client_credentials");
}

TEST_F(TokenEndpointTest, NoneSendsOnlyTheClientId) {
    ClientAuthentication client;
    client.client_id = "public-client";
    request(client, {{"grant_type", "authorization_code"},
                     {"code", "c0de"},
                     {"redirect_uri", "http://127.0.0.1:3000/callback"},
                     {"code_verifier", "v3r1f13r"},
                     {"resource", "https://mcp.example.test/mcp"}});
    auto seen = last();
    EXPECT_EQ(seen.header("Authorization"), "");
    EXPECT_EQ(form_fields(seen.body),
              (std::map<std::string, std::string>{{"grant_type", "authorization_code"},
                                                  {"code", "c0de"},
                                                  {"redirect_uri", "http://127.0.0.1:3000/callback"},
                                                  {"code_verifier", "v3r1f13r"},
                                                  {"resource", "https://mcp.example.test/mcp"},
                                                  {"client_id", "public-client"}}));
}

TEST_F(TokenEndpointTest, PrivateKeyJwtSignsAnAssertionPerRequest) {
    for (const auto& [key, alg] : std::vector<std::pair<TestKey, std::string>>{{make_ec_key("ec-1"), "ES256"},
                                                                               {make_rsa_key("rsa-1"), "RS256"}}) {
        SCOPED_TRACE(alg);
        ClientAuthentication client;
        client.method = ClientAuthentication::Method::private_key_jwt;
        client.client_id = "svc-client";
        client.private_key_pem = private_key_pem(key);
        client.key_id = key.kid;
        request(client);
        auto first = form_fields(last().body);
        request(client);
        auto second = form_fields(last().body);

        EXPECT_EQ(last().header("Authorization"), "");
        EXPECT_EQ(first["client_id"], "svc-client");
        EXPECT_EQ(first["client_assertion_type"], "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
        EXPECT_EQ(first.count("client_secret"), 0u);
        const std::string& assertion = first["client_assertion"];
        auto dot1 = assertion.find('.');
        auto dot2 = assertion.rfind('.');
        ASSERT_NE(dot1, dot2);
        auto header = decode_part(assertion.substr(0, dot1));
        auto claims = decode_part(assertion.substr(dot1 + 1, dot2 - dot1 - 1));
        EXPECT_EQ(header["alg"], alg);
        EXPECT_EQ(header["kid"], key.kid);
        EXPECT_EQ(claims["iss"], "svc-client");
        EXPECT_EQ(claims["sub"], "svc-client");
        EXPECT_EQ(claims["aud"], endpoint);
        auto now = epoch_seconds(std::chrono::system_clock::now());
        EXPECT_LE(std::abs(claims["iat"].get<long long>() - now), 5);
        EXPECT_EQ(claims["exp"].get<long long>() - claims["iat"].get<long long>(), 300);
        EXPECT_EQ(claims["jti"].get<std::string>().size(), 32u);
        // Each request has its own assertion (a replayed jti may be refused).
        EXPECT_NE(decode_part(second["client_assertion"].substr(dot1 + 1, second["client_assertion"].rfind('.') - dot1 -
                                                                              1))["jti"],
                  claims["jti"]);

        // The signature verifies with the public key.
        auto jwk = parse_jwk(public_jwk(key));
        ASSERT_TRUE(jwk);
        auto signature = util::base64url_decode(assertion.substr(dot2 + 1));
        ASSERT_TRUE(signature);
        EXPECT_TRUE(verify_signature(*alg_from_name(alg), *jwk, assertion.substr(0, dot2), *signature));
        EXPECT_FALSE(verify_signature(*alg_from_name(alg), *jwk, assertion.substr(0, dot2) + "x", *signature));
    }
}

TEST_F(TokenEndpointTest, PrivateKeyJwtAudienceCanBeTheIssuer) {
    ClientAuthentication client;
    client.method = ClientAuthentication::Method::private_key_jwt;
    client.client_id = "svc";
    client.private_key_pem = private_key_pem(make_ec_key("k"));
    client.assertion_audience = "https://as.example.test";
    request(client);
    auto assertion = form_fields(last().body)["client_assertion"];
    auto dot1 = assertion.find('.');
    auto claims = decode_part(assertion.substr(dot1 + 1, assertion.rfind('.') - dot1 - 1));
    EXPECT_EQ(claims["aud"], "https://as.example.test");
    auto header = decode_part(assertion.substr(0, dot1));
    EXPECT_FALSE(header.contains("kid"));  // none configured
}

TEST(TokenEndpointClientCheck, RefusesUnusableClients) {
    using M = ClientAuthentication::Method;
    auto refuses = [](ClientAuthentication c, const std::string& part) {
        try {
            check_client_authentication(c);
            ADD_FAILURE() << "accepted; expected: " << part;
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
        }
    };
    refuses({.method = M::none}, "client_id is empty");
    refuses({.method = M::client_secret_basic, .client_id = "c"}, "client_secret_basic needs a client_secret");
    refuses({.method = M::client_secret_post, .client_id = "c"}, "client_secret_post needs a client_secret");
    refuses({.method = M::private_key_jwt, .client_id = "c"}, "needs a private key");
    refuses({.method = M::private_key_jwt, .client_id = "c", .private_key_pem = "-----BEGIN PRIVATE KEY-----\nnope\n"},
            "not an unencrypted PEM private key");
    refuses({.method = M::private_key_jwt, .client_id = "c", .private_key_pem = private_key_pem(make_ed25519_key("e"))},
            "neither RSA nor EC P-256");
    refuses({.method = M::private_key_jwt,
             .client_id = "c",
             .private_key_pem = private_key_pem(make_ec_key("e")),
             .signing_alg = "RS256"},
            "does not fit the key (ES256)");
    refuses({.method = M::private_key_jwt,
             .client_id = "c",
             .private_key_pem = private_key_pem(make_ec_key("e")),
             .signing_alg = "HS256"},
            "RS256 or ES256");
    refuses({.method = M::private_key_jwt, .client_id = "c", .private_key_pem = private_key_pem(make_rsa_key("r", 1024))},
            "shorter than 2048 bits");

    EXPECT_NO_THROW(check_client_authentication({.method = M::none, .client_id = "c"}));
    EXPECT_NO_THROW(check_client_authentication({.method = M::private_key_jwt,
                                                 .client_id = "c",
                                                 .private_key_pem = private_key_pem(make_rsa_key("r")),
                                                 .signing_alg = "RS256"}));
}

TEST_F(TokenEndpointTest, AnErrorBodyBecomesTokenEndpointError) {
    answer(400, R"({"error":"invalid_grant","error_description":"the subject token has expired"})");
    auto e = refused(secret_client(ClientAuthentication::Method::client_secret_basic));
    EXPECT_EQ(e.status, 400u);
    EXPECT_EQ(e.error, "invalid_grant");
    EXPECT_EQ(e.description, "the subject token has expired");
    EXPECT_NE(std::string(e.what()).find("invalid_grant"), std::string::npos);
    // The client's secret appears nowhere in what the caller may log.
    EXPECT_EQ(std::string(e.what()).find("s3cr"), std::string::npos);

    answer(401, R"({"error":"invalid_client"})");
    e = refused(secret_client(ClientAuthentication::Method::client_secret_post));
    EXPECT_EQ(e.status, 401u);
    EXPECT_EQ(e.error, "invalid_client");
    EXPECT_EQ(e.description, "");

    // Control characters in the server's text do not reach messages.
    answer(400, R"({"error":"invalid_scope","error_description":"bad\nscope\u001b[31m"})");
    e = refused(secret_client(ClientAuthentication::Method::client_secret_post));
    EXPECT_EQ(e.error, "invalid_scope");
    EXPECT_EQ(e.description.find('\n'), std::string::npos);
    EXPECT_EQ(e.description.find('\x1b'), std::string::npos);
}

TEST_F(TokenEndpointTest, AnErrorWithoutAnOAuthBodyHasNoErrorCode) {
    answer(502, "<html>bad gateway</html>");
    auto e = refused(secret_client(ClientAuthentication::Method::client_secret_post));
    EXPECT_EQ(e.status, 502u);
    EXPECT_EQ(e.error, "");
    EXPECT_NE(e.description.find("without an OAuth error body"), std::string::npos) << e.description;
    EXPECT_NE(e.description.find("/oauth/token"), std::string::npos) << e.description;

    answer(400, R"({"error":42})");
    e = refused(secret_client(ClientAuthentication::Method::client_secret_post));
    EXPECT_EQ(e.error, "");
}

TEST_F(TokenEndpointTest, MalformedSuccessBodiesAreRefused) {
    auto client = secret_client(ClientAuthentication::Method::client_secret_post);
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"not json", "not a JSON object"},
        {R"(["access_token"])", "not a JSON object"},
        {R"({"token_type":"Bearer"})", "no access_token"},
        {R"({"access_token":"","token_type":"Bearer"})", "no access_token"},
        {R"({"access_token":7,"token_type":"Bearer"})", "access_token is not a string"},
        {R"({"access_token":"a"})", "no token_type"},
        {R"({"access_token":"a","token_type":"mac"})", "neither Bearer nor DPoP"},
        // N_A only for a token exchange that says it issued something else than an access token.
        {R"({"access_token":"a","token_type":"N_A"})", "neither Bearer nor DPoP"},
        {R"({"access_token":"a","token_type":"N_A","issued_token_type":"urn:ietf:params:oauth:token-type:access_token"})",
         "neither Bearer nor DPoP"},
        {R"({"access_token":"a","token_type":"Bearer","expires_in":-5})", "expires_in"},
        {R"({"access_token":"a","token_type":"Bearer","expires_in":"1h"})", "expires_in"},
        {R"({"access_token":"a","token_type":"Bearer","expires_in":true})", "expires_in"},
        {R"({"access_token":"a","token_type":"Bearer","scope":["a"]})", "scope is not a string"},
    };
    for (const auto& [body, part] : cases) {
        SCOPED_TRACE(body);
        answer(200, body);
        auto e = refused(client);
        EXPECT_EQ(e.status, 200u);
        EXPECT_EQ(e.error, "");
        EXPECT_NE(e.description.find(part), std::string::npos) << e.description;
    }
}

TEST_F(TokenEndpointTest, SuccessBodiesAreReadLeniently) {
    auto client = secret_client(ClientAuthentication::Method::client_secret_post);
    answer(200, R"({"access_token":"a","token_type":"bearer","expires_in":"120","scope":"x y",
                    "refresh_token":"r","issued_token_type":"urn:ietf:params:oauth:token-type:access_token",
                    "id_token":"i","extra":{"n":1}})");
    auto token = request(client);
    EXPECT_EQ(token.token_type, "Bearer");
    EXPECT_EQ(token.expires_in, 120s);
    EXPECT_EQ(token.scope, "x y");
    EXPECT_EQ(token.refresh_token, "r");
    EXPECT_EQ(token.issued_token_type, "urn:ietf:params:oauth:token-type:access_token");
    EXPECT_EQ(token.id_token, "i");
    EXPECT_EQ(token.raw["extra"]["n"], 1);

    answer(200, R"({"access_token":"a","token_type":"DPoP","expires_in":59.9})");
    token = request(client);
    EXPECT_EQ(token.token_type, "DPoP");
    EXPECT_EQ(token.expires_in, 59s);

    answer(200, R"({"access_token":"a","token_type":"Bearer"})");
    EXPECT_FALSE(request(client).expires_in);

    answer(200, R"({"access_token":"jag","token_type":"N_A","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag",
                    "expires_in":300})");
    token = request(client);
    EXPECT_EQ(token.token_type, "N_A");
    EXPECT_EQ(token.issued_token_type, "urn:ietf:params:oauth:token-type:id-jag");
}

TEST_F(TokenEndpointTest, AnUnusableEndpointUrlIsRefusedBeforeAnyRequest) {
    auto client = secret_client(ClientAuthentication::Method::client_secret_post);
    EXPECT_THROW(drive(request_token(http, "ftp://as.example/token", client, {{"grant_type", "client_credentials"}})),
                 std::invalid_argument);
    EXPECT_THROW(drive(request_token(http, server.url("/token#x"), client, {{"grant_type", "client_credentials"}})),
                 std::invalid_argument);
    EXPECT_TRUE(server.requests().empty());
}
