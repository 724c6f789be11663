// DPoP (RFC 9449): the key a DPoP-bound access token is bound to, and the proofs that show
// possession of it, one per HTTP request.
//
// One ES256 (P-256) key pair per authorization: generated when the authorization starts,
// kept in the TokenStore next to the tokens it binds (a bound token, or a refresh token
// bound to it, is useless without it), and dropped with them. A proof is a JWS with
// typ dpop+jwt and the public key as `jwk`, claiming jti (fresh), htm, htu (the target URI
// without query and fragment, §4.2), iat, and, when given, ath (§4.2: the access token it
// accompanies) and nonce (the server's, §8 and §9). Signed with auth::sign_jws.
// Neither the key nor a proof is ever logged.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolport::client::oauth {

class DpopKey {
public:
    // A new P-256 key pair (OpenSSL). Throws std::runtime_error when it cannot be made.
    static DpopKey generate();
    // The key kept in the store (PEM PKCS#8 private key). Throws std::invalid_argument when
    // it is not a P-256 private key.
    static DpopKey from_pem(std::string private_key_pem);

    const std::string& pem() const { return pem_; }
    // The public key as a JWK (RFC 7517: kty EC, crv P-256, x, y; never d).
    const nlohmann::json& public_jwk() const { return jwk_; }

    // A proof for one `method` request to `url` (its query and fragment are left out).
    // `access_token`: the token sent with it ("" at the token endpoint); `nonce`: the
    // server's latest DPoP-Nonce ("" when it gave none).
    std::string proof(std::string_view method, std::string_view url, std::string_view access_token = {},
                      std::string_view nonce = {}) const;

private:
    DpopKey(std::string pem, nlohmann::json jwk) : pem_(std::move(pem)), jwk_(std::move(jwk)) {}
    std::string pem_;
    nlohmann::json jwk_;
};

// RFC 9449 §4.2's htu: `url` without its query and fragment.
std::string dpop_htu(std::string_view url);

// RFC 9449 §4.2's ath: base64url (unpadded) of SHA-256 over the access token's ASCII bytes.
std::string dpop_ath(std::string_view access_token);

}  // namespace toolport::client::oauth
