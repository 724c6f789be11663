// DiscoveredKeySource (src/auth/key_source.hpp) against a real authorization server on
// loopback (the downstream HTTP client's scripted test server): metadata discovery and its
// fallbacks, the JWKS fetch, key rotation picked up on an unknown kid, and the re-fetch floor.
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "auth/authenticator.hpp"
#include "auth/key_source.hpp"
#include "auth_test_support.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kResource = "https://mcp.example.test/mcp";

struct Keys {
    TestKey first = make_ec_key("2026-a");
    TestKey second = make_ed25519_key("2026-b");
};
const Keys& keys() {
    static const Keys k;
    return k;
}

// What the fake authorization server answers; the script runs on the server's thread.
struct AuthServerState {
    std::mutex mutex;
    std::string issuer;                                                     // set once the port is known
    std::string issuer_path;                                                // "" or "/tenant"
    std::string metadata_path = "/.well-known/oauth-authorization-server";  // the one that answers
    std::string metadata_issuer;                                            // "" = the real issuer
    std::string jwks = jwks_text(json::array());
    unsigned jwks_status = 200;

    ScriptedReply answer(const SeenRequest& request) {
        std::lock_guard lock(mutex);
        ScriptedReply reply;
        reply.headers = {{"Content-Type", "application/json"}};
        if (request.target == metadata_path) {
            reply.body = json{{"issuer", metadata_issuer.empty() ? issuer : metadata_issuer},
                              {"jwks_uri", issuer_origin() + "/keys/jwks.json"},
                              {"token_endpoint", issuer + "/token"}}
                             .dump();
        } else if (request.target == "/keys/jwks.json") {
            reply.status = jwks_status;
            reply.body = jwks;
        } else {
            reply.status = 404;
            reply.body = "{}";
        }
        return reply;
    }
    std::string issuer_origin() const { return issuer.substr(0, issuer.size() - issuer_path.size()); }
};

class KeySourceTest : public LoopbackAuthServerTest<AuthServerState> {
protected:
    DiscoveryOptions discovery() {
        return {.issuer = state.issuer,
                .refetch_floor = 30s,
                .max_age = 3600s,
                .fetch_timeout = 5s,
                .allow_http = true,
                .clock = [this] { return steady_now; }};
    }

    void publish(const std::vector<const TestKey*>& published) {
        json array = json::array();
        for (const auto* k : published) array.push_back(public_jwk(*k));
        std::lock_guard lock(state.mutex);
        state.jwks = jwks_text(array);
    }

    std::string token(const TestKey& key, const std::string& alg, const std::string& sub) {
        auto exp = epoch_seconds(std::chrono::system_clock::now() + 300s);
        return sign_token(key, alg, json{{"iss", state.issuer}, {"aud", kResource}, {"sub", sub}, {"exp", exp}});
    }

    std::chrono::steady_clock::time_point steady_now = std::chrono::steady_clock::now();
};

}  // namespace

TEST_F(KeySourceTest, MetadataThenJwks) {
    publish({&keys().first});
    DiscoveredKeySource source(http, discovery());
    auto set = drive(source.keys());
    ASSERT_EQ(set->keys.size(), 1u);
    EXPECT_EQ(set->keys[0].kid, "2026-a");
    EXPECT_EQ(source.jwks_uri(), state.issuer + "/keys/jwks.json");
    EXPECT_EQ(targets(), (std::vector<std::string>{"/.well-known/oauth-authorization-server", "/keys/jwks.json"}));
    EXPECT_EQ(server.requests()[0].header("Accept"), "application/json");
    // Within max_age the set is served as is.
    steady_now += 3599s;
    EXPECT_EQ(drive(source.keys()), set);
    EXPECT_EQ(source.stats().jwks_fetches, 1u);
    EXPECT_EQ(source.stats().metadata_fetches, 1u);
    // Past it, the JWKS is fetched again (the metadata is not).
    steady_now += 2s;
    EXPECT_NE(drive(source.keys()), set);
    EXPECT_EQ(source.stats().jwks_fetches, 2u);
    EXPECT_EQ(source.stats().metadata_fetches, 1u);
}

TEST_F(KeySourceTest, OpenIdConfigurationIsTheFallback) {
    publish({&keys().first});
    {
        std::lock_guard lock(state.mutex);
        state.metadata_path = "/.well-known/openid-configuration";
    }
    DiscoveredKeySource source(http, discovery());
    EXPECT_EQ(drive(source.keys())->keys.size(), 1u);
    EXPECT_EQ(targets(), (std::vector<std::string>{"/.well-known/oauth-authorization-server",
                                                   "/.well-known/openid-configuration", "/keys/jwks.json"}));
}

TEST_F(KeySourceTest, AnIssuerWithAPathIsLookedUpInEveryListedForm) {
    publish({&keys().second});
    {
        std::lock_guard lock(state.mutex);
        state.issuer_path = "/tenant/one";
        state.issuer += state.issuer_path;
        state.metadata_path = "/tenant/one/.well-known/openid-configuration";
    }
    DiscoveredKeySource source(http, discovery());
    EXPECT_EQ(drive(source.keys())->keys.at(0).kid, "2026-b");
    EXPECT_EQ(targets(), (std::vector<std::string>{"/.well-known/oauth-authorization-server/tenant/one",
                                                   "/.well-known/openid-configuration/tenant/one",
                                                   "/tenant/one/.well-known/openid-configuration", "/keys/jwks.json"}));
    EXPECT_EQ(DiscoveredKeySource::metadata_urls("https://as.example.test/"),
              (std::vector<std::string>{"https://as.example.test/.well-known/oauth-authorization-server",
                                        "https://as.example.test/.well-known/openid-configuration"}));
}

TEST_F(KeySourceTest, MetadataForAnotherIssuerOrNoMetadataGivesNoKeys) {
    publish({&keys().first});
    {
        std::lock_guard lock(state.mutex);
        state.metadata_issuer = "https://impostor.example.test";
    }
    DiscoveredKeySource source(http, discovery());
    EXPECT_THROW(drive(source.keys()), KeySourceError);
    // Not again within the floor, even for keys().
    EXPECT_THROW(drive(source.keys()), KeySourceError);
    EXPECT_EQ(source.stats().metadata_fetches, 1u);
    EXPECT_EQ(source.stats().failures, 1u);
    {
        std::lock_guard lock(state.mutex);
        state.metadata_path = "/nowhere";
    }
    steady_now += 31s;
    try {
        drive(source.keys());
        ADD_FAILURE();
    } catch (const KeySourceError& e) {
        EXPECT_NE(std::string(e.what()).find("openid-configuration (404)"), std::string::npos) << e.what();
    }
    EXPECT_EQ(source.stats().metadata_fetches, 3u);
}

TEST_F(KeySourceTest, AJwksWithoutUsableKeysOrAFailedFetchGivesNoKeys) {
    DiscoveredKeySource source(http, discovery());
    EXPECT_THROW(drive(source.keys()), KeySourceError);  // an empty set
    {
        std::lock_guard lock(state.mutex);
        state.jwks_status = 500;
    }
    steady_now += 31s;
    EXPECT_THROW(drive(source.keys()), KeySourceError);
}

TEST_F(KeySourceTest, AFailedRefetchKeepsTheKeysItHad) {
    publish({&keys().first});
    DiscoveredKeySource source(http, discovery());
    auto set = drive(source.keys());
    {
        std::lock_guard lock(state.mutex);
        state.jwks_status = 503;
    }
    steady_now += 3601s;
    EXPECT_EQ(drive(source.keys()), set);
    EXPECT_EQ(source.stats().failures, 1u);
    // The JWKS URL that failed is forgotten: the next attempt (after the floor) looks the
    // metadata up again.
    EXPECT_EQ(source.jwks_uri(), "");
    steady_now += 10s;
    EXPECT_EQ(drive(source.keys()), set);  // within the floor: no request
    EXPECT_EQ(source.stats().jwks_fetches, 2u);
    {
        std::lock_guard lock(state.mutex);
        state.jwks_status = 200;
    }
    steady_now += 21s;
    EXPECT_NE(drive(source.keys()), set);
    EXPECT_EQ(source.stats().metadata_fetches, 2u);
    EXPECT_EQ(source.stats().jwks_fetches, 3u);
}

TEST_F(KeySourceTest, KeyRotationIsPickedUpOnAnUnknownKidButNeverMoreOftenThanTheFloor) {
    publish({&keys().first});
    auto source = std::make_shared<DiscoveredKeySource>(http, discovery());
    TokenAuthenticator authn({.verifier = {.issuer = state.issuer, .audiences = {kResource}}}, source);
    EXPECT_EQ(drive(authn.authenticate(token(keys().first, "ES256", "alice")))->subject, "alice");
    EXPECT_EQ(source->stats().jwks_fetches, 1u);

    // The server rotates to a new key; a token signed with it names a kid the set lacks,
    // so the set is fetched again. (The floor counts from the last fetch: 31 s ago.)
    steady_now += 31s;
    publish({&keys().first, &keys().second});
    EXPECT_EQ(drive(authn.authenticate(token(keys().second, "EdDSA", "bob")))->subject, "bob");
    EXPECT_EQ(source->stats().jwks_fetches, 2u);

    // Tokens with made-up kids right after: refused without asking the server again.
    TestKey forged = make_ec_key("made-up");
    for (int i = 0; i < 5; ++i) {
        try {
            drive(authn.authenticate(token(forged, "ES256", "mallory" + std::to_string(i))));
            ADD_FAILURE();
        } catch (const TokenError& e) {
            EXPECT_EQ(e.reason(), TokenErrorReason::unknown_kid);
        }
    }
    EXPECT_EQ(source->stats().jwks_fetches, 2u);
    // Once the floor has passed, one more fetch (which still lacks the kid).
    steady_now += 30s;
    EXPECT_THROW(drive(authn.authenticate(token(forged, "ES256", "mallory"))), TokenError);
    EXPECT_EQ(source->stats().jwks_fetches, 3u);
    // The known tokens were cached: no fetch, no signature check.
    auto checks = authn.verifier().signature_checks();
    EXPECT_EQ(drive(authn.authenticate(token(keys().first, "ES256", "alice")))->subject, "alice");
    EXPECT_EQ(authn.verifier().signature_checks(), checks + 1);  // ECDSA signs anew each time: a new token, verified
    EXPECT_EQ(source->stats().jwks_fetches, 3u);
}

TEST_F(KeySourceTest, ConcurrentCallersShareOneFetch) {
    publish({&keys().first});
    DiscoveredKeySource source(http, discovery());
    std::vector<std::shared_ptr<const KeySet>> got;
    int done = 0;
    for (int i = 0; i < 4; ++i) {
        spawn(source.keys(), [&](std::optional<std::shared_ptr<const KeySet>> r, std::exception_ptr e) {
            EXPECT_FALSE(e);
            if (r) got.push_back(*r);
            ++done;
        });
    }
    while (done < 4 && io.run_one_for(10s) > 0) {}
    ASSERT_EQ(got.size(), 4u);
    for (const auto& s : got) EXPECT_EQ(s, got[0]);
    EXPECT_EQ(source.stats().jwks_fetches, 1u);
    EXPECT_EQ(source.stats().metadata_fetches, 1u);
}

TEST_F(KeySourceTest, HttpsIsRequiredUnlessAllowedAndWorksWithTheClientsCaFile) {
    auto plain = discovery();
    plain.allow_http = false;
    EXPECT_THROW({ DiscoveredKeySource s(http, plain); }, std::invalid_argument);
    plain.issuer = "https://as.example.test/?tenant=1";
    EXPECT_THROW({ DiscoveredKeySource s(http, plain); }, std::invalid_argument);
    plain.issuer = "https://as.example.test";
    plain.jwks_uri = "http://as.example.test/jwks";
    EXPECT_THROW({ DiscoveredKeySource s(http, plain); }, std::invalid_argument);

    TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    AuthServerState tls_state;
    ScriptedServer tls_server([&](const SeenRequest& r) { return tls_state.answer(r); }, &leaf);
    tls_state.issuer = "https://127.0.0.1:" + std::to_string(tls_server.port());
    tls_state.jwks = jwks_text(json::array({public_jwk(keys().second)}));
    auto options = loopback_client_options();
    options.ca_file = ca.write_cert_file("auth_key_source_ca.pem");
    http_client::HttpClient https(executor, options);
    DiscoveredKeySource source(https, {.issuer = tls_state.issuer});
    EXPECT_EQ(drive(source.keys())->keys.at(0).kid, "2026-b");
}
