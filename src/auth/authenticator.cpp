#include "auth/authenticator.hpp"

namespace toolport::auth {

TokenAuthenticator::TokenAuthenticator(AuthenticatorOptions options, std::shared_ptr<KeySource> keys)
    : options_(std::move(options)),
      verifier_(options_.verifier),
      cache_(options_.cache_capacity),
      keys_(std::move(keys)) {
    if (options_.opaque_only && !options_.introspector)
        throw std::invalid_argument("token authenticator: opaque tokens need an introspector");
    if (!keys_ && !options_.opaque_only) throw std::invalid_argument("token authenticator: no key source");
}

bool TokenAuthenticator::introspected(std::string_view token) const {
    return options_.introspector && (options_.opaque_only || !looks_like_jwt(token));
}

std::chrono::system_clock::time_point TokenAuthenticator::now() const {
    return options_.clock ? options_.clock() : std::chrono::system_clock::now();
}

std::shared_ptr<const VerifiedToken> TokenAuthenticator::cached(std::string_view token) {
    if (token.size() > verifier_.options().max_token_bytes) return nullptr;
    if (introspected(token)) return options_.introspector->cached(token);
    return cache_.find(token, now());
}

Task<std::shared_ptr<const VerifiedToken>> TokenAuthenticator::authenticate(std::string token) {
    // Refused before it is hashed or parsed.
    if (token.size() > verifier_.options().max_token_bytes)
        throw TokenError(TokenErrorReason::too_large, "the token is too large");
    if (introspected(token)) co_return co_await options_.introspector->introspect(std::move(token));
    const TokenDigest key = token_digest(token);
    if (auto hit = cache_.find(key, now())) co_return hit;

    std::shared_ptr<const KeySet> keys;
    bool unavailable = false;
    std::string why;
    try {
        keys = co_await keys_->keys();
    } catch (const KeySourceError& e) {
        unavailable = true;
        why = e.what();
    }
    if (unavailable) throw TokenError(TokenErrorReason::keys_unavailable, "no key set to verify tokens with: " + why);

    std::shared_ptr<const VerifiedToken> verified;
    bool unknown_kid = false;
    try {
        verified = std::make_shared<const VerifiedToken>(verifier_.verify(token, *keys, now()));
    } catch (const TokenError& e) {
        if (e.reason() != TokenErrorReason::unknown_kid) throw;
        unknown_kid = true;
    }
    if (unknown_kid) {
        // The authorization server may have rotated its keys since the set was fetched.
        std::shared_ptr<const KeySet> fresh;
        try {
            fresh = co_await keys_->refresh(keys);
        } catch (const KeySourceError& e) {
            unavailable = true;
            why = e.what();
        }
        if (unavailable)
            throw TokenError(TokenErrorReason::keys_unavailable, "no key set to verify tokens with: " + why);
        if (fresh == keys) throw TokenError(TokenErrorReason::unknown_kid, "the token's kid is not in the key set");
        verified = std::make_shared<const VerifiedToken>(verifier_.verify(token, *fresh, now()));
    }
    cache_.insert(key, verified, now());
    co_return verified;
}

}  // namespace toolport::auth
