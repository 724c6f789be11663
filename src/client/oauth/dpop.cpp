#include "client/oauth/dpop.hpp"

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <chrono>
#include <memory>
#include <stdexcept>

#include "auth/token_endpoint.hpp"
#include "client/oauth/pkce.hpp"
#include "util/base64.hpp"
#include "util/random.hpp"

namespace toolport::client::oauth {

namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using BioPtr = std::unique_ptr<BIO, decltype(&BIO_free)>;

std::string pem_of(EVP_PKEY* key) {
    BioPtr bio(BIO_new(BIO_s_mem()), BIO_free);
    if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1)
        throw std::runtime_error("DPoP: cannot encode the key");
    char* data = nullptr;
    long length = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, static_cast<std::size_t>(length));
}

// x and y of the public point, 32 bytes each (the uncompressed point is 0x04 || x || y).
nlohmann::json jwk_of(EVP_PKEY* key) {
    unsigned char point[65];
    std::size_t length = 0;
    if (EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY, point, sizeof point, &length) != 1 ||
        length != sizeof point || point[0] != 0x04)
        throw std::invalid_argument("DPoP: the key has no P-256 public point");
    auto part = [&](int offset) {
        return util::base64url_encode(std::string_view(reinterpret_cast<const char*>(point) + offset, 32));
    };
    return {{"kty", "EC"}, {"crv", "P-256"}, {"x", part(1)}, {"y", part(33)}};
}

}  // namespace

DpopKey DpopKey::generate() {
    KeyPtr key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    if (!key) throw std::runtime_error("DPoP: cannot generate a P-256 key");
    return DpopKey(pem_of(key.get()), jwk_of(key.get()));
}

DpopKey DpopKey::from_pem(std::string private_key_pem) {
    BioPtr bio(BIO_new_mem_buf(private_key_pem.data(), static_cast<int>(private_key_pem.size())), BIO_free);
    if (!bio) throw std::invalid_argument("DPoP: out of memory reading the key");
    // The store holds it unencrypted (the file is the user's only); never prompt for a passphrase.
    KeyPtr key(PEM_read_bio_PrivateKey(
                   bio.get(), nullptr, [](char*, int, int, void*) { return -1; }, nullptr),
               EVP_PKEY_free);
    if (!key || !EVP_PKEY_is_a(key.get(), "EC"))
        throw std::invalid_argument("DPoP: the stored key is not an EC private key");
    char group[64] = {};
    std::size_t length = 0;
    if (EVP_PKEY_get_utf8_string_param(key.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1 ||
        std::string_view(group, length) != "prime256v1")
        throw std::invalid_argument("DPoP: the stored key is not on P-256");
    auto jwk = jwk_of(key.get());
    return DpopKey(std::move(private_key_pem), std::move(jwk));
}

std::string DpopKey::proof(std::string_view method, std::string_view url, std::string_view access_token,
                           std::string_view nonce) const {
    nlohmann::json header = {{"typ", "dpop+jwt"}, {"alg", "ES256"}, {"jwk", jwk_}};
    auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    nlohmann::json claims = {
        // Servers keep the jti of proofs they saw to refuse replays (§11.1): one per proof.
        {"jti", util::random_hex(16)},
        {"htm", std::string(method)},
        {"htu", dpop_htu(url)},
        {"iat", now},
    };
    if (!access_token.empty()) claims["ath"] = dpop_ath(access_token);
    if (!nonce.empty()) claims["nonce"] = std::string(nonce);
    return auth::sign_jws(pem_, std::move(header), claims);
}

std::string dpop_htu(std::string_view url) { return std::string(url.substr(0, url.find_first_of("?#"))); }

// The same transform as PKCE's S256 challenge: unpadded base64url of SHA-256.
std::string dpop_ath(std::string_view access_token) { return s256_challenge(access_token); }

}  // namespace toolport::client::oauth
