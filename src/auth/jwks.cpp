#include "auth/jwks.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "util/base64.hpp"
#include "util/json.hpp"

namespace toolport::auth {

namespace {

struct PkeyCtxFree {
    void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
struct ParamBldFree {
    void operator()(OSSL_PARAM_BLD* b) const { OSSL_PARAM_BLD_free(b); }
};
struct ParamFree {
    void operator()(OSSL_PARAM* p) const { OSSL_PARAM_free(p); }
};
struct BnFree {
    void operator()(BIGNUM* b) const { BN_free(b); }
};
using BnPtr = std::unique_ptr<BIGNUM, BnFree>;

std::shared_ptr<evp_pkey_st> own(EVP_PKEY* key) { return std::shared_ptr<evp_pkey_st>(key, EVP_PKEY_free); }

// A base64url member (unpadded, canonical) decoded, or nullopt.
std::optional<std::string> b64_member(const Json& jwk, const char* name) {
    auto it = jwk.find(name);
    if (it == jwk.end() || !it->is_string()) return std::nullopt;
    const auto& text = it->get_ref<const std::string&>();
    auto bytes = util::base64url_decode(text);
    if (!bytes || bytes->empty() || util::base64url_encode(*bytes) != text) return std::nullopt;
    return bytes;
}

BnPtr to_bn(const std::string& bytes) {
    return BnPtr(
        BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()), nullptr));
}

// Builds a public key of `type_name` ("RSA", "EC") from the parameters `bld` holds.
std::shared_ptr<evp_pkey_st> from_params(const char* type_name, OSSL_PARAM_BLD* bld, std::string* reason) {
    std::unique_ptr<OSSL_PARAM, ParamFree> params(OSSL_PARAM_BLD_to_param(bld));
    std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> ctx(EVP_PKEY_CTX_new_from_name(nullptr, type_name, nullptr));
    EVP_PKEY* key = nullptr;
    if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
        EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) != 1 || !key) {
        *reason = std::string("invalid ") + type_name + " public key (OpenSSL refused it)";
        return nullptr;
    }
    auto owned = own(key);
    // fromdata takes the numbers as given; check that they make a valid public key (an EC
    // point on the curve, an odd RSA exponent > 1, ...).
    std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree> check(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
    if (!check || EVP_PKEY_public_check(check.get()) != 1) {
        *reason = std::string("invalid ") + type_name + " public key";
        return nullptr;
    }
    return owned;
}

std::shared_ptr<evp_pkey_st> rsa_key(const Json& jwk, std::string* reason) {
    auto n = b64_member(jwk, "n");
    auto e = b64_member(jwk, "e");
    if (!n || !e) {
        *reason = "RSA key without valid base64url n and e";
        return nullptr;
    }
    if ((*n)[0] == '\0' || (*e)[0] == '\0') {
        *reason = "RSA n or e has leading zero bytes";
        return nullptr;
    }
    if (n->size() * 8 < 2048 || n->size() > 2048) {  // 2048 to 16384 bits
        *reason = "RSA modulus must be 2048 to 16384 bits";
        return nullptr;
    }
    if (e->size() > 8) {
        *reason = "RSA exponent too large";
        return nullptr;
    }
    BnPtr bn_n = to_bn(*n), bn_e = to_bn(*e);
    std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
    if (!bn_n || !bn_e || !bld || OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) != 1 ||
        OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get()) != 1) {
        *reason = "out of memory building the RSA key";
        return nullptr;
    }
    return from_params("RSA", bld.get(), reason);
}

std::shared_ptr<evp_pkey_st> ec_key(const Json& jwk, std::string* reason) {
    auto crv = jwk.find("crv");
    if (crv == jwk.end() || !crv->is_string() || *crv != "P-256") {
        *reason = "EC key on a curve other than P-256";
        return nullptr;
    }
    auto x = b64_member(jwk, "x");
    auto y = b64_member(jwk, "y");
    // RFC 7518 §6.2.1.2: x and y are the full coordinate length (32 bytes for P-256).
    if (!x || !y || x->size() != 32 || y->size() != 32) {
        *reason = "P-256 key without 32-byte base64url x and y";
        return nullptr;
    }
    std::string point = "\x04" + *x + *y;  // SEC 1 uncompressed point
    std::unique_ptr<OSSL_PARAM_BLD, ParamBldFree> bld(OSSL_PARAM_BLD_new());
    if (!bld || OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) != 1 ||
        OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1) {
        *reason = "out of memory building the EC key";
        return nullptr;
    }
    return from_params("EC", bld.get(), reason);
}

std::shared_ptr<evp_pkey_st> okp_key(const Json& jwk, std::string* reason) {
    auto crv = jwk.find("crv");
    if (crv == jwk.end() || !crv->is_string() || *crv != "Ed25519") {
        *reason = "OKP key on a curve other than Ed25519";
        return nullptr;
    }
    auto x = b64_member(jwk, "x");
    if (!x || x->size() != 32) {
        *reason = "Ed25519 key without a 32-byte base64url x";
        return nullptr;
    }
    EVP_PKEY* key = EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                                reinterpret_cast<const unsigned char*>(x->data()), x->size());
    if (!key) {
        *reason = "OpenSSL refused the Ed25519 public key";
        return nullptr;
    }
    return own(key);
}

}  // namespace

std::optional<Alg> alg_from_name(std::string_view name) {
    if (name == "RS256") return Alg::RS256;
    if (name == "PS256") return Alg::PS256;
    if (name == "ES256") return Alg::ES256;
    if (name == "EdDSA" || name == "Ed25519") return Alg::EdDSA;
    return std::nullopt;
}

std::string_view alg_name(Alg alg) {
    switch (alg) {
        case Alg::RS256: return "RS256";
        case Alg::PS256: return "PS256";
        case Alg::ES256: return "ES256";
        case Alg::EdDSA: return "EdDSA";
    }
    return "?";
}

bool alg_fits(Alg alg, KeyType type) {
    switch (alg) {
        case Alg::RS256:
        case Alg::PS256: return type == KeyType::rsa;
        case Alg::ES256: return type == KeyType::ec_p256;
        case Alg::EdDSA: return type == KeyType::ed25519;
    }
    return false;
}

const Jwk* KeySet::find(std::string_view kid, Alg alg) const {
    for (const auto& k : keys) {
        if (k.kid == kid && alg_fits(alg, k.type) && (!k.alg || *k.alg == alg)) return &k;
    }
    return nullptr;
}

bool KeySet::has_kid(std::string_view kid) const {
    for (const auto& k : keys) {
        if (k.kid == kid) return true;
    }
    return false;
}

std::vector<const Jwk*> KeySet::candidates(Alg alg) const {
    std::vector<const Jwk*> out;
    for (const auto& k : keys) {
        if (alg_fits(alg, k.type) && (!k.alg || *k.alg == alg)) out.push_back(&k);
    }
    return out;
}

std::optional<Jwk> parse_jwk(const Json& jwk, std::string* reason) {
    std::string ignored;
    if (!reason) reason = &ignored;
    if (!jwk.is_object()) {
        *reason = "not a JSON object";
        return std::nullopt;
    }
    Jwk out;
    if (auto kid = jwk.find("kid"); kid != jwk.end()) {
        if (!kid->is_string()) {
            *reason = "kid is not a string";
            return std::nullopt;
        }
        out.kid = kid->get<std::string>();
    }
    if (auto use = jwk.find("use"); use != jwk.end() && !(use->is_string() && *use == "sig")) {
        *reason = "use is not \"sig\"";
        return std::nullopt;
    }
    if (auto ops = jwk.find("key_ops"); ops != jwk.end()) {
        bool verify = false;
        if (ops->is_array()) {
            for (const auto& op : *ops) verify = verify || (op.is_string() && op == "verify");
        }
        if (!verify) {
            *reason = "key_ops does not include \"verify\"";
            return std::nullopt;
        }
    }
    for (const char* secret : {"d", "p", "q", "dp", "dq", "qi", "k"}) {
        if (jwk.contains(secret)) {
            *reason = std::string("carries private or secret key material (\"") + secret + "\")";
            return std::nullopt;
        }
    }
    auto kty = jwk.find("kty");
    if (kty == jwk.end() || !kty->is_string()) {
        *reason = "no kty";
        return std::nullopt;
    }
    std::shared_ptr<evp_pkey_st> key;
    if (*kty == "RSA") {
        out.type = KeyType::rsa;
        key = rsa_key(jwk, reason);
    } else if (*kty == "EC") {
        out.type = KeyType::ec_p256;
        key = ec_key(jwk, reason);
    } else if (*kty == "OKP") {
        out.type = KeyType::ed25519;
        key = okp_key(jwk, reason);
    } else {
        *reason = "unsupported kty";
        return std::nullopt;
    }
    if (!key) return std::nullopt;
    if (auto alg = jwk.find("alg"); alg != jwk.end()) {
        std::optional<Alg> parsed = alg->is_string() ? alg_from_name(alg->get_ref<const std::string&>()) : std::nullopt;
        if (!parsed) {
            *reason = "alg is not one Toolport verifies (RS256, PS256, ES256, EdDSA)";
            return std::nullopt;
        }
        if (!alg_fits(*parsed, out.type)) {
            *reason = "alg does not fit the key type";
            return std::nullopt;
        }
        out.alg = parsed;
    }
    out.key = std::move(key);
    return out;
}

KeySet parse_jwks(std::string_view document) {
    Json doc = Json::parse(document, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) throw JwksError("JWKS: not valid JSON");
    if (!doc.is_object()) throw JwksError("JWKS: not a JSON object");
    auto keys = doc.find("keys");
    if (keys == doc.end() || !keys->is_array()) throw JwksError("JWKS: no \"keys\" array");
    KeySet set;
    for (std::size_t i = 0; i < keys->size(); ++i) {
        const Json& entry = (*keys)[i];
        std::string reason;
        if (auto jwk = parse_jwk(entry, &reason)) {
            set.keys.push_back(std::move(*jwk));
        } else {
            std::string kid;
            if (entry.is_object()) {
                if (auto k = entry.find("kid"); k != entry.end() && k->is_string()) kid = k->get<std::string>();
            }
            set.skipped.push_back({std::move(kid), i, std::move(reason)});
        }
    }
    return set;
}

}  // namespace toolport::auth
