#include "auth/token_cache.hpp"

#include <cstring>

#include "util/digest.hpp"

namespace toolport::auth {

TokenDigest token_digest(std::string_view token) { return util::sha256(token); }

std::size_t VerifiedTokenCache::DigestHash::operator()(const Digest& d) const noexcept {
    // The digest is already uniformly distributed: its first bytes are the hash.
    std::size_t h;
    std::memcpy(&h, d.data(), sizeof h);
    return h;
}

VerifiedTokenCache::VerifiedTokenCache(std::size_t capacity) : capacity_(capacity) {}

void VerifiedTokenCache::erase(std::unordered_map<Digest, Entry, DigestHash>::iterator it) {
    by_expiry_.erase(it->second.expiry);
    entries_.erase(it);
}

std::shared_ptr<const VerifiedToken> VerifiedTokenCache::find(std::string_view token,
                                                              std::chrono::system_clock::time_point now) {
    if (capacity_ == 0) return nullptr;
    return find(token_digest(token), now);
}

std::shared_ptr<const VerifiedToken> VerifiedTokenCache::find(const TokenDigest& key,
                                                              std::chrono::system_clock::time_point now) {
    if (capacity_ == 0) return nullptr;
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    if (now >= it->second.token->expires_at) {
        erase(it);
        return nullptr;
    }
    return it->second.token;
}

void VerifiedTokenCache::insert(std::string_view token, std::shared_ptr<const VerifiedToken> verified,
                                std::chrono::system_clock::time_point now) {
    if (capacity_ == 0 || !verified || verified->expires_at <= now) return;
    insert(token_digest(token), std::move(verified), now);
}

void VerifiedTokenCache::insert(const TokenDigest& key, std::shared_ptr<const VerifiedToken> verified,
                                std::chrono::system_clock::time_point now) {
    if (capacity_ == 0 || !verified || verified->expires_at <= now) return;
    std::lock_guard lock(mutex_);
    if (auto it = entries_.find(key); it != entries_.end()) erase(it);
    // Expired entries go first, then (still full) the ones that expire soonest.
    while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) erase(entries_.find(by_expiry_.begin()->second));
    while (entries_.size() >= capacity_) erase(entries_.find(by_expiry_.begin()->second));
    auto expiry = by_expiry_.emplace(verified->expires_at, key);
    entries_.emplace(key, Entry{std::move(verified), expiry});
}

void VerifiedTokenCache::clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    by_expiry_.clear();
}

std::size_t VerifiedTokenCache::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

}  // namespace toolport::auth
