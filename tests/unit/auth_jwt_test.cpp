// JWT access-token verification (src/auth/jwt.hpp): good tokens of every algorithm, and
// every way a token is refused, with keys and tokens generated here with OpenSSL.
#include <gtest/gtest.h>

#include "auth/jwks.hpp"
#include "auth/jwt.hpp"
#include "auth_test_support.hpp"
#include "util/base64.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;

namespace {

std::optional<std::string> util_decode(std::string_view text) { return util::base64url_decode(text); }

const std::string kIssuer = "https://as.example.test";
const std::string kResource = "https://mcp.example.test/mcp";

struct Keys {
    TestKey rsa = make_rsa_key("rsa-1");
    TestKey ec = make_ec_key("ec-1");
    TestKey ed = make_ed25519_key("ed-1");
    TestKey other_rsa = make_rsa_key("rsa-1");  // same kid, another key: an impostor
};
const Keys& keys() {
    static const Keys k;
    return k;
}

const TestKey& key_for(const std::string& alg) {
    if (alg == "ES256") return keys().ec;
    if (alg == "EdDSA") return keys().ed;
    return keys().rsa;
}

class JwtTest : public ::testing::Test {
protected:
    JwtTest()
        : set(parse_jwks(jwks_text(
              json::array({public_jwk(keys().rsa), public_jwk(keys().ec, "ES256"), public_jwk(keys().ed, "EdDSA")})))) {
    }

    json claims() const {
        return {{"iss", kIssuer},
                {"aud", kResource},
                {"sub", "user-42"},
                {"exp", epoch_seconds(now) + 300},
                {"iat", epoch_seconds(now) - 10},
                {"scope", "tools:read  tools:call"}};
    }

    VerifiedToken verify(const std::string& token) { return verifier.verify(token, set, now); }

    // The reason `token` is refused (and a check that the message does not quote it).
    TokenErrorReason refusal(const std::string& token) {
        try {
            verifier.verify(token, set, now);
        } catch (const TokenError& e) {
            std::string message = e.what();
            if (!token.empty()) EXPECT_EQ(message.find(token), std::string::npos);
            for (std::size_t start = 0, dot; start < token.size(); start = dot + 1) {
                dot = token.find('.', start);
                if (dot == std::string::npos) dot = token.size();
                if (dot - start >= 8)
                    EXPECT_EQ(message.find(token.substr(start, dot - start)), std::string::npos) << message;
            }
            EXPECT_EQ(message.find("user-42"), std::string::npos) << message;
            return e.reason();
        }
        ADD_FAILURE() << "the token was accepted";
        return TokenErrorReason::malformed;
    }

    std::chrono::system_clock::time_point now = std::chrono::system_clock::now();
    KeySet set;
    JwtVerifier verifier{{.issuer = kIssuer, .audiences = {kResource}}};
};

}  // namespace

TEST_F(JwtTest, GoodTokensOfEveryAlgorithmVerify) {
    for (std::string alg : {"RS256", "PS256", "ES256", "EdDSA"}) {
        SCOPED_TRACE(alg);
        const TestKey& key = key_for(alg);
        auto t = verify(sign_token(key, alg, claims()));
        EXPECT_EQ(t.subject, "user-42");
        EXPECT_EQ(t.issuer, kIssuer);
        EXPECT_EQ(t.audiences, std::vector<std::string>{kResource});
        EXPECT_EQ(t.scopes, (std::vector<std::string>{"tools:read", "tools:call"}));
        EXPECT_TRUE(t.has_scope("tools:call"));
        EXPECT_FALSE(t.has_scope("tools"));
        EXPECT_EQ(t.kid, key.kid);
        EXPECT_EQ(alg_name(t.alg), alg);
        EXPECT_EQ(epoch_seconds(t.expires_at), epoch_seconds(now) + 300);
        EXPECT_EQ(t.claims["sub"], "user-42");
    }
    EXPECT_EQ(verifier.signature_checks(), 4u);
}

TEST_F(JwtTest, AudienceArraysScpAndClientIdAreRead) {
    auto c = claims();
    c["aud"] = json::array({"https://other.example.test", kResource});
    c.erase("scope");
    c["scp"] = json::array({"a", "b"});
    c["client_id"] = "agent-app";
    auto t = verify(sign_token(keys().ec, "ES256", c));
    EXPECT_EQ(t.audiences.size(), 2u);
    EXPECT_EQ(t.scopes, (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(t.client_id, "agent-app");
    // scp as a space-separated string (as some servers send it), azp for the client.
    c["scp"] = "x y";
    c.erase("client_id");
    c["azp"] = "other-app";
    t = verify(sign_token(keys().ec, "ES256", c));
    EXPECT_EQ(t.scopes, (std::vector<std::string>{"x", "y"}));
    EXPECT_EQ(t.client_id, "other-app");
    // No scope at all: none.
    c.erase("scp");
    EXPECT_TRUE(verify(sign_token(keys().ec, "ES256", c)).scopes.empty());
}

TEST_F(JwtTest, TypMayBeJwtOrAtJwtAndNothingElse) {
    json header = {{"alg", "ES256"}, {"kid", "ec-1"}, {"typ", "at+jwt"}};
    EXPECT_EQ(verify(sign_with_header(keys().ec, header, claims())).subject, "user-42");
    header["typ"] = "application/at+JWT";
    EXPECT_EQ(verify(sign_with_header(keys().ec, header, claims())).subject, "user-42");
    header.erase("typ");
    EXPECT_EQ(verify(sign_with_header(keys().ec, header, claims())).subject, "user-42");
    header["typ"] = "dpop+jwt";
    EXPECT_EQ(refusal(sign_with_header(keys().ec, header, claims())), TokenErrorReason::wrong_type);
    header["typ"] = 7;
    EXPECT_EQ(refusal(sign_with_header(keys().ec, header, claims())), TokenErrorReason::wrong_type);
}

TEST_F(JwtTest, ExpiredTokensAreRefusedBeyondTheSkew) {
    auto c = claims();
    c["exp"] = epoch_seconds(now) - 120;
    EXPECT_EQ(refusal(sign_token(keys().rsa, "RS256", c)), TokenErrorReason::expired);
    c["exp"] = epoch_seconds(now) - 30;  // within the default 60 s
    EXPECT_NO_THROW(verify(sign_token(keys().rsa, "RS256", c)));
    JwtVerifier strict({.issuer = kIssuer, .audiences = {kResource}, .skew = std::chrono::seconds(0)});
    EXPECT_THROW(strict.verify(sign_token(keys().rsa, "RS256", c), set, now), TokenError);
    c.erase("exp");
    EXPECT_EQ(refusal(sign_token(keys().rsa, "RS256", c)), TokenErrorReason::missing_claim);
    c["exp"] = "tomorrow";
    EXPECT_EQ(refusal(sign_token(keys().rsa, "RS256", c)), TokenErrorReason::malformed);
}

// Found by fuzz_auth: an exp past what system_clock holds (2262) overflowed the conversion
// to a time_point (undefined behaviour; in practice an expiry in 1677).
TEST_F(JwtTest, AnExpBeyondTheClocksRangeIsClampedTo2200) {
    const auto year_2200 = std::chrono::system_clock::time_point(std::chrono::seconds(7258118400));
    for (double exp : {1e10, 253402300799.0, 1e300}) {
        SCOPED_TRACE(exp);
        auto c = claims();
        c["exp"] = exp;
        auto t = verify(sign_token(keys().ec, "ES256", c));
        EXPECT_EQ(t.expires_at, year_2200);
        EXPECT_GT(t.expires_at, now);
    }
}

TEST_F(JwtTest, NotYetValidTokensAreRefused) {
    auto c = claims();
    c["nbf"] = epoch_seconds(now) + 300;
    EXPECT_EQ(refusal(sign_token(keys().ed, "EdDSA", c)), TokenErrorReason::not_yet_valid);
    c["nbf"] = epoch_seconds(now) + 30;  // within the skew
    EXPECT_NO_THROW(verify(sign_token(keys().ed, "EdDSA", c)));
    c.erase("nbf");
    c["iat"] = epoch_seconds(now) + 300;
    EXPECT_EQ(refusal(sign_token(keys().ed, "EdDSA", c)), TokenErrorReason::not_yet_valid);
}

TEST_F(JwtTest, WrongAudienceAndWrongIssuerAreRefused) {
    auto c = claims();
    c["aud"] = "https://other.example.test/mcp";
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::wrong_audience);
    c["aud"] = json::array({"https://a.example.test", "https://b.example.test"});
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::wrong_audience);
    c["aud"] = json::array();
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::wrong_audience);
    c.erase("aud");
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::missing_claim);

    c = claims();
    c["iss"] = "https://evil.example.test";
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::wrong_issuer);
    c["iss"] = kIssuer + "/";  // exact comparison
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::wrong_issuer);
    c.erase("iss");
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::missing_claim);

    c = claims();
    c.erase("sub");
    EXPECT_EQ(refusal(sign_token(keys().rsa, "PS256", c)), TokenErrorReason::missing_claim);
    JwtVerifier lenient({.issuer = kIssuer, .audiences = {kResource}, .require_subject = false});
    EXPECT_EQ(lenient.verify(sign_token(keys().rsa, "PS256", c), set, now).subject, "");
}

TEST_F(JwtTest, AlgNoneAndUnknownAlgorithmsAreRefused) {
    std::string body = b64url_json({{"alg", "none"}, {"typ", "JWT"}}) + "." + b64url_json(claims());
    EXPECT_EQ(refusal(body + "." + b64url("x")), TokenErrorReason::unsupported_alg);
    EXPECT_EQ(refusal(body + "."), TokenErrorReason::malformed);  // the unsigned form
    EXPECT_EQ(refusal(body), TokenErrorReason::malformed);
    for (std::string alg : {"HS256", "RS512", "ES384", "None", "NONE", ""}) {
        std::string input = b64url_json({{"alg", alg}, {"kid", "rsa-1"}}) + "." + b64url_json(claims());
        EXPECT_EQ(refusal(input + "." + b64url(jws_signature(keys().rsa, "RS256", input))),
                  TokenErrorReason::unsupported_alg)
            << alg;
    }
    // An alg the options do not allow.
    JwtVerifier only_es({.issuer = kIssuer, .audiences = {kResource}, .algorithms = {Alg::ES256}});
    try {
        only_es.verify(sign_token(keys().rsa, "RS256", claims()), set, now);
        ADD_FAILURE();
    } catch (const TokenError& e) {
        EXPECT_EQ(e.reason(), TokenErrorReason::unsupported_alg);
    }
    EXPECT_NO_THROW(only_es.verify(sign_token(keys().ec, "ES256", claims()), set, now));
}

TEST_F(JwtTest, TamperedPayloadsAndSignaturesAreRefused) {
    for (std::string alg : {"RS256", "PS256", "ES256", "EdDSA"}) {
        SCOPED_TRACE(alg);
        std::string token = sign_token(key_for(alg), alg, claims());
        auto dot1 = token.find('.'), dot2 = token.rfind('.');
        // Another payload under the original signature.
        auto c = claims();
        c["sub"] = "admin";
        std::string swapped = token.substr(0, dot1 + 1) + b64url_json(c) + token.substr(dot2);
        EXPECT_EQ(refusal(swapped), TokenErrorReason::bad_signature);
        // One bit of the signature flipped.
        std::string sig = *util_decode(token.substr(dot2 + 1));
        sig[sig.size() / 2] ^= 0x01;
        EXPECT_EQ(refusal(token.substr(0, dot2 + 1) + b64url(sig)), TokenErrorReason::bad_signature);
        // A signature cut short.
        sig = *util_decode(token.substr(dot2 + 1));
        EXPECT_EQ(refusal(token.substr(0, dot2 + 1) + b64url(sig.substr(0, sig.size() - 1))),
                  TokenErrorReason::bad_signature);
    }
    // Signed by another key under a kid of the set.
    EXPECT_EQ(refusal(sign_token(keys().other_rsa, "RS256", claims())), TokenErrorReason::bad_signature);
    // An ES256 signature of all zeros (r = s = 0).
    std::string input = b64url_json({{"alg", "ES256"}, {"kid", "ec-1"}}) + "." + b64url_json(claims());
    EXPECT_EQ(refusal(input + "." + b64url(std::string(64, '\0'))), TokenErrorReason::bad_signature);
}

TEST_F(JwtTest, UnknownKidAndAlgKeyMismatchAreRefused) {
    TestKey stranger = make_ec_key("ec-2");
    EXPECT_EQ(refusal(sign_token(stranger, "ES256", claims())), TokenErrorReason::unknown_kid);
    // kid names the RSA key, alg says ES256 (signed with an EC key).
    json header = {{"alg", "ES256"}, {"kid", "rsa-1"}};
    EXPECT_EQ(refusal(sign_with_header(keys().ec, header, claims())), TokenErrorReason::alg_key_mismatch);
    // kid names the Ed25519 key, alg RS256.
    header = {{"alg", "RS256"}, {"kid", "ed-1"}};
    EXPECT_EQ(refusal(sign_with_header(keys().rsa, header, claims())), TokenErrorReason::alg_key_mismatch);
    // The JWK's own alg restricts the key: an RSA key published for RS256 does not verify PS256.
    KeySet rs_only = parse_jwks(jwks_text(json::array({public_jwk(keys().rsa, "RS256")})));
    EXPECT_NO_THROW(verifier.verify(sign_token(keys().rsa, "RS256", claims()), rs_only, now));
    try {
        verifier.verify(sign_token(keys().rsa, "PS256", claims()), rs_only, now);
        ADD_FAILURE();
    } catch (const TokenError& e) {
        EXPECT_EQ(e.reason(), TokenErrorReason::alg_key_mismatch);
    }
    header = {{"alg", "RS256"}, {"kid", 12}};
    EXPECT_EQ(refusal(sign_with_header(keys().rsa, header, claims())), TokenErrorReason::malformed);
}

TEST_F(JwtTest, ATokenWithoutKidUsesTheOnlyKeyForItsAlg) {
    json header = {{"alg", "EdDSA"}};
    EXPECT_EQ(verify(sign_with_header(keys().ed, header, claims())).kid, "ed-1");
    // Two RSA keys: which one is ambiguous.
    TestKey second = make_rsa_key("rsa-2");
    KeySet two = parse_jwks(jwks_text(json::array({public_jwk(keys().rsa), public_jwk(second)})));
    try {
        verifier.verify(sign_with_header(keys().rsa, json{{"alg", "RS256"}}, claims()), two, now);
        ADD_FAILURE();
    } catch (const TokenError& e) {
        EXPECT_EQ(e.reason(), TokenErrorReason::unknown_kid);
    }
}

TEST_F(JwtTest, MalformedTokensAreRefused) {
    std::string good = sign_token(keys().ec, "ES256", claims());
    auto dot1 = good.find('.'), dot2 = good.rfind('.');
    std::string h = good.substr(0, dot1), p = good.substr(dot1 + 1, dot2 - dot1 - 1), s = good.substr(dot2 + 1);
    EXPECT_EQ(refusal(""), TokenErrorReason::malformed);
    EXPECT_EQ(refusal(h + "." + p), TokenErrorReason::malformed);
    EXPECT_EQ(refusal(h + "." + p + "." + s + "." + s), TokenErrorReason::malformed);
    EXPECT_EQ(refusal(h + ".." + s), TokenErrorReason::malformed);
    EXPECT_EQ(refusal("." + p + "." + s), TokenErrorReason::malformed);
    // Padding, the standard alphabet, whitespace, a length no base64 has.
    EXPECT_EQ(refusal(h + "." + p + "." + s + "=="), TokenErrorReason::malformed);
    std::string std_alphabet = s;
    for (char& c : std_alphabet) c = c == '-' ? '+' : c == '_' ? '/' : c;
    if (std_alphabet != s) EXPECT_EQ(refusal(h + "." + p + "." + std_alphabet), TokenErrorReason::malformed);
    EXPECT_EQ(refusal(h + "." + p + " ." + s), TokenErrorReason::malformed);
    EXPECT_EQ(refusal(h + "." + p + "A." + s.substr(0, s.size() - 1)), TokenErrorReason::malformed);
    // Non-canonical base64url: the unused low bits of the last character set. 64 bytes
    // encode to 86 characters, whose last carries 4 unused bits.
    ASSERT_EQ(s.size() % 4, 2u);
    std::string odd = s;
    odd.back() = odd.back() == 'A' ? 'B' : static_cast<char>(odd.back() ^ 1);
    EXPECT_EQ(refusal(h + "." + p + "." + odd), TokenErrorReason::malformed);
    // A header that is not JSON, or not an object.
    std::string input = b64url("{\"alg\":\"ES256\",") + "." + p;
    EXPECT_EQ(refusal(input + "." + b64url(jws_signature(keys().ec, "ES256", input))), TokenErrorReason::malformed);
    input = b64url_json(json::array({"ES256"})) + "." + p;
    EXPECT_EQ(refusal(input + "." + b64url(jws_signature(keys().ec, "ES256", input))), TokenErrorReason::malformed);
    // A validly signed payload that is not a JSON object.
    input = h + "." + b64url("not json");
    EXPECT_EQ(refusal(input + "." + b64url(jws_signature(keys().ec, "ES256", input))), TokenErrorReason::malformed);
    input = h + "." + b64url_json(json::array({1, 2}));
    EXPECT_EQ(refusal(input + "." + b64url(jws_signature(keys().ec, "ES256", input))), TokenErrorReason::malformed);
    // Critical header parameters are not understood.
    json header = {{"alg", "ES256"}, {"kid", "ec-1"}, {"crit", json::array({"exp"})}};
    EXPECT_EQ(refusal(sign_with_header(keys().ec, header, claims())), TokenErrorReason::malformed);
    // Claims of the wrong JSON type.
    auto c = claims();
    c["aud"] = 5;
    EXPECT_EQ(refusal(sign_token(keys().ec, "ES256", c)), TokenErrorReason::malformed);
    c = claims();
    c["scope"] = json::object();
    EXPECT_EQ(refusal(sign_token(keys().ec, "ES256", c)), TokenErrorReason::malformed);
    c = claims();
    c["sub"] = 42;
    EXPECT_EQ(refusal(sign_token(keys().ec, "ES256", c)), TokenErrorReason::malformed);
}

TEST_F(JwtTest, OversizedTokensAreRefusedBeforeParsing) {
    auto c = claims();
    c["padding"] = std::string(20000, 'x');
    std::string big = sign_token(keys().ec, "ES256", c);
    EXPECT_EQ(refusal(big), TokenErrorReason::too_large);
    EXPECT_EQ(refusal(std::string(16 * 1024 + 1, 'a')), TokenErrorReason::too_large);
    EXPECT_EQ(verifier.signature_checks(), 0u);
    JwtVerifier roomy({.issuer = kIssuer, .audiences = {kResource}, .max_token_bytes = 64 * 1024});
    EXPECT_EQ(roomy.verify(big, set, now).subject, "user-42");
}

TEST_F(JwtTest, SeveralAudiencesMayNameThisResource) {
    JwtVerifier two({.issuer = kIssuer, .audiences = {kResource, "https://mcp.example.test"}});
    auto c = claims();
    c["aud"] = "https://mcp.example.test";
    EXPECT_NO_THROW(two.verify(sign_token(keys().ed, "EdDSA", c), set, now));
    EXPECT_THROW(JwtVerifier({.issuer = kIssuer, .audiences = {}}), std::invalid_argument);
    EXPECT_THROW(JwtVerifier({.issuer = "", .audiences = {kResource}}), std::invalid_argument);
}

TEST(JwtReasons, EveryReasonHasAName) {
    EXPECT_EQ(reason_name(TokenErrorReason::expired), "expired");
    EXPECT_EQ(reason_name(TokenErrorReason::wrong_audience), "wrong_audience");
    EXPECT_EQ(reason_name(TokenErrorReason::unknown_kid), "unknown_kid");
    EXPECT_EQ(reason_name(TokenErrorReason::keys_unavailable), "keys_unavailable");
}
