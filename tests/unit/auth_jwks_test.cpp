// JWKS parsing (src/auth/jwks.hpp): the keys Toolport can verify with become OpenSSL keys,
// the others are skipped with a reason, and a document that is no JWKS is refused.
#include <openssl/evp.h>

#include <gtest/gtest.h>

#include "auth/jwks.hpp"
#include "auth/jwt.hpp"
#include "auth_test_support.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;

namespace {

struct Keys {
    TestKey rsa = make_rsa_key("r1");
    TestKey ec = make_ec_key("e1");
    TestKey ed = make_ed25519_key("o1");
};
const Keys& keys() {
    static const Keys k;
    return k;
}

// The reason the only key of `jwk` is skipped.
std::string skip_reason(const json& jwk) {
    KeySet set = parse_jwks(jwks_text(json::array({jwk})));
    EXPECT_TRUE(set.keys.empty());
    if (set.skipped.size() != 1) {
        ADD_FAILURE() << "not skipped: " << jwk.dump();
        return "";
    }
    return set.skipped[0].reason;
}

}  // namespace

TEST(Jwks, RsaEcAndEd25519KeysBecomeOpenSslPublicKeys) {
    KeySet set = parse_jwks(jwks_text(
        json::array({public_jwk(keys().rsa, "RS256"), public_jwk(keys().ec), public_jwk(keys().ed, "EdDSA")})));
    ASSERT_EQ(set.keys.size(), 3u);
    EXPECT_TRUE(set.skipped.empty());
    EXPECT_EQ(set.keys[0].type, KeyType::rsa);
    EXPECT_EQ(EVP_PKEY_get_bits(set.keys[0].key.get()), 2048);
    EXPECT_EQ(set.keys[0].alg, Alg::RS256);
    EXPECT_EQ(set.keys[1].type, KeyType::ec_p256);
    EXPECT_FALSE(set.keys[1].alg.has_value());
    EXPECT_EQ(set.keys[2].type, KeyType::ed25519);
    EXPECT_EQ(EVP_PKEY_get_id(set.keys[2].key.get()), EVP_PKEY_ED25519);
    // The parsed public keys are the generated ones.
    EXPECT_EQ(EVP_PKEY_eq(set.keys[0].key.get(), keys().rsa.pair.get()), 1);
    EXPECT_EQ(EVP_PKEY_eq(set.keys[1].key.get(), keys().ec.pair.get()), 1);
    EXPECT_EQ(EVP_PKEY_eq(set.keys[2].key.get(), keys().ed.pair.get()), 1);

    EXPECT_EQ(set.find("r1", Alg::RS256), &set.keys[0]);
    EXPECT_EQ(set.find("r1", Alg::PS256), nullptr);  // its JWK says RS256
    EXPECT_EQ(set.find("e1", Alg::ES256), &set.keys[1]);
    EXPECT_EQ(set.find("e1", Alg::EdDSA), nullptr);
    EXPECT_EQ(set.find("nope", Alg::ES256), nullptr);
    EXPECT_TRUE(set.has_kid("o1"));
    EXPECT_FALSE(set.has_kid("nope"));
    EXPECT_EQ(set.candidates(Alg::EdDSA).size(), 1u);
    EXPECT_TRUE(set.candidates(Alg::PS256).empty());
}

TEST(Jwks, KeysThatCannotBeUsedAreSkippedWithAReason) {
    json rsa = public_jwk(keys().rsa), ec = public_jwk(keys().ec), ed = public_jwk(keys().ed);
    auto with = [](json jwk, const std::string& member, json value) {
        jwk[member] = std::move(value);
        return jwk;
    };
    auto without = [](json jwk, const std::string& member) {
        jwk.erase(member);
        return jwk;
    };
    EXPECT_EQ(skip_reason({{"kty", "oct"}, {"kid", "h"}, {"k", "c2VjcmV0"}}).find("secret") != std::string::npos, true);
    EXPECT_EQ(skip_reason({{"kty", "oct"}, {"kid", "h"}}), "unsupported kty");
    EXPECT_EQ(skip_reason(without(rsa, "kty")), "no kty");
    EXPECT_NE(skip_reason(with(ec, "crv", "P-384")).find("P-256"), std::string::npos);
    EXPECT_NE(skip_reason(with(ed, "crv", "X25519")).find("Ed25519"), std::string::npos);
    EXPECT_NE(skip_reason(with(rsa, "use", "enc")).find("use"), std::string::npos);
    EXPECT_NE(skip_reason(with(rsa, "key_ops", json::array({"encrypt"}))).find("verify"), std::string::npos);
    EXPECT_NO_THROW(parse_jwks(jwks_text(json::array({with(rsa, "key_ops", json::array({"verify"}))}))).keys.at(0));
    EXPECT_NE(skip_reason(with(ec, "d", "AAAA")).find("private"), std::string::npos);
    EXPECT_NE(skip_reason(with(rsa, "alg", "ES256")).find("does not fit"), std::string::npos);
    EXPECT_NE(skip_reason(with(rsa, "alg", "RS512")).find("alg"), std::string::npos);
    EXPECT_NE(skip_reason(with(rsa, "kid", 5)).find("kid"), std::string::npos);
    EXPECT_NE(skip_reason(without(rsa, "n")).find("n and e"), std::string::npos);
    EXPECT_NE(skip_reason(with(rsa, "n", rsa["n"].get<std::string>() + "==")).find("base64url"), std::string::npos);
    EXPECT_NE(skip_reason(with(ec, "x", "!!!")).find("x and y"), std::string::npos);
    // Short coordinates (31 bytes) and keys too small to trust.
    EXPECT_NE(skip_reason(with(ec, "x", b64url(std::string(31, '\x01')))).find("32-byte"), std::string::npos);
    TestKey small = make_rsa_key("small", 1024);
    EXPECT_NE(skip_reason(public_jwk(small)).find("2048"), std::string::npos);
    // A point that is not on P-256 (x = y = 1).
    std::string one(32, '\0');
    one.back() = 1;
    EXPECT_NE(skip_reason(with(with(ec, "x", b64url(one)), "y", b64url(one))).find("invalid"), std::string::npos);
    // An even RSA exponent.
    EXPECT_FALSE(skip_reason(with(rsa, "e", b64url(std::string("\x01\x00\x00", 3)))).empty());

    // The usable keys of a mixed set are kept; the skipped ones are listed with kid and index.
    KeySet mixed = parse_jwks(jwks_text(json::array({with(rsa, "use", "enc"), ec, "not an object", ed})));
    ASSERT_EQ(mixed.keys.size(), 2u);
    ASSERT_EQ(mixed.skipped.size(), 2u);
    EXPECT_EQ(mixed.skipped[0].kid, "r1");
    EXPECT_EQ(mixed.skipped[0].index, 0u);
    EXPECT_EQ(mixed.skipped[1].index, 2u);
    EXPECT_EQ(mixed.skipped[1].reason, "not a JSON object");
}

TEST(Jwks, ADocumentThatIsNoJwksIsRefused) {
    EXPECT_THROW(parse_jwks("not json"), JwksError);
    EXPECT_THROW(parse_jwks("[]"), JwksError);
    EXPECT_THROW(parse_jwks("{}"), JwksError);
    EXPECT_THROW(parse_jwks(R"({"keys": {}})"), JwksError);
    EXPECT_TRUE(parse_jwks(R"({"keys": []})").keys.empty());
}

TEST(Jwks, AlgorithmNames) {
    EXPECT_EQ(alg_from_name("RS256"), Alg::RS256);
    EXPECT_EQ(alg_from_name("Ed25519"), Alg::EdDSA);
    EXPECT_FALSE(alg_from_name("none").has_value());
    EXPECT_FALSE(alg_from_name("HS256").has_value());
    EXPECT_TRUE(alg_fits(Alg::PS256, KeyType::rsa));
    EXPECT_FALSE(alg_fits(Alg::ES256, KeyType::rsa));
}
