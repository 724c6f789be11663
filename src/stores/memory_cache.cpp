#include "stores/memory_cache.hpp"

#include "stores/argument_checks.hpp"

namespace toolport::stores {

MemoryCache::MemoryCache(Executor& executor, std::size_t max_bytes, std::size_t max_entries)
    : executor_(executor), max_bytes_(max_bytes), max_entries_(max_entries) {}

// The coroutines take copies, so a task may outlive the caller's arguments.
Task<std::optional<std::string>> MemoryCache::get(const std::string& key) { return get_copy(key); }

Task<void> MemoryCache::put(const std::string& key, std::string value, std::chrono::milliseconds ttl) {
    return put_copy(key, std::move(value), ttl);
}

Task<std::optional<std::string>> MemoryCache::get_copy(std::string key) { co_return lookup(key); }

Task<std::string> MemoryCache::generation(const std::string& scope) {
    std::string value = generation_of(scope);
    co_return value;
}

Task<void> MemoryCache::invalidate(const std::string& scope) {
    next_generation(scope);
    co_return;
}

std::string MemoryCache::generation_of(const std::string& scope) const {
    auto it = generations_.find(scope);
    return it == generations_.end() ? std::string("0") : std::to_string(it->second);
}

void MemoryCache::next_generation(const std::string& scope) { ++generations_[scope]; }

Task<void> MemoryCache::put_copy(std::string key, std::string value, std::chrono::milliseconds ttl) {
    store(key, std::move(value), ttl);
    co_return;
}

std::optional<std::string> MemoryCache::lookup(std::string_view key) {
    auto found = index_.find(key);
    if (found == index_.end()) return std::nullopt;
    auto it = found->second;
    if (executor_.now() >= it->expires_at) {
        remove(it);
        return std::nullopt;
    }
    recency_.splice(recency_.begin(), recency_, it);
    return it->value;
}

void MemoryCache::store(std::string_view key, std::string value, std::chrono::milliseconds ttl) {
    erase(key);
    if (ttl <= std::chrono::milliseconds::zero()) return;
    if (max_entries_ == 0 || key.size() + value.size() > max_bytes_) return;
    recency_.push_front(Entry{std::string(key), std::move(value), executor_.now() + clamp_duration(ttl)});
    auto it = recency_.begin();
    index_.emplace(std::string_view(it->key), it);
    bytes_ += it->size();
    evict_to_bounds();
}

void MemoryCache::erase(std::string_view key) {
    auto found = index_.find(key);
    if (found != index_.end()) remove(found->second);
}

void MemoryCache::remove(Recency::iterator it) {
    bytes_ -= it->size();
    index_.erase(std::string_view(it->key));
    recency_.erase(it);
}

void MemoryCache::evict_to_bounds() {
    while (!recency_.empty() && (bytes_ > max_bytes_ || index_.size() > max_entries_)) {
        remove(std::prev(recency_.end()));
    }
}

}  // namespace toolport::stores
