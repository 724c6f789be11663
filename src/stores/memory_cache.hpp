// MemoryCache: the in-process cache. Least-recently-used entries are evicted once the
// total of key and value bytes, or the number of entries, goes over its bound; each entry
// also expires after its own TTL. get and put are O(1) (a hash map into a recency list).
//
// Used on its own for `store: memory`, and as RedisCache's fallback while Redis is away.
// Like the rest of the engine it is touched from the event-loop thread only (no locks).
#pragma once

#include <chrono>
#include <cstddef>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "async/executor.hpp"
#include "stores/cache_store.hpp"

namespace toolport::stores {

class MemoryCache final : public CacheStore {
public:
    // `executor` supplies the clock (tests use a fake one).
    MemoryCache(Executor& executor, std::size_t max_bytes, std::size_t max_entries);

    std::string_view backend() const override { return "memory"; }
    Task<std::optional<std::string>> get(const std::string& key) override;
    Task<void> put(const std::string& key, std::string value, std::chrono::milliseconds ttl) override;
    Task<std::string> generation(const std::string& scope) override;
    Task<void> invalidate(const std::string& scope) override;
    StoreState state() const override { return StoreState::available; }

    // The same operations without a coroutine, for callers already on the loop.
    std::optional<std::string> lookup(std::string_view key);
    // A value larger than the whole byte bound, or a ttl <= 0, is not kept (and drops any
    // older value under the key, which would otherwise be served stale).
    void store(std::string_view key, std::string value, std::chrono::milliseconds ttl);
    void erase(std::string_view key);
    std::string generation_of(const std::string& scope) const;
    void next_generation(const std::string& scope);

    std::size_t entries() const { return index_.size(); }
    // Sum of key and value sizes of the entries held.
    std::size_t bytes() const { return bytes_; }

private:
    struct Entry {
        std::string key;
        std::string value;
        Executor::Clock::time_point expires_at;
        std::size_t size() const { return key.size() + value.size(); }
    };
    using Recency = std::list<Entry>;  // most recently used first

    Task<std::optional<std::string>> get_copy(std::string key);
    Task<void> put_copy(std::string key, std::string value, std::chrono::milliseconds ttl);
    void remove(Recency::iterator it);
    void evict_to_bounds();

    Executor& executor_;
    std::size_t max_bytes_;
    std::size_t max_entries_;
    std::size_t bytes_ = 0;
    Recency recency_;
    // Keys are views of Entry::key: list nodes never move, so the views stay valid.
    std::unordered_map<std::string_view, Recency::iterator> index_;
    // Per scope (a source: a handful), bumped by invalidate(); entries of older
    // generations are never asked for again and age out of the LRU.
    std::unordered_map<std::string, std::uint64_t> generations_;
};

}  // namespace toolport::stores
