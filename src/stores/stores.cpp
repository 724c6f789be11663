#include "stores/stores.hpp"

#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "stores/local_budgets.hpp"
#include "stores/local_rate_limits.hpp"
#include "stores/memory_cache.hpp"
#include "stores/memory_task_store.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"
#include "stores/redis_url.hpp"

namespace toolport::stores {

namespace {

MemoryTaskStore::Limits task_limits(const StoreOptions& options) {
    return MemoryTaskStore::Limits{options.max_tasks, options.max_tasks_per_owner};
}

class MemoryStores final : public Stores {
public:
    MemoryStores(const StoreOptions& options, Executor& executor)
        : cache_(executor, options.memory_cache_max_bytes, options.memory_cache_max_entries),
          rate_limits_(executor),
          budgets_(executor),
          tasks_(executor, task_limits(options)) {}

    CacheStore& cache() override { return cache_; }
    RateLimitStore& rate_limits() override { return rate_limits_; }
    BudgetStore& budgets() override { return budgets_; }
    TaskStore& tasks() override { return tasks_; }
    std::shared_ptr<PinStore> shared_pins() override { return nullptr; }
    std::string_view backend() const override { return "memory"; }
    StoreState state() const override { return StoreState::available; }

private:
    MemoryCache cache_;
    LocalRateLimits rate_limits_;
    LocalBudgets budgets_;
    MemoryTaskStore tasks_;
};

class RedisStores final : public Stores {
public:
    RedisStores(const StoreOptions& options, AsioExecutor& executor, RedisEndpoint endpoint)
        : client_(std::make_shared<RedisClient>(
              executor,
              RedisClient::Options{std::move(endpoint), options.redis_timeout, options.reconnect_interval, {}, {}})),
          cache_(client_, options.key_prefix,
                 std::make_unique<MemoryCache>(executor, options.memory_cache_max_bytes,
                                               options.memory_cache_max_entries)),
          rate_limits_(client_, options.key_prefix, options.rate_limit_fail_open, options.reconnect_interval),
          budgets_(client_, options.key_prefix, std::make_unique<LocalBudgets>(executor)),
          tasks_(client_, options.key_prefix, options.max_tasks_per_owner,
                 std::make_unique<MemoryTaskStore>(executor, task_limits(options))),
          pins_(std::make_shared<RedisPinStore>(client_, options.key_prefix, executor)) {
        // Returns at once: start-up does not wait for Redis; until it answers, the stores
        // run on their fallbacks.
        client_->start();
        // Other replicas see this process alive while it renews its key (tasks it runs).
        tasks_.start_heartbeat(executor, std::chrono::milliseconds(1000));
    }

    CacheStore& cache() override { return cache_; }
    RateLimitStore& rate_limits() override { return rate_limits_; }
    BudgetStore& budgets() override { return budgets_; }
    TaskStore& tasks() override { return tasks_; }
    std::shared_ptr<PinStore> shared_pins() override { return pins_; }
    std::string_view backend() const override { return "redis"; }
    StoreState state() const override { return client_->ready() ? StoreState::available : StoreState::degraded; }

private:
    std::shared_ptr<RedisClient> client_;
    RedisCache cache_;
    RedisRateLimits rate_limits_;
    RedisBudgets budgets_;
    RedisTaskStore tasks_;
    std::shared_ptr<RedisPinStore> pins_;
};

void check_redis_options(const StoreOptions& options) {
    if (options.redis_timeout.count() <= 0) throw StoreConfigError("store: the Redis command timeout must be positive");
    if (options.reconnect_interval.count() <= 0)
        throw StoreConfigError("store: the Redis reconnect interval must be positive");
}

}  // namespace

std::unique_ptr<Stores> make_stores(const StoreOptions& options, Executor& executor) {
    if (options.url == "memory") return std::make_unique<MemoryStores>(options, executor);
    if (options.url.empty())
        throw StoreConfigError("store URL is empty; expected \"memory\" or redis://host:port[/db]");
    RedisEndpoint endpoint = parse_redis_url(options.url);
    check_redis_options(options);
    auto* asio_executor = dynamic_cast<AsioExecutor*>(&executor);
    if (!asio_executor)
        throw StoreConfigError("store: Redis needs the process's Asio event loop, and this executor is not one");
    spdlog::info("stores: Redis at {} (keys under \"{}\")", endpoint.describe(), options.key_prefix);
    return std::make_unique<RedisStores>(options, *asio_executor, std::move(endpoint));
}

}  // namespace toolport::stores
