// The stores over Redis, shared by every replica that points at the same Redis. They share
// one RedisClient (one pipelined connection) and keep every key under the configured
// prefix, one namespace each: <prefix>cache:<key>, <prefix>rate:<key>, <prefix>budget:<scope>.
//
// While Redis is away (not connected, a command timed out, the connection broke mid-command,
// or Redis answered with an error such as WRONGTYPE) each store answers locally:
//   - RedisCache: from its MemoryCache fallback (state degraded);
//   - RedisRateLimits: fail-open (allowed) or fail-closed (refused, retry after the
//     reconnect interval) per StoreOptions::rate_limit_fail_open (degraded / unavailable);
//   - RedisBudgets: from its LocalBudgets fallback (degraded).
// Once the client has reconnected they use Redis again.
//
// Arguments are copied into the coroutine, so a caller's temporaries may end before the
// co_await finishes. The stores must outlive the tasks they return.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "stores/budget_store.hpp"
#include "stores/cache_store.hpp"
#include "stores/local_budgets.hpp"
#include "stores/memory_cache.hpp"
#include "stores/rate_limit_store.hpp"
#include "stores/redis_script.hpp"

namespace toolport::stores {

class RedisClient;

class RedisCache final : public CacheStore {
public:
    RedisCache(std::shared_ptr<RedisClient> client, std::string key_prefix, std::unique_ptr<MemoryCache> fallback);

    std::string_view backend() const override { return "redis"; }
    // GET; a miss also when Redis holds something that is not a string under the key.
    Task<std::optional<std::string>> get(const std::string& key) override;
    // SET key value PX ttl (a ttl <= 0 stores nothing).
    Task<void> put(const std::string& key, std::string value, std::chrono::milliseconds ttl) override;
    StoreState state() const override;

    MemoryCache& fallback() { return *fallback_; }

private:
    Task<std::optional<std::string>> fetch(std::string key);
    Task<void> store(std::string key, std::string value, std::chrono::milliseconds ttl);

    std::shared_ptr<RedisClient> client_;
    std::string prefix_;
    std::unique_ptr<MemoryCache> fallback_;
};

class RedisRateLimits final : public RateLimitStore {
public:
    RedisRateLimits(std::shared_ptr<RedisClient> client, std::string key_prefix, bool fail_open,
                    std::chrono::milliseconds reconnect_interval);

    std::string_view backend() const override { return "redis"; }
    // LocalRateLimits' semantics, run atomically by one Lua script on Redis's clock (TIME),
    // so replicas share one limit whatever their own clocks say.
    Task<RateDecision> acquire(const std::string& key, const RateLimitRule& rule) override;
    StoreState state() const override;

private:
    Task<RateDecision> decide(std::string key, RateLimitRule rule);
    RateDecision while_away() const;

    std::shared_ptr<RedisClient> client_;
    std::string prefix_;
    bool fail_open_;
    std::chrono::milliseconds reconnect_interval_;
    RedisScript script_;
};

class RedisBudgets final : public BudgetStore {
public:
    RedisBudgets(std::shared_ptr<RedisClient> client, std::string key_prefix, std::unique_ptr<LocalBudgets> fallback);

    std::string_view backend() const override { return "redis"; }
    // Check-and-add and settle are Lua scripts (atomic across replicas); both PEXPIRE the scope.
    Task<BudgetReservation> reserve(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                    std::chrono::milliseconds ttl) override;
    Task<std::int64_t> settle(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                              std::chrono::milliseconds ttl) override;
    Task<std::int64_t> used(const std::string& scope) override;
    StoreState state() const override;

    LocalBudgets& fallback() { return *fallback_; }

private:
    Task<BudgetReservation> reserve_copy(std::string scope, std::int64_t amount, std::int64_t limit,
                                         std::chrono::milliseconds ttl);
    Task<std::int64_t> settle_copy(std::string scope, std::int64_t reserved, std::int64_t actual,
                                   std::chrono::milliseconds ttl);
    Task<std::int64_t> used_copy(std::string scope);

    std::shared_ptr<RedisClient> client_;
    std::string prefix_;
    std::unique_ptr<LocalBudgets> fallback_;
    RedisScript reserve_script_;
    RedisScript settle_script_;
};

}  // namespace toolport::stores
