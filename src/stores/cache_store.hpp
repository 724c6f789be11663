// CacheStore: where the call pipeline's cache keeps tool results (cache-aside: the cache
// stage asks, and stores successful results itself). Values are opaque strings (the
// result's JSON). Implementations: in-process LRU bounded by bytes (memory_cache.hpp) and
// Redis shared by replicas, falling back to the local LRU while Redis is away
// (redis_stores.hpp).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "async/task.hpp"
#include "stores/store_health.hpp"

namespace toolport::stores {

class CacheStore {
public:
    virtual ~CacheStore() = default;
    // "memory" or "redis".
    virtual std::string_view backend() const = 0;
    // The value stored under `key`, or nothing (absent, expired, or the store is away).
    // Never throws for store trouble: a cache that is down is a miss.
    virtual Task<std::optional<std::string>> get(const std::string& key) = 0;
    // Stores `value` for `ttl`. Never throws for store trouble.
    virtual Task<void> put(const std::string& key, std::string value, std::chrono::milliseconds ttl) = 0;
    // The generation of `scope`'s entries (a source's): the cache stage puts it in their
    // keys, so invalidate() makes every entry of the scope unreachable at once, on every
    // replica that shares the store, without finding them. "0" until first invalidated.
    virtual Task<std::string> generation(const std::string& scope) = 0;
    // Starts a new generation of `scope` (a call that may have changed the source's data).
    // Never throws for store trouble.
    virtual Task<void> invalidate(const std::string& scope) = 0;
    virtual StoreState state() const = 0;
};

}  // namespace toolport::stores
