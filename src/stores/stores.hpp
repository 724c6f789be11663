// The stores the pipeline shares: cache, rate limits, budgets, task records (and, with Redis,
// the tool pins). `store: memory` (default)
// keeps them in this process; `store: redis://host:port[/db]` shares them between
// replicas through Redis, with local fallbacks while Redis is away.
//
//   auto stores = make_stores(options, executor);   // throws StoreConfigError for a bad URL
//   co_await stores->cache().get(key);
//
// Where things are: memory_cache, local_rate_limits, local_budgets, memory_task_store
// (in-process); redis_stores.hpp with redis_cache, redis_rate_limits, redis_budgets,
// redis_task_store (the Lua scripts sit
// next to the C++ that calls them); redis_client (hiredis on the Asio loop), redis_script
// (EVALSHA/EVAL), redis_url (parsing the store URL).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

#include "server/task_store.hpp"
#include "stores/budget_store.hpp"
#include "stores/cache_store.hpp"
#include "stores/rate_limit_store.hpp"

namespace toolport {
class Executor;
}

namespace toolport::stores {

class PinStore;

struct StoreOptions {
    std::string url = "memory";                      // "memory" or "redis://[:password@]host:port[/db]"
    std::size_t memory_cache_max_bytes = 64u << 20;  // local LRU bound (also the Redis fallback)
    std::size_t memory_cache_max_entries = 100000;
    std::string key_prefix = "toolport:";          // every Redis key starts with it
    bool rate_limit_fail_open = true;              // when Redis is away: allow (true) or refuse
    std::chrono::milliseconds redis_timeout{250};  // per command; slower counts as "away"
    std::chrono::milliseconds reconnect_interval{1000};
    std::size_t max_tasks_per_owner = 1000;  // live task records of one owner (both backends)
    std::size_t max_tasks = 100000;          // task records in all (in-process store and fallback)
};

struct StoreConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Stores {
public:
    virtual ~Stores() = default;
    virtual CacheStore& cache() = 0;
    virtual RateLimitStore& rate_limits() = 0;
    virtual BudgetStore& budgets() = 0;
    virtual TaskStore& tasks() = 0;
    // The tool pins on the shared Redis (RedisPinStore, on the stores' connection); nullptr
    // in memory, where the pins are a file (LocalPinStore, which needs no shared store).
    virtual std::shared_ptr<PinStore> shared_pins() = 0;
    // "memory" or "redis".
    virtual std::string_view backend() const = 0;
    // available when in-process or Redis is connected; degraded while on fallbacks.
    virtual StoreState state() const = 0;
};

// `executor` must be the process's AsioExecutor when the URL is redis:// (the Redis
// connection runs on its event loop).
std::unique_ptr<Stores> make_stores(const StoreOptions& options, Executor& executor);

}  // namespace toolport::stores
