// The verified-token cache: a token that passed JwtVerifier is remembered by the SHA-256
// digest of its text (the token itself is never stored) until its `exp`, so the requests
// that follow with the same bearer token skip the signature check.
//
//   auth::VerifiedTokenCache cache(10000);
//   if (auto hit = cache.find(token, now)) use(*hit);
//   else cache.insert(token, std::make_shared<const auth::VerifiedToken>(verifier.verify(...)));
//
// Bounded: past `capacity` entries, expired entries are dropped first, then those that
// expire soonest. An entry is served only while now < its token's exp (exp without the
// verifier's skew: the cache never extends a token's life). Thread-safe (one mutex).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "auth/jwt.hpp"

namespace toolport::auth {

// What a token is known by once it has been seen: the SHA-256 digest of its text. Taken
// once per request and handed on (find, insert, the introspector's other maps).
using TokenDigest = std::array<unsigned char, 32>;
TokenDigest token_digest(std::string_view token);

class VerifiedTokenCache {
public:
    // capacity 0: nothing is cached.
    explicit VerifiedTokenCache(std::size_t capacity);

    // The cached verification of the token, if any and not expired at `now`.
    std::shared_ptr<const VerifiedToken> find(std::string_view token, std::chrono::system_clock::time_point now);
    std::shared_ptr<const VerifiedToken> find(const TokenDigest& token, std::chrono::system_clock::time_point now);

    // Remembers `verified` for the token until verified->expires_at (nothing happens when
    // that is not after `now`).
    void insert(std::string_view token, std::shared_ptr<const VerifiedToken> verified,
                std::chrono::system_clock::time_point now);
    void insert(const TokenDigest& token, std::shared_ptr<const VerifiedToken> verified,
                std::chrono::system_clock::time_point now);

    // Forgets everything (e.g. after the key set lost a key).
    void clear();
    std::size_t size() const;
    std::size_t capacity() const { return capacity_; }

private:
    using Digest = TokenDigest;
    struct DigestHash {
        std::size_t operator()(const Digest& d) const noexcept;
    };
    using ExpiryIndex = std::multimap<std::chrono::system_clock::time_point, Digest>;
    struct Entry {
        std::shared_ptr<const VerifiedToken> token;
        ExpiryIndex::iterator expiry;
    };

    void erase(std::unordered_map<Digest, Entry, DigestHash>::iterator it);

    const std::size_t capacity_;
    mutable std::mutex mutex_;
    std::unordered_map<Digest, Entry, DigestHash> entries_;
    ExpiryIndex by_expiry_;
};

}  // namespace toolport::auth
