// JSON Web Key Sets (RFC 7517) as OpenSSL public keys, for verifying access tokens.
//
//   auto set = auth::parse_jwks(document_text);     // throws auth::JwksError if not a JWKS
//   if (const auth::Jwk* key = set.find("kid-1")) ... key->key is an EVP_PKEY
//   for (auto& s : set.skipped) log(s.kid, s.reason);  // keys that cannot be used, and why
//
// Usable keys: kty RSA (n, e; at least 2048 bits), kty EC with crv P-256 (x, y on the curve),
// kty OKP with crv Ed25519 (x). A key is skipped, with a reason, when its type or curve is
// not one of those, its members are missing or malformed, its `use` is not "sig", its
// `key_ops` do not include "verify", its `alg` is not one Toolport verifies or does not fit
// its type, or it carries private members (a JWKS that publishes private keys lets anyone
// mint tokens). A KeySet is immutable once built and may be read from any thread.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

struct evp_pkey_st;  // OpenSSL's EVP_PKEY

namespace toolport::auth {

// The signature algorithms Toolport verifies (RFC 7518 §3, RFC 8037).
enum class Alg { RS256, PS256, ES256, EdDSA };

// "RS256", "PS256", "ES256", "EdDSA" (and "Ed25519", the fully-specified name of EdDSA
// over Ed25519), else nullopt.
std::optional<Alg> alg_from_name(std::string_view name);
std::string_view alg_name(Alg alg);

enum class KeyType { rsa, ec_p256, ed25519 };

// Whether `alg` signs with keys of `type`.
bool alg_fits(Alg alg, KeyType type);

struct Jwk {
    std::string kid;         // "" when the JWK has none
    std::optional<Alg> alg;  // the JWK's `alg`, when given: the only algorithm it may verify
    KeyType type = KeyType::rsa;
    std::shared_ptr<evp_pkey_st> key;  // a public key; never null in a KeySet
};

struct SkippedKey {
    std::string kid;     // "" when the JWK has none (or it is not a string)
    std::size_t index;   // position in the document's "keys" array
    std::string reason;  // why it cannot be used
};

struct KeySet {
    std::vector<Jwk> keys;
    std::vector<SkippedKey> skipped;

    // The first key with this `kid` that may verify `alg` (type fits, and the JWK's own
    // `alg`, if any, is `alg`); nullptr when there is none.
    const Jwk* find(std::string_view kid, Alg alg) const;
    // Whether any key has this `kid` (whatever its type).
    bool has_kid(std::string_view kid) const;
    // The keys that may verify `alg`, for a token without a `kid`.
    std::vector<const Jwk*> candidates(Alg alg) const;
};

// The document is not a JWKS at all: not JSON, not an object, or no "keys" array.
struct JwksError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Parses a JWKS document. Keys that cannot be used are listed in `skipped`; the set may
// end up with no keys (the caller decides whether that is an error). Throws JwksError.
KeySet parse_jwks(std::string_view document);

// One JWK (a JSON object) as a key, or nullopt with `reason` set.
std::optional<Jwk> parse_jwk(const nlohmann::json& jwk, std::string* reason = nullptr);

}  // namespace toolport::auth
