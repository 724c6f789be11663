#include "auth/token_cache.hpp"

#include <openssl/evp.h>

#include <cstring>
#include <stdexcept>

namespace toolport::auth {

namespace {

const EVP_MD* sha256() {
    static const EVP_MD* const fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    return fetched ? fetched : EVP_sha256();
}

}  // namespace

std::size_t VerifiedTokenCache::DigestHash::operator()(const Digest& d) const noexcept {
    // The digest is already uniformly distributed: its first bytes are the hash.
    std::size_t h;
    std::memcpy(&h, d.data(), sizeof h);
    return h;
}

VerifiedTokenCache::VerifiedTokenCache(std::size_t capacity) : capacity_(capacity) {}

VerifiedTokenCache::Digest VerifiedTokenCache::digest(std::string_view token) {
    Digest out;
    unsigned int length = 0;
    if (EVP_Digest(token.data(), token.size(), out.data(), &length, sha256(), nullptr) != 1 || length != out.size())
        throw std::runtime_error("SHA-256 failed");
    return out;
}

void VerifiedTokenCache::erase(std::unordered_map<Digest, Entry, DigestHash>::iterator it) {
    by_expiry_.erase(it->second.expiry);
    entries_.erase(it);
}

std::shared_ptr<const VerifiedToken> VerifiedTokenCache::find(std::string_view token,
                                                              std::chrono::system_clock::time_point now) {
    if (capacity_ == 0) return nullptr;
    Digest key = digest(token);
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
    Digest key = digest(token);
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
