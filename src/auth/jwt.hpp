// JWT access tokens (RFC 7519, RFC 9068) in JWS compact form (RFC 7515), verified with
// OpenSSL against a JWKS (jwks.hpp): the check a resource server makes on every bearer token.
//
//   auth::JwtVerifier verifier({.issuer = "https://as.example.com",
//                               .audiences = {"https://mcp.example.com/mcp"}});
//   try {
//       auth::VerifiedToken t = verifier.verify(token, key_set, std::chrono::system_clock::now());
//       // t.subject, t.scopes, t.expires_at ...
//   } catch (const auth::TokenError& e) {
//       // e.reason(): why (expired, wrong_audience, ...); e.what(): a sentence for logs
//   }
//
// What is checked, in this order:
//  1. form: at most max_token_bytes; exactly three dot-separated parts, each canonical
//     base64url without padding; the header a JSON object (malformed, too_large);
//  2. header: `alg` one of the allowed algorithms (RS256, PS256, ES256, EdDSA; `none` and
//     everything else: unsupported_alg); `typ`, when present, JWT or at+jwt (wrong_type);
//     no `crit` (malformed);
//  3. key: the JWKS key whose `kid` is the header's (a `kid` the set lacks: unknown_kid,
//     which is the caller's cue to re-fetch the set); a key of another type, or whose own
//     `alg` differs: alg_key_mismatch. A token without `kid` is verified with the set's only
//     key for its alg; with none or several such keys: unknown_kid;
//  4. signature, with OpenSSL EVP (ES256's JOSE r||s converted to DER): bad_signature;
//  5. claims, the payload a JSON object (malformed): `iss` equals the configured issuer
//     (wrong_issuer); `aud` (a string or an array) contains one of the configured audiences,
//     the resource identifiers of RFC 8707 (wrong_audience); `exp` present and after now -
//     skew (expired); `nbf` and `iat`, when present, not after now + skew (not_yet_valid);
//     `sub` present when require_subject (missing_claim). A missing `iss`, `aud` or `exp` is
//     missing_claim; a claim of the wrong JSON type is malformed.
// Error messages never quote the token or any value taken from it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/jwks.hpp"

namespace toolport::auth {

enum class TokenErrorReason {
    malformed,                  // not a well-formed compact JWS / JWT
    too_large,                  // longer than max_token_bytes
    unsupported_alg,            // alg none, an unknown alg, or one not allowed by the options
    wrong_type,                 // typ is neither JWT nor at+jwt
    unknown_kid,                // no key in the set for the token's kid
    alg_key_mismatch,           // the kid's key is of another type, or its JWK alg is another
    bad_signature,              // the signature does not verify
    expired,                    // exp has passed (beyond the skew)
    not_yet_valid,              // nbf or iat is in the future (beyond the skew)
    wrong_issuer,               // iss is not the configured issuer
    wrong_audience,             // aud does not name this resource
    missing_claim,              // iss, aud, exp (or sub, when required) absent
    keys_unavailable,           // the key set could not be obtained (authenticator.hpp)
    inactive,                   // the introspection endpoint says the token is not active (RFC 7662)
    introspection_unavailable,  // the introspection endpoint could not be asked or answered nonsense
};

// "malformed", "too_large", "unsupported_alg", ... (the enumerator's name).
std::string_view reason_name(TokenErrorReason reason);

// A token that is refused. what() is a sentence fit for logs and for the
// WWW-Authenticate error_description: it never contains the token or its contents.
class TokenError : public std::runtime_error {
public:
    TokenError(TokenErrorReason reason, const std::string& message) : std::runtime_error(message), reason_(reason) {}
    TokenErrorReason reason() const { return reason_; }

private:
    TokenErrorReason reason_;
};

struct VerifierOptions {
    // The authorization server's issuer identifier; `iss` must equal it exactly.
    std::string issuer;
    // This resource's identifiers (RFC 8707, e.g. "https://mcp.example.com/mcp"); `aud` must
    // contain at least one. Never empty: a verifier that accepts any audience would take
    // tokens minted for other services.
    std::vector<std::string> audiences;
    // Tolerance for clock differences on exp, nbf and iat.
    std::chrono::seconds skew{60};
    // Longer tokens are refused before any parsing.
    std::size_t max_token_bytes = 16 * 1024;
    // Algorithms accepted; empty means all four.
    std::vector<Alg> algorithms;
    // Refuse tokens without `sub`.
    bool require_subject = true;
};

// What a verified token says about its bearer.
struct VerifiedToken {
    std::string subject;              // `sub` ("" when absent and not required)
    std::vector<std::string> scopes;  // from `scope` (space-separated) or `scp` (array or string)
    std::string issuer;
    std::vector<std::string> audiences;  // `aud` as a list
    std::string client_id;               // `client_id` (RFC 9068), else `azp`, else ""
    std::chrono::system_clock::time_point expires_at;
    std::string kid;  // of the key that verified it
    Alg alg = Alg::RS256;
    nlohmann::json claims;  // the whole payload, for claims the caller maps itself

    bool has_scope(std::string_view scope) const;
};

class JwtVerifier {
public:
    // Throws std::invalid_argument when the issuer or the audiences are empty.
    explicit JwtVerifier(VerifierOptions options);

    // Verifies `token` (the bearer credential, without "Bearer ") against `keys` at time
    // `now`. Returns what it says; throws TokenError. Thread-safe.
    VerifiedToken verify(std::string_view token, const KeySet& keys, std::chrono::system_clock::time_point now) const;

    const VerifierOptions& options() const { return options_; }
    // Signature checks made so far (each a public-key operation): what a cache saves.
    std::uint64_t signature_checks() const { return signature_checks_.load(std::memory_order_relaxed); }

private:
    VerifierOptions options_;
    mutable std::atomic<std::uint64_t> signature_checks_{0};
};

// A NumericDate (RFC 7519 §2: seconds since the epoch, `exp` say) as a time_point, clamped
// to [1970-01-01, 2200-01-01T00:00:00Z]: system_clock counts nanoseconds in 64 bits, up to
// 2262-04-11, so a later date (1e10 was one, found by fuzz_auth) would overflow the
// conversion. For the verifier's and the introspector's expiry alike.
std::chrono::system_clock::time_point numeric_date_time(double seconds);

// Verifies a JWS signature over `signing_input` (the header and payload as sent, joined by
// a dot) with `key`. `signature` is the decoded JOSE signature (ES256: r||s, 64 bytes).
bool verify_signature(Alg alg, const Jwk& key, std::string_view signing_input, std::string_view signature);

}  // namespace toolport::auth
