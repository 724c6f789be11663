// TokenAuthenticator: the one call a transport makes for a bearer token. It ties together
// the key source (key_source.hpp), the verifier (jwt.hpp) and the verified-token cache
// (token_cache.hpp):
//
//   auth::TokenAuthenticator authn({.verifier = {.issuer = ..., .audiences = {...}}},
//                                  std::make_shared<auth::DiscoveredKeySource>(http, discovery));
//   std::shared_ptr<const auth::VerifiedToken> who = co_await authn.authenticate(token);
//
//  1. a token verified before and not expired is answered from the cache (no signature check);
//  2. otherwise the key source's current set verifies it; when the token's kid is not in
//     that set, the source is asked to refresh (rate-limited by its floor) and the token
//     is verified once more against what it returns;
//  3. a token that verifies is cached until its exp.
// With an introspector (introspection.hpp), a token that is not shaped like a JWT (or
// every token, with opaque_only) is asked about at the authorization server instead
// (RFC 7662), with that class's own cache.
// Throws TokenError: the verifier's reasons, or keys_unavailable when the key source has
// no key set (a server-side failure: answer 503, not 401). Runs where the key source runs
// (DiscoveredKeySource: its HTTP client's event loop); the authenticator must outlive the
// tasks it returns.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "async/task.hpp"
#include "auth/introspection.hpp"
#include "auth/jwt.hpp"
#include "auth/key_source.hpp"
#include "auth/token_cache.hpp"

namespace toolport::auth {

struct AuthenticatorOptions {
    VerifierOptions verifier;
    // Verified tokens remembered at once (0: no cache).
    std::size_t cache_capacity = 10'000;
    // Wall clock for exp/nbf/iat; default std::chrono::system_clock::now.
    std::function<std::chrono::system_clock::time_point()> clock;
    // Checks opaque tokens (null: every token must be a JWT).
    std::shared_ptr<TokenIntrospector> introspector;
    // Every token is introspected, JWTs too (`auth.token_format: opaque`); no key source needed.
    bool opaque_only = false;
};

class TokenAuthenticator {
public:
    // Throws std::invalid_argument (see JwtVerifier), or for a null key source (allowed with
    // opaque_only and an introspector).
    TokenAuthenticator(AuthenticatorOptions options, std::shared_ptr<KeySource> keys);

    // `token`: the bearer credential, without the "Bearer " prefix.
    Task<std::shared_ptr<const VerifiedToken>> authenticate(std::string token);

    // Step 1 alone, without waiting: the cached verification of `token`, or null when it
    // has to be verified (authenticate). What a transport answers synchronously with.
    std::shared_ptr<const VerifiedToken> cached(std::string_view token);

    const JwtVerifier& verifier() const { return verifier_; }
    VerifiedTokenCache& cache() { return cache_; }

private:
    std::chrono::system_clock::time_point now() const;
    bool introspected(std::string_view token) const;

    AuthenticatorOptions options_;
    JwtVerifier verifier_;
    VerifiedTokenCache cache_;
    std::shared_ptr<KeySource> keys_;
};

}  // namespace toolport::auth
