// The verified-token cache (src/auth/token_cache.hpp) and the authenticator around it
// (src/auth/authenticator.hpp): a cache hit skips the signature check, entries end at the
// token's exp, the cache stays within its bound, an unknown kid asks the key source to
// refresh, and a key source without keys makes keys_unavailable.
#include <gtest/gtest.h>

#include "auth/authenticator.hpp"
#include "auth/token_cache.hpp"
#include "auth_test_support.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;
using namespace std::chrono_literals;

namespace {

const std::string kIssuer = "https://as.example.test";
const std::string kResource = "https://mcp.example.test/mcp";

const TestKey& ec_key() {
    static const TestKey k = make_ec_key("k1");
    return k;
}
const TestKey& rotated_key() {
    static const TestKey k = make_ed25519_key("k2");
    return k;
}

KeySet set_of(const std::vector<const TestKey*>& keys) {
    json array = json::array();
    for (const auto* k : keys) array.push_back(public_jwk(*k));
    return parse_jwks(jwks_text(array));
}

// Runs a task that completes without an event loop (the sources here never wait).
template <typename T>
T run_now(Task<T> task) {
    std::optional<T> result;
    std::exception_ptr error;
    bool done = false;
    spawn(std::move(task), [&](std::optional<T> r, std::exception_ptr e) {
        result = std::move(r);
        error = e;
        done = true;
    });
    EXPECT_TRUE(done);
    if (error) std::rethrow_exception(error);
    return std::move(*result);
}

// A key source whose set the test replaces, counting what it is asked.
class ScriptedKeySource final : public KeySource {
public:
    explicit ScriptedKeySource(KeySet initial) : current(std::make_shared<const KeySet>(std::move(initial))) {}
    Task<std::shared_ptr<const KeySet>> keys() override {
        ++keys_calls;
        if (!current) throw KeySourceError("the authorization server is down");
        co_return current;
    }
    Task<std::shared_ptr<const KeySet>> refresh(std::shared_ptr<const KeySet> seen) override {
        ++refresh_calls;
        if (next) current = std::exchange(next, nullptr);
        if (!current) throw KeySourceError("the authorization server is down");
        co_return current;
    }
    std::shared_ptr<const KeySet> current;
    std::shared_ptr<const KeySet> next;  // what the next refresh finds
    int keys_calls = 0;
    int refresh_calls = 0;
};

class AuthenticatorTest : public ::testing::Test {
protected:
    json claims(const std::string& sub, std::chrono::seconds lifetime = 300s) const {
        return {{"iss", kIssuer},
                {"aud", kResource},
                {"sub", sub},
                {"exp", epoch_seconds(now + lifetime)},
                {"scope", "read"}};
    }

    std::shared_ptr<const VerifiedToken> authenticate(const std::string& token) {
        return run_now(authn.authenticate(token));
    }
    TokenErrorReason refusal(const std::string& token) {
        try {
            authenticate(token);
        } catch (const TokenError& e) {
            return e.reason();
        }
        ADD_FAILURE() << "accepted";
        return TokenErrorReason::malformed;
    }

    std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
    std::shared_ptr<ScriptedKeySource> source = std::make_shared<ScriptedKeySource>(set_of({&ec_key()}));
    TokenAuthenticator authn{{.verifier = {.issuer = kIssuer, .audiences = {kResource}},
                              .cache_capacity = 100,
                              .clock = [this] { return now; }},
                             source};
};

VerifiedToken verified_until(std::chrono::system_clock::time_point exp, const std::string& sub = "s") {
    VerifiedToken t;
    t.subject = sub;
    t.expires_at = exp;
    return t;
}

}  // namespace

TEST_F(AuthenticatorTest, ACacheHitSkipsTheSignatureCheck) {
    std::string alice = sign_token(ec_key(), "ES256", claims("alice"));
    auto first = authenticate(alice);
    EXPECT_EQ(first->subject, "alice");
    EXPECT_EQ(authn.verifier().signature_checks(), 1u);
    for (int i = 0; i < 5; ++i) {
        auto again = authenticate(alice);
        EXPECT_EQ(again, first);  // the same verified record
    }
    EXPECT_EQ(authn.verifier().signature_checks(), 1u);
    EXPECT_EQ(source->keys_calls, 1);  // hits do not even ask for keys
    // Another token is verified on its own.
    EXPECT_EQ(authenticate(sign_token(ec_key(), "ES256", claims("bob")))->subject, "bob");
    EXPECT_EQ(authn.verifier().signature_checks(), 2u);
    EXPECT_EQ(authn.cache().size(), 2u);
}

TEST_F(AuthenticatorTest, RefusedTokensAreNotCached) {
    auto c = claims("mallory");
    c["aud"] = "https://elsewhere.example.test";
    std::string token = sign_token(ec_key(), "ES256", c);
    EXPECT_EQ(refusal(token), TokenErrorReason::wrong_audience);
    EXPECT_EQ(refusal(token), TokenErrorReason::wrong_audience);
    EXPECT_EQ(authn.verifier().signature_checks(), 2u);
    EXPECT_EQ(authn.cache().size(), 0u);
    EXPECT_EQ(refusal(std::string(20000, 'a')), TokenErrorReason::too_large);
}

TEST_F(AuthenticatorTest, CachedTokensExpireAtTheirExp) {
    std::string token = sign_token(ec_key(), "ES256", claims("alice", 100s));
    authenticate(token);
    now += 99s;
    EXPECT_EQ(authenticate(token)->subject, "alice");
    EXPECT_EQ(authn.verifier().signature_checks(), 1u);
    // At exp the cache no longer answers: the token is verified again (still within the
    // verifier's skew), and not cached again, since it has expired.
    now += 1s;
    EXPECT_EQ(authenticate(token)->subject, "alice");
    EXPECT_EQ(authn.verifier().signature_checks(), 2u);
    EXPECT_EQ(authn.cache().size(), 0u);
    // Past the skew it is refused, from the cache or not.
    now += 61s;
    EXPECT_EQ(refusal(token), TokenErrorReason::expired);
}

TEST_F(AuthenticatorTest, AnUnknownKidAsksTheKeySourceToRefresh) {
    std::string rotated = sign_token(rotated_key(), "EdDSA", claims("carol"));
    // The source has nothing newer: refused as unknown_kid.
    EXPECT_EQ(refusal(rotated), TokenErrorReason::unknown_kid);
    EXPECT_EQ(source->refresh_calls, 1);
    // The authorization server rotated its keys: the refresh finds the new one.
    source->next = std::make_shared<const KeySet>(set_of({&ec_key(), &rotated_key()}));
    EXPECT_EQ(authenticate(rotated)->subject, "carol");
    EXPECT_EQ(source->refresh_calls, 2);
    // Other refusals do not refresh.
    auto c = claims("dave");
    c["iss"] = "https://other.example.test";
    EXPECT_EQ(refusal(sign_token(ec_key(), "ES256", c)), TokenErrorReason::wrong_issuer);
    EXPECT_EQ(source->refresh_calls, 2);
}

TEST_F(AuthenticatorTest, NoKeysMakesKeysUnavailable) {
    source->current = nullptr;
    EXPECT_EQ(refusal(sign_token(ec_key(), "ES256", claims("erin"))), TokenErrorReason::keys_unavailable);
}

TEST(StaticKeySource, AlwaysGivesItsSet) {
    StaticKeySource source(set_of({&ec_key()}));
    auto a = run_now(source.keys());
    EXPECT_EQ(a->keys.size(), 1u);
    EXPECT_EQ(run_now(source.refresh(a)), a);
}

TEST(VerifiedTokenCache, EntriesEndAtExpAndTheSizeIsBounded) {
    auto t0 = std::chrono::system_clock::now();
    VerifiedTokenCache cache(3);
    cache.insert("a", std::make_shared<const VerifiedToken>(verified_until(t0 + 40s, "a")), t0);
    cache.insert("b", std::make_shared<const VerifiedToken>(verified_until(t0 + 10s, "b")), t0);
    cache.insert("c", std::make_shared<const VerifiedToken>(verified_until(t0 + 30s, "c")), t0);
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.find("b", t0 + 9s)->subject, "b");
    EXPECT_EQ(cache.find("b", t0 + 10s), nullptr);  // at exp
    EXPECT_EQ(cache.size(), 2u);                    // and dropped
    cache.insert("b", std::make_shared<const VerifiedToken>(verified_until(t0 + 10s, "b")), t0);
    // Full: the entry that expires soonest ("b") makes room.
    cache.insert("d", std::make_shared<const VerifiedToken>(verified_until(t0 + 50s, "d")), t0);
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.find("b", t0), nullptr);
    EXPECT_NE(cache.find("a", t0), nullptr);
    EXPECT_NE(cache.find("c", t0), nullptr);
    EXPECT_NE(cache.find("d", t0), nullptr);
    // Expired entries go before live ones: at t0+35 "c" has expired, so "a" stays.
    cache.insert("e", std::make_shared<const VerifiedToken>(verified_until(t0 + 60s, "e")), t0 + 35s);
    EXPECT_EQ(cache.size(), 3u);
    EXPECT_EQ(cache.find("c", t0 + 35s), nullptr);
    EXPECT_NE(cache.find("a", t0 + 35s), nullptr);
    EXPECT_NE(cache.find("e", t0 + 35s), nullptr);
    // Something already expired is not stored; nor is anything in a cache of capacity 0.
    cache.insert("f", std::make_shared<const VerifiedToken>(verified_until(t0 + 1s, "f")), t0 + 35s);
    EXPECT_EQ(cache.find("f", t0), nullptr);
    VerifiedTokenCache none(0);
    none.insert("a", std::make_shared<const VerifiedToken>(verified_until(t0 + 40s)), t0);
    EXPECT_EQ(none.find("a", t0), nullptr);
    cache.clear();
    EXPECT_EQ(cache.size(), 0u);
}

TEST(VerifiedTokenCache, ManyTokensStayWithinTheBound) {
    auto t0 = std::chrono::system_clock::now();
    VerifiedTokenCache cache(100);
    for (int i = 0; i < 1000; ++i) {
        cache.insert("token-" + std::to_string(i),
                     std::make_shared<const VerifiedToken>(verified_until(t0 + std::chrono::seconds(1000 + i))), t0);
        ASSERT_LE(cache.size(), 100u);
    }
    // The ones kept are those that expire last.
    EXPECT_NE(cache.find("token-999", t0), nullptr);
    EXPECT_NE(cache.find("token-900", t0), nullptr);
    EXPECT_EQ(cache.find("token-899", t0), nullptr);
}
