#include "auth_test_support.hpp"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

#include <stdexcept>

#include "util/base64.hpp"

namespace toolport::test_support {

namespace {

std::shared_ptr<evp_pkey_st> own(EVP_PKEY* key) {
    if (!key) throw std::runtime_error("key generation failed");
    return std::shared_ptr<evp_pkey_st>(key, EVP_PKEY_free);
}

std::string bn_param(EVP_PKEY* key, const char* name, int pad_to = 0) {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) throw std::runtime_error(std::string("no parameter ") + name);
    int size = pad_to ? pad_to : BN_num_bytes(bn);
    std::string out(static_cast<std::size_t>(size), '\0');
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), size);
    BN_free(bn);
    return out;
}

}  // namespace

TestKey make_rsa_key(const std::string& kid, int bits) {
    return {kid, "RSA", own(EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(bits)))};
}
TestKey make_ec_key(const std::string& kid) {
    return {kid, "EC", own(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"))};
}
TestKey make_ed25519_key(const std::string& kid) {
    return {kid, "OKP", own(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"))};
}

std::string b64url(const std::string& bytes) { return util::base64url_encode(bytes); }
std::string b64url_json(const nlohmann::json& value) { return b64url(value.dump()); }

nlohmann::json public_jwk(const TestKey& key, const std::string& alg) {
    nlohmann::json jwk = {{"kty", key.kty}, {"kid", key.kid}, {"use", "sig"}};
    EVP_PKEY* k = key.pair.get();
    if (key.kty == "RSA") {
        jwk["n"] = b64url(bn_param(k, OSSL_PKEY_PARAM_RSA_N));
        jwk["e"] = b64url(bn_param(k, OSSL_PKEY_PARAM_RSA_E));
    } else if (key.kty == "EC") {
        jwk["crv"] = "P-256";
        jwk["x"] = b64url(bn_param(k, OSSL_PKEY_PARAM_EC_PUB_X, 32));
        jwk["y"] = b64url(bn_param(k, OSSL_PKEY_PARAM_EC_PUB_Y, 32));
    } else {
        std::string raw(32, '\0');
        size_t length = raw.size();
        if (EVP_PKEY_get_raw_public_key(k, reinterpret_cast<unsigned char*>(raw.data()), &length) != 1)
            throw std::runtime_error("no raw Ed25519 key");
        jwk["crv"] = "Ed25519";
        jwk["x"] = b64url(raw.substr(0, length));
    }
    if (!alg.empty()) jwk["alg"] = alg;
    return jwk;
}

std::string jwks_text(const nlohmann::json& keys_array) { return nlohmann::json{{"keys", keys_array}}.dump(); }

std::string jws_signature(const TestKey& key, const std::string& alg, const std::string& signing_input) {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    EVP_PKEY_CTX* pctx = nullptr;
    const EVP_MD* md = alg == "EdDSA" ? nullptr : EVP_sha256();
    bool ok = EVP_DigestSignInit(ctx, &pctx, md, nullptr, key.pair.get()) == 1;
    if (ok && alg == "PS256") {
        ok = EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PSS_PADDING) == 1 &&
             EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx, RSA_PSS_SALTLEN_DIGEST) == 1 &&
             EVP_PKEY_CTX_set_rsa_mgf1_md(pctx, EVP_sha256()) == 1;
    }
    size_t length = 0;
    const auto* data = reinterpret_cast<const unsigned char*>(signing_input.data());
    ok = ok && EVP_DigestSign(ctx, nullptr, &length, data, signing_input.size()) == 1;
    std::string sig(length, '\0');
    ok = ok &&
         EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(sig.data()), &length, data, signing_input.size()) == 1;
    EVP_MD_CTX_free(ctx);
    if (!ok) throw std::runtime_error("signing failed");
    sig.resize(length);
    if (alg != "ES256") return sig;
    // DER ECDSA-Sig-Value -> JOSE r||s.
    const auto* p = reinterpret_cast<const unsigned char*>(sig.data());
    ECDSA_SIG* parsed = d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(sig.size()));
    if (!parsed) throw std::runtime_error("bad DER signature");
    std::string jose(64, '\0');
    BN_bn2binpad(ECDSA_SIG_get0_r(parsed), reinterpret_cast<unsigned char*>(jose.data()), 32);
    BN_bn2binpad(ECDSA_SIG_get0_s(parsed), reinterpret_cast<unsigned char*>(jose.data()) + 32, 32);
    ECDSA_SIG_free(parsed);
    return jose;
}

std::string sign_with_header(const TestKey& key, const nlohmann::json& header, const nlohmann::json& payload) {
    std::string input = b64url_json(header) + "." + b64url_json(payload);
    return input + "." + b64url(jws_signature(key, header.at("alg").get<std::string>(), input));
}

std::string sign_token(const TestKey& key, const std::string& alg, const nlohmann::json& payload) {
    return sign_with_header(key, nlohmann::json{{"alg", alg}, {"typ", "JWT"}, {"kid", key.kid}}, payload);
}

std::string private_key_pem(const TestKey& key) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new(BIO_s_mem()), BIO_free);
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), key.pair.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1)
        throw std::runtime_error("PEM export failed");
    char* data = nullptr;
    long length = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(length));
}

std::int64_t epoch_seconds(std::chrono::system_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

}  // namespace toolport::test_support
