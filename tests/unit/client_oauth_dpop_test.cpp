// DPoP (RFC 9449) in the CLI's OAuth client: the proofs DpopKey makes (header, claims, and a
// signature checked here with OpenSSL against the jwk the proof carries), htu and ath, and
// the authorizer against a loopback authorization server (ScriptedServer) that binds tokens
// and insists on its nonces: the token request retried once with the nonce, the key kept
// with the token in the store, refresh proven with the same key, the MCP server's nonce.
#include <gtest/gtest.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include <sys/stat.h>

#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "auth/token_endpoint.hpp"
#include "client/oauth/dpop.hpp"
#include "client/oauth/oauth_authorizer.hpp"
#include "client_oauth_test_support.hpp"
#include "http_client/http_client.hpp"
#include "util/base64.hpp"

namespace toolport::client::oauth {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using test_support::ScriptedReply;
using test_support::ScriptedServer;
using test_support::SeenRequest;

struct DecodedProof {
    json header, claims;
    bool signature_ok = false;
};

// Decodes a compact JWS and checks its ES256 signature with the P-256 key of its jwk header.
DecodedProof decode(const std::string& jws) {
    DecodedProof out;
    auto dot1 = jws.find('.');
    auto dot2 = jws.find('.', dot1 + 1);
    if (dot1 == std::string::npos || dot2 == std::string::npos) return out;
    out.header = json::parse(util::base64url_decode(jws.substr(0, dot1)).value_or("null"));
    out.claims = json::parse(util::base64url_decode(jws.substr(dot1 + 1, dot2 - dot1 - 1)).value_or("null"));
    auto signature = util::base64url_decode(jws.substr(dot2 + 1)).value_or("");
    if (!out.header.contains("jwk") || signature.size() != 64) return out;
    const auto& jwk = out.header["jwk"];
    std::string point = "\x04" + util::base64url_decode(jwk.value("x", "")).value_or("") +
                        util::base64url_decode(jwk.value("y", "")).value_or("");
    if (point.size() != 65) return out;

    OSSL_PARAM_BLD* bld = OSSL_PARAM_BLD_new();
    OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0);
    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size());
    OSSL_PARAM* params = OSSL_PARAM_BLD_to_param(bld);
    EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new_from_name(nullptr, "EC", nullptr);
    EVP_PKEY* key = nullptr;
    EVP_PKEY_fromdata_init(ctx);
    EVP_PKEY_fromdata(ctx, &key, EVP_PKEY_PUBLIC_KEY, params);
    EVP_PKEY_CTX_free(ctx);
    OSSL_PARAM_free(params);
    OSSL_PARAM_BLD_free(bld);
    if (!key) return out;

    // JOSE's r||s to the DER form OpenSSL verifies.
    ECDSA_SIG* sig = ECDSA_SIG_new();
    const auto* raw = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG_set0(sig, BN_bin2bn(raw, 32, nullptr), BN_bin2bn(raw + 32, 32, nullptr));
    unsigned char* der = nullptr;
    int der_length = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    const std::string input = jws.substr(0, dot2);
    EVP_MD_CTX* md = EVP_MD_CTX_new();
    out.signature_ok = EVP_DigestVerifyInit(md, nullptr, EVP_sha256(), nullptr, key) == 1 &&
                       EVP_DigestVerify(md, der, static_cast<std::size_t>(der_length),
                                        reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
    EVP_MD_CTX_free(md);
    OPENSSL_free(der);
    EVP_PKEY_free(key);
    return out;
}

TEST(DpopProof, HeaderClaimsAndSignature) {
    auto key = DpopKey::generate();
    auto proof = decode(key.proof("POST", "https://as.example.com/token?x=1#frag"));
    EXPECT_TRUE(proof.signature_ok);
    EXPECT_EQ(proof.header["typ"], "dpop+jwt");
    EXPECT_EQ(proof.header["alg"], "ES256");
    const auto& jwk = proof.header["jwk"];
    EXPECT_EQ(jwk["kty"], "EC");
    EXPECT_EQ(jwk["crv"], "P-256");
    EXPECT_FALSE(jwk.contains("d"));  // the public key only
    EXPECT_EQ(jwk, key.public_jwk());
    EXPECT_EQ(proof.claims["htm"], "POST");
    EXPECT_EQ(proof.claims["htu"], "https://as.example.com/token");
    EXPECT_EQ(proof.claims["jti"].get<std::string>().size(), 32u);
    EXPECT_LE(std::abs(proof.claims["iat"].get<std::int64_t>() - static_cast<std::int64_t>(std::time(nullptr))), 5);
    EXPECT_FALSE(proof.claims.contains("ath"));    // no token at the token endpoint
    EXPECT_FALSE(proof.claims.contains("nonce"));  // none given

    auto second = decode(key.proof("GET", "http://127.0.0.1:9/mcp", "the-token", "n-1"));
    EXPECT_TRUE(second.signature_ok);
    EXPECT_EQ(second.claims["htm"], "GET");
    EXPECT_EQ(second.claims["ath"], dpop_ath("the-token"));
    EXPECT_EQ(second.claims["nonce"], "n-1");
    EXPECT_NE(second.claims["jti"], proof.claims["jti"]);  // fresh per proof
}

TEST(DpopProof, HtuLeavesOutQueryAndFragment) {
    EXPECT_EQ(dpop_htu("https://h.example/mcp?session=1"), "https://h.example/mcp");
    EXPECT_EQ(dpop_htu("https://h.example/mcp#top"), "https://h.example/mcp");
    EXPECT_EQ(dpop_htu("https://h.example/a/b?q=1#f"), "https://h.example/a/b");
    EXPECT_EQ(dpop_htu("http://127.0.0.1:8080/mcp"), "http://127.0.0.1:8080/mcp");
}

TEST(DpopProof, AthIsTheBase64urlSha256OfTheToken) {
    // RFC 9449 §7.1's example token and its ath.
    EXPECT_EQ(dpop_ath("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"), "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo");
}

TEST(DpopProof, AKeyReadBackFromItsPemIsTheSameKey) {
    auto key = DpopKey::generate();
    auto again = DpopKey::from_pem(key.pem());
    EXPECT_EQ(again.public_jwk(), key.public_jwk());
    EXPECT_TRUE(decode(again.proof("POST", "https://a/t")).signature_ok);
    EXPECT_NE(DpopKey::generate().public_jwk(), key.public_jwk());
    EXPECT_THROW(DpopKey::from_pem("not a key"), std::invalid_argument);
}

// The authorization server: metadata advertising ES256 DPoP proofs, a token endpoint that
// wants its nonce in proofs (RFC 9449 §8) and binds what it issues to the proof's key.
struct DpopServer {
    std::mutex mutex;
    std::string base;
    std::string nonce = "as-nonce-1";
    bool nonce_never_accepted = false;  // answers use_dpop_nonce to every proof
    int tokens_issued = 0;

    ScriptedReply answer(const SeenRequest& r) {
        std::lock_guard lock(mutex);
        ScriptedReply reply;
        reply.headers = {{"Content-Type", "application/json"}};
        const std::string path = test_support::path_of(r.target);
        if (path == "/.well-known/oauth-protected-resource/mcp") {
            reply.body = json{{"resource", base + "/mcp"}, {"authorization_servers", {base}}}.dump();
        } else if (path == "/.well-known/oauth-authorization-server") {
            reply.body = json{{"issuer", base},
                              {"token_endpoint", base + "/token"},
                              {"token_endpoint_auth_methods_supported", {"client_secret_basic"}},
                              {"dpop_signing_alg_values_supported", {"ES256"}}}
                             .dump();
        } else if (path == "/token" && r.method == "POST") {
            auto proof = decode(r.header("DPoP"));
            if (!proof.signature_ok || nonce_never_accepted || proof.claims.value("nonce", "") != nonce) {
                reply.status = 400;
                reply.headers.emplace_back("DPoP-Nonce", nonce);
                reply.body = R"({"error":"use_dpop_nonce","error_description":"a nonce is required"})";
                return reply;
            }
            ++tokens_issued;
            reply.headers.emplace_back("DPoP-Nonce", nonce);
            reply.body = json{{"access_token", "at-" + std::to_string(tokens_issued)},
                              {"token_type", "DPoP"},
                              {"expires_in", 3600},
                              {"refresh_token", "rt-" + std::to_string(tokens_issued)}}
                             .dump();
        } else {
            reply.status = 404;
            reply.body = "{}";
        }
        return reply;
    }
};

class DpopFlowTest : public test_support::LoopbackAuthorizationServerTest<DpopServer> {
protected:
    OAuthOptions options() {
        OAuthOptions o;
        o.server_url = as.base + "/mcp";
        o.store_path = dir + "/toolport/oauth-tokens.json";
        o.grant = OAuthOptions::Grant::client_credentials;
        o.identity.client_id = "machine";
        o.identity.client_secret = "s3cret";
        return o;
    }

    std::vector<SeenRequest> token_requests() const { return requests_to("/token"); }

    std::string challenge() const { return challenge_of("DPoP"); }

    static std::string header(const std::vector<std::pair<std::string, std::string>>& headers, const std::string& name) {
        for (const auto& [n, v] : headers) {
            if (n == name) return v;
        }
        return "";
    }
};

TEST_F(DpopFlowTest, TokenRequestRetriedOnceWithTheNonceAndTheBoundTokenSentWithProofs) {
    OAuthAuthorizer authorizer(executor, options());
    ASSERT_TRUE(drive(authorizer.refused_request(401, challenge(), "")));

    auto tokens = token_requests();
    ASSERT_EQ(tokens.size(), 2u);  // refused for want of the nonce, then granted
    auto first = decode(tokens[0].header("DPoP"));
    auto second = decode(tokens[1].header("DPoP"));
    EXPECT_TRUE(first.signature_ok && second.signature_ok);
    EXPECT_FALSE(first.claims.contains("nonce"));
    EXPECT_EQ(second.claims["nonce"], "as-nonce-1");
    EXPECT_EQ(second.claims["htm"], "POST");
    EXPECT_EQ(second.claims["htu"], as.base + "/token");
    EXPECT_FALSE(second.claims.contains("ath"));
    EXPECT_EQ(first.header["jwk"], second.header["jwk"]);  // one key per authorization

    // Every MCP request: Authorization: DPoP and a fresh proof of the same key, with ath.
    auto headers = drive(authorizer.request_headers("POST", as.base + "/mcp?x=1"));
    EXPECT_EQ(header(headers, "Authorization"), "DPoP at-1");
    auto proof = decode(header(headers, "DPoP"));
    EXPECT_TRUE(proof.signature_ok);
    EXPECT_EQ(proof.header["jwk"], second.header["jwk"]);
    EXPECT_EQ(proof.claims["htm"], "POST");
    EXPECT_EQ(proof.claims["htu"], as.base + "/mcp");
    EXPECT_EQ(proof.claims["ath"], dpop_ath("at-1"));
    EXPECT_FALSE(proof.claims.contains("nonce"));
    auto get = decode(header(drive(authorizer.request_headers("GET", as.base + "/mcp")), "DPoP"));
    EXPECT_EQ(get.claims["htm"], "GET");
    EXPECT_NE(get.claims["jti"], proof.claims["jti"]);

    // The MCP server's nonce (RFC 9449 §9): the request goes again, no new token, and every
    // later proof carries it.
    EXPECT_TRUE(drive(authorizer.refused_request(401, "DPoP error=\"use_dpop_nonce\"", "rs-nonce-1")));
    EXPECT_EQ(token_requests().size(), 2u);
    auto with_nonce = decode(header(drive(authorizer.request_headers("DELETE", as.base + "/mcp")), "DPoP"));
    EXPECT_EQ(with_nonce.claims["nonce"], "rs-nonce-1");
    EXPECT_EQ(with_nonce.claims["htm"], "DELETE");
}

TEST_F(DpopFlowTest, TheKeyIsKeptWithTheTokenAndProvesTheRefresh) {
    std::string jwk;
    {
        OAuthAuthorizer authorizer(executor, options());
        ASSERT_TRUE(drive(authorizer.refused_request(401, challenge(), "")));
        jwk = decode(token_requests().back().header("DPoP")).header["jwk"].dump();
    }
    const std::string path = dir + "/toolport/oauth-tokens.json";
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    auto stored = json::parse(text.str())["servers"][as.base + "/mcp"]["tokens"];
    EXPECT_EQ(stored["token_type"], "DPoP");
    ASSERT_TRUE(stored["dpop_key"].is_string());
    EXPECT_EQ(DpopKey::from_pem(stored["dpop_key"].get<std::string>()).public_jwk().dump(), jwk);

    // The next command: the kept token goes with proofs of the kept key, and a refused one
    // is refreshed with a proof of that key too (the new authorizer learns the nonce anew).
    OAuthAuthorizer next(executor, options());
    auto headers = drive(next.request_headers("POST", as.base + "/mcp"));
    EXPECT_EQ(header(headers, "Authorization"), "DPoP at-1");
    EXPECT_EQ(decode(header(headers, "DPoP")).header["jwk"].dump(), jwk);
    ASSERT_TRUE(drive(next.refused_request(401, "DPoP error=\"invalid_token\"", "")));
    auto tokens = token_requests();
    ASSERT_EQ(tokens.size(), 4u);
    EXPECT_NE(tokens[3].body.find("grant_type=refresh_token"), std::string::npos);
    auto refresh = decode(tokens[3].header("DPoP"));
    EXPECT_TRUE(refresh.signature_ok);
    EXPECT_EQ(refresh.header["jwk"].dump(), jwk);
    EXPECT_EQ(refresh.claims["nonce"], "as-nonce-1");
    EXPECT_EQ(header(drive(next.request_headers("POST", as.base + "/mcp")), "Authorization"), "DPoP at-2");
}

TEST_F(DpopFlowTest, ANonceRefusedAgainIsNotRetriedForever) {
    as.nonce_never_accepted = true;
    OAuthAuthorizer authorizer(executor, options());
    try {
        drive(authorizer.refused_request(401, challenge(), ""));
        FAIL() << "a token was reported";
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("use_dpop_nonce"), std::string::npos) << e.what();
    }
    EXPECT_EQ(token_requests().size(), 2u);  // the first and one retry with the nonce
}

TEST_F(DpopFlowTest, RequestTokenSendsExtraHeadersAndReportsTheNonce) {
    http_client::ClientOptions o;
    o.proxy = http_client::ProxySettings{};  // loopback, whatever the environment says
    http_client::HttpClient http(executor, o);
    auth::ClientAuthentication client;
    client.client_id = "c";
    const std::string endpoint = as.base + "/token";
    auto key = DpopKey::generate();
    auth::TokenRequestExtras extras;
    extras.headers.emplace_back("DPoP", key.proof("POST", endpoint));
    try {
        drive(auth::request_token(http, endpoint, client, {{"grant_type", "client_credentials"}}, {}, extras));
        FAIL() << "a proof without the nonce was accepted";
    } catch (const auth::TokenEndpointError& e) {
        EXPECT_EQ(e.error, "use_dpop_nonce");
        EXPECT_EQ(e.dpop_nonce, "as-nonce-1");
    }
    extras.headers = {{"DPoP", key.proof("POST", endpoint, {}, "as-nonce-1")}};
    auto token = drive(auth::request_token(http, endpoint, client, {{"grant_type", "client_credentials"}}, {}, extras));
    EXPECT_EQ(token.token_type, "DPoP");
    EXPECT_EQ(token.dpop_nonce, "as-nonce-1");
    // Without extras nothing changes for other callers.
    EXPECT_THROW(drive(auth::request_token(http, endpoint, client, {{"grant_type", "client_credentials"}})),
                 auth::TokenEndpointError);
    EXPECT_TRUE(token_requests().back().header("DPoP").empty());
}

}  // namespace
}  // namespace toolport::client::oauth
