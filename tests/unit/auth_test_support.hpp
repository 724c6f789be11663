// Keys, JWKS documents and signed tokens for the auth tests, made at run time with
// OpenSSL (nothing is copied from elsewhere): RSA 2048, EC P-256 and Ed25519 key pairs,
// their public JWKs, and compact JWS tokens signed with them.
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

struct evp_pkey_st;

namespace toolport::test_support {

struct TestKey {
    std::string kid;
    std::string kty;  // "RSA", "EC", "OKP"
    std::shared_ptr<evp_pkey_st> pair;  // private and public
};

TestKey make_rsa_key(const std::string& kid, int bits = 2048);
TestKey make_ec_key(const std::string& kid);
TestKey make_ed25519_key(const std::string& kid);

// The key's public JWK (kty and its members, kid, use "sig"; `alg` when not empty).
nlohmann::json public_jwk(const TestKey& key, const std::string& alg = "");
// {"keys": [...]} as text.
std::string jwks_text(const nlohmann::json& keys_array);

std::string b64url(const std::string& bytes);
std::string b64url_json(const nlohmann::json& value);

// The JOSE signature (raw bytes; ES256 as r||s) of `signing_input` with `key` under `alg`
// (RS256, PS256, ES256, EdDSA).
std::string jws_signature(const TestKey& key, const std::string& alg, const std::string& signing_input);

// A compact JWS: base64url(header).base64url(payload).base64url(signature), signed with
// `key` under header["alg"].
std::string sign_with_header(const TestKey& key, const nlohmann::json& header, const nlohmann::json& payload);
// The usual header: {"alg": alg, "typ": "JWT", "kid": key.kid}.
std::string sign_token(const TestKey& key, const std::string& alg, const nlohmann::json& payload);

}  // namespace toolport::test_support
