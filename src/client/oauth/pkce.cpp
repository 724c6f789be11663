#include "client/oauth/pkce.hpp"

#include <openssl/evp.h>

#include <stdexcept>

#include "util/base64.hpp"
#include "util/random.hpp"

namespace toolport::client::oauth {

std::string s256_challenge(std::string_view verifier) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (EVP_Digest(verifier.data(), verifier.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("SHA-256 failed");
    }
    return util::base64url_encode(std::string_view(reinterpret_cast<const char*>(digest), size));
}

Pkce make_pkce() {
    // 32 bytes give the 43-character verifier RFC 7636 §4.1 recommends (256 bits of entropy).
    unsigned char bytes[32];
    util::secure_random(bytes, sizeof bytes);
    Pkce pkce;
    pkce.verifier = util::base64url_encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
    pkce.challenge = s256_challenge(pkce.verifier);
    return pkce;
}

}  // namespace toolport::client::oauth
