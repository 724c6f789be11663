#include "auth/jwt.hpp"

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include <fmt/format.h>

#include "util/base64.hpp"
#include "util/digest.hpp"
#include "util/http_text.hpp"
#include "util/json.hpp"

namespace toolport::auth {

namespace {

[[noreturn]] void fail(TokenErrorReason reason, const std::string& message) { throw TokenError(reason, message); }

int b64url_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

// Base64url without padding, and canonical: the unused low bits of the last character are
// zero, so each byte string has exactly one encoding (a token cannot be altered in its
// encoding and still verify, or still hit the cache under another digest).
std::optional<std::string> strict_b64url(std::string_view text) {
    if (text.empty()) return std::nullopt;
    auto out = util::base64url_decode(text);
    if (!out) return std::nullopt;
    int last = b64url_value(text.back());
    std::size_t rest = text.size() % 4;
    if ((rest == 2 && (last & 0x0F) != 0) || (rest == 3 && (last & 0x03) != 0)) return std::nullopt;
    return out;
}

struct MdCtxFree {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

// JOSE's ES256 signature (r and s, 32 bytes each, big-endian) as the DER ECDSA-Sig-Value
// OpenSSL verifies.
std::optional<std::string> es256_to_der(std::string_view jose) {
    if (jose.size() != 64) return std::nullopt;
    const auto* bytes = reinterpret_cast<const unsigned char*>(jose.data());
    ECDSA_SIG* sig = ECDSA_SIG_new();
    BIGNUM* r = BN_bin2bn(bytes, 32, nullptr);
    BIGNUM* s = BN_bin2bn(bytes + 32, 32, nullptr);
    if (!sig || !r || !s || ECDSA_SIG_set0(sig, r, s) != 1) {
        BN_free(r);
        BN_free(s);
        ECDSA_SIG_free(sig);
        return std::nullopt;
    }
    unsigned char* der = nullptr;
    int length = i2d_ECDSA_SIG(sig, &der);
    ECDSA_SIG_free(sig);
    if (length <= 0) return std::nullopt;
    std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(length));
    OPENSSL_free(der);
    return out;
}

double seconds_since_epoch(std::chrono::system_clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
}

// A NumericDate claim: absent (nullopt), or a number; anything else is malformed.
std::optional<double> numeric_date(const Json& claims, const char* name) {
    auto it = claims.find(name);
    if (it == claims.end()) return std::nullopt;
    if (!it->is_number())
        fail(TokenErrorReason::malformed, std::string("the token's ") + name + " claim is not a number");
    double v = it->get<double>();
    if (!std::isfinite(v))
        fail(TokenErrorReason::malformed, std::string("the token's ") + name + " claim is not finite");
    return v;
}

void split_scopes(std::string_view text, std::vector<std::string>& out) {
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        std::size_t start = i;
        while (i < text.size() && text[i] != ' ') ++i;
        if (i > start) out.emplace_back(text.substr(start, i - start));
    }
}

void read_scopes(const Json& value, const char* name, std::vector<std::string>& out) {
    if (value.is_string()) {
        split_scopes(value.get_ref<const std::string&>(), out);
    } else if (value.is_array()) {
        for (const auto& s : value) {
            if (!s.is_string())
                fail(TokenErrorReason::malformed, std::string("the token's ") + name + " claim holds a non-string");
            out.push_back(s.get<std::string>());
        }
    } else {
        fail(TokenErrorReason::malformed,
             std::string("the token's ") + name + " claim is neither a string nor an array");
    }
}

}  // namespace

std::string_view reason_name(TokenErrorReason reason) {
    switch (reason) {
        case TokenErrorReason::malformed: return "malformed";
        case TokenErrorReason::too_large: return "too_large";
        case TokenErrorReason::unsupported_alg: return "unsupported_alg";
        case TokenErrorReason::wrong_type: return "wrong_type";
        case TokenErrorReason::unknown_kid: return "unknown_kid";
        case TokenErrorReason::alg_key_mismatch: return "alg_key_mismatch";
        case TokenErrorReason::bad_signature: return "bad_signature";
        case TokenErrorReason::expired: return "expired";
        case TokenErrorReason::not_yet_valid: return "not_yet_valid";
        case TokenErrorReason::wrong_issuer: return "wrong_issuer";
        case TokenErrorReason::wrong_audience: return "wrong_audience";
        case TokenErrorReason::missing_claim: return "missing_claim";
        case TokenErrorReason::keys_unavailable: return "keys_unavailable";
        case TokenErrorReason::inactive: return "inactive";
        case TokenErrorReason::introspection_unavailable: return "introspection_unavailable";
    }
    return "unknown";
}

std::chrono::system_clock::time_point numeric_date_time(double seconds) {
    // Anything past 2200-01-01T00:00:00Z is taken as that.
    seconds = std::clamp(seconds, 0.0, 7258118400.0);
    return std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double>(seconds)));
}

bool VerifiedToken::has_scope(std::string_view scope) const {
    return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

bool verify_signature(Alg alg, const Jwk& key, std::string_view signing_input, std::string_view signature) {
    if (!key.key || !alg_fits(alg, key.type)) return false;
    std::string der;
    if (alg == Alg::ES256) {
        auto converted = es256_to_der(signature);
        if (!converted) return false;
        der = std::move(*converted);
        signature = der;
    } else if (alg == Alg::EdDSA && signature.size() != 64) {
        return false;
    }
    std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
    EVP_PKEY_CTX* pctx = nullptr;  // owned by ctx
    bool ok = ctx && EVP_DigestVerifyInit(ctx.get(), &pctx, alg == Alg::EdDSA ? nullptr : util::sha256_md(), nullptr,
                                          key.key.get()) == 1;
    if (ok && alg == Alg::PS256) {
        // RFC 7518 §3.5: MGF1 with SHA-256, salt as long as the hash.
        ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
             EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, util::sha256_md()) == 1;
    } else if (ok && alg == Alg::RS256) {
        ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) == 1;
    }
    ok = ok && EVP_DigestVerify(ctx.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                                reinterpret_cast<const unsigned char*>(signing_input.data()), signing_input.size()) == 1;
    // A failed verification leaves errors on this thread's queue, where the TLS code of
    // the same thread would later find them.
    if (!ok) ERR_clear_error();
    return ok;
}

JwtVerifier::JwtVerifier(VerifierOptions options) : options_(std::move(options)) {
    if (options_.issuer.empty()) throw std::invalid_argument("JWT verifier: the issuer is empty");
    if (options_.audiences.empty()) throw std::invalid_argument("JWT verifier: no audience (resource identifier)");
    for (const auto& a : options_.audiences) {
        if (a.empty()) throw std::invalid_argument("JWT verifier: an empty audience");
    }
    if (options_.skew.count() < 0) throw std::invalid_argument("JWT verifier: negative clock skew");
}

VerifiedToken JwtVerifier::verify(std::string_view token, const KeySet& keys,
                                  std::chrono::system_clock::time_point now) const {
    // 1. Form.
    if (token.size() > options_.max_token_bytes) fail(TokenErrorReason::too_large, "the token is too large");
    std::size_t dot1 = token.find('.');
    std::size_t dot2 = dot1 == std::string_view::npos ? dot1 : token.find('.', dot1 + 1);
    if (dot2 == std::string_view::npos || token.find('.', dot2 + 1) != std::string_view::npos)
        fail(TokenErrorReason::malformed, "the token is not three dot-separated parts");
    std::string_view header_b64 = token.substr(0, dot1);
    std::string_view payload_b64 = token.substr(dot1 + 1, dot2 - dot1 - 1);
    std::string_view signature_b64 = token.substr(dot2 + 1);
    auto header_text = strict_b64url(header_b64);
    auto payload_text = strict_b64url(payload_b64);
    auto signature = strict_b64url(signature_b64);
    if (!header_text || !payload_text || !signature)
        fail(TokenErrorReason::malformed, "a part of the token is not unpadded base64url");
    Json header = Json::parse(*header_text, nullptr, false);
    if (header.is_discarded() || !header.is_object())
        fail(TokenErrorReason::malformed, "the token's header is not a JSON object");

    // 2. Header.
    auto alg_member = header.find("alg");
    if (alg_member == header.end() || !alg_member->is_string())
        fail(TokenErrorReason::malformed, "the token's header has no alg");
    std::optional<Alg> alg = alg_from_name(alg_member->get_ref<const std::string&>());
    if (!alg) fail(TokenErrorReason::unsupported_alg, "the token's alg is not one of RS256, PS256, ES256, EdDSA");
    if (!options_.algorithms.empty() &&
        std::find(options_.algorithms.begin(), options_.algorithms.end(), *alg) == options_.algorithms.end())
        fail(TokenErrorReason::unsupported_alg, fmt::format("alg {} is not allowed here", alg_name(*alg)));
    if (auto typ = header.find("typ"); typ != header.end()) {
        bool fits = false;
        if (typ->is_string()) {
            std::string_view t = typ->get_ref<const std::string&>();
            if (t.size() > 12 && util::iequals_ascii(t.substr(0, 12), "application/")) t.remove_prefix(12);
            fits = util::iequals_ascii(t, "JWT") || util::iequals_ascii(t, "at+jwt");
        }
        if (!fits) fail(TokenErrorReason::wrong_type, "the token's typ is neither JWT nor at+jwt");
    }
    if (header.contains("crit")) fail(TokenErrorReason::malformed, "the token has critical header parameters (crit)");

    // 3. Key.
    const Jwk* key = nullptr;
    if (auto kid = header.find("kid"); kid != header.end()) {
        if (!kid->is_string()) fail(TokenErrorReason::malformed, "the token's kid is not a string");
        const auto& id = kid->get_ref<const std::string&>();
        key = keys.find(id, *alg);
        if (!key) {
            if (keys.has_kid(id))
                fail(TokenErrorReason::alg_key_mismatch,
                     fmt::format("the key the token names cannot verify {}", alg_name(*alg)));
            fail(TokenErrorReason::unknown_kid, "the token's kid is not in the key set");
        }
    } else {
        auto candidates = keys.candidates(*alg);
        if (candidates.size() != 1)
            fail(TokenErrorReason::unknown_kid, fmt::format("the token has no kid and the key set has {} keys for {}",
                                                            candidates.size(), alg_name(*alg)));
        key = candidates.front();
    }

    // 4. Signature.
    signature_checks_.fetch_add(1, std::memory_order_relaxed);
    if (!verify_signature(*alg, *key, token.substr(0, dot2), *signature))
        fail(TokenErrorReason::bad_signature, "the token's signature does not verify");

    // 5. Claims.
    VerifiedToken out;
    out.claims = Json::parse(*payload_text, nullptr, false);
    const Json& claims = out.claims;
    if (claims.is_discarded() || !claims.is_object())
        fail(TokenErrorReason::malformed, "the token's payload is not a JSON object");

    auto iss = claims.find("iss");
    if (iss == claims.end()) fail(TokenErrorReason::missing_claim, "the token has no iss claim");
    if (!iss->is_string()) fail(TokenErrorReason::malformed, "the token's iss claim is not a string");
    if (*iss != options_.issuer) fail(TokenErrorReason::wrong_issuer, "the token was issued by another issuer");
    out.issuer = iss->get<std::string>();

    auto aud = claims.find("aud");
    if (aud == claims.end()) fail(TokenErrorReason::missing_claim, "the token has no aud claim");
    if (aud->is_string()) {
        out.audiences.push_back(aud->get<std::string>());
    } else if (aud->is_array()) {
        for (const auto& a : *aud) {
            if (!a.is_string()) fail(TokenErrorReason::malformed, "the token's aud claim holds a non-string");
            out.audiences.push_back(a.get<std::string>());
        }
    } else {
        fail(TokenErrorReason::malformed, "the token's aud claim is neither a string nor an array");
    }
    bool ours = std::any_of(out.audiences.begin(), out.audiences.end(), [&](const std::string& a) {
        return std::find(options_.audiences.begin(), options_.audiences.end(), a) != options_.audiences.end();
    });
    if (!ours) fail(TokenErrorReason::wrong_audience, "the token is not meant for this resource (aud)");

    const double now_s = seconds_since_epoch(now);
    const double skew = static_cast<double>(options_.skew.count());
    auto exp = numeric_date(claims, "exp");
    if (!exp) fail(TokenErrorReason::missing_claim, "the token has no exp claim");
    if (now_s >= *exp + skew) fail(TokenErrorReason::expired, "the token has expired");
    if (auto nbf = numeric_date(claims, "nbf"); nbf && *nbf > now_s + skew)
        fail(TokenErrorReason::not_yet_valid, "the token is not valid yet (nbf)");
    if (auto iat = numeric_date(claims, "iat"); iat && *iat > now_s + skew)
        fail(TokenErrorReason::not_yet_valid, "the token was issued in the future (iat)");
    out.expires_at = numeric_date_time(*exp);

    if (auto sub = claims.find("sub"); sub != claims.end()) {
        if (!sub->is_string()) fail(TokenErrorReason::malformed, "the token's sub claim is not a string");
        out.subject = sub->get<std::string>();
    }
    if (out.subject.empty() && options_.require_subject)
        fail(TokenErrorReason::missing_claim, "the token has no sub claim");

    if (auto scope = claims.find("scope"); scope != claims.end()) read_scopes(*scope, "scope", out.scopes);
    else if (auto scp = claims.find("scp"); scp != claims.end()) read_scopes(*scp, "scp", out.scopes);

    for (const char* name : {"client_id", "azp"}) {
        if (auto c = claims.find(name); c != claims.end() && c->is_string()) {
            out.client_id = c->get<std::string>();
            break;
        }
    }
    out.kid = key->kid;
    out.alg = *alg;
    return out;
}

}  // namespace toolport::auth
