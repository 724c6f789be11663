// The stores over Redis, shared by every replica that points at the same Redis. They share
// one RedisClient (one pipelined connection) and keep every key under the configured
// prefix, one namespace each: <prefix>cache:<key>, <prefix>rate:<key>, <prefix>budget:<scope>,
// <prefix>task:<id> with <prefix>tasks:<owner>, <prefix>pins:... (RedisPinStore).
//
// While Redis is away (not connected, a command timed out, the connection broke mid-command,
// or Redis answered with an error such as WRONGTYPE) each store answers locally:
//   - RedisCache: from its MemoryCache fallback (state degraded);
//   - RedisRateLimits: fail-open (allowed) or fail-closed (refused, retry after the
//     reconnect interval) per StoreOptions::rate_limit_fail_open (degraded / unavailable);
//   - RedisBudgets: from its LocalBudgets fallback (degraded);
//   - RedisTaskStore: from its MemoryTaskStore fallback (degraded), which knows only the
//     tasks created while Redis was away (see the class);
//   - RedisPinStore: no fallback (a pin kept only in one replica's memory would be a pin the
//     others do not know): its calls throw PinStoreError, and the guard (pin_guard.hpp)
//     goes on judging listings against the pins it read last.
// Once the client has reconnected they use Redis again.
//
// Arguments are copied into the coroutine, so a caller's temporaries may end before the
// co_await finishes. The stores must outlive the tasks they return.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "server/task_store.hpp"
#include "stores/budget_store.hpp"
#include "stores/cache_store.hpp"
#include "stores/local_budgets.hpp"
#include "stores/memory_cache.hpp"
#include "stores/memory_task_store.hpp"
#include "stores/pin_store.hpp"
#include "stores/rate_limit_store.hpp"
#include "stores/redis_script.hpp"

namespace toolport {
class Executor;
}

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
    // GET / INCR of <prefix>cache:generation:<scope>, shared by every replica (the local
    // fallback's own while Redis is away; invalidate bumps both).
    Task<std::string> generation(const std::string& scope) override;
    Task<void> invalidate(const std::string& scope) override;
    StoreState state() const override;

    MemoryCache& fallback() { return *fallback_; }

private:
    Task<std::optional<std::string>> fetch(std::string key);
    Task<void> store(std::string key, std::string value, std::chrono::milliseconds ttl);
    Task<std::string> read_generation(std::string scope);
    Task<void> bump_generation(std::string scope);

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

// Task records shared by the replicas: a record is a JSON string under <prefix>task:<id>
// that Redis expires at created_at_ms + ttl_ms (PEXPIREAT, on Redis's clock); its owner's
// listing is a sorted set <prefix>tasks:<owner> of ids scored by created_at_ms, which
// expires with its latest-expiring record, and whose ids are pruned once their record is
// gone (when a listing meets them, and when the owner reaches its cap). create and update
// are Lua scripts: an id is never stored twice, and a terminal record never changes, so of
// a cancellation and a completion racing on two replicas exactly one is applied.
//
// While Redis is away, records are created in and read from the fallback. A task created
// on Redis and asked for then is not found (and an update to it is answered not_found and
// not kept), although Redis may still hold it: the replica cannot see it, and "not found"
// is what it can truthfully say. That is acceptable because it is an outage's degraded
// service, as /health reports: a client's poll fails instead of hanging or being told a
// made-up state, and once Redis is back the record (kept there with its TTL) answers again.
// The task's own result, computed during the outage, is lost to Redis: the record there
// stays as it was until it expires. Records created during the outage stay in the fallback
// until they expire, and get and update still find them there after Redis is back (list
// shows Redis's records only).
class RedisTaskStore final : public TaskStore {
public:
    // `max_per_owner`: create refuses (TaskLimitReached) once the owner has that many live
    // records in Redis.
    RedisTaskStore(std::shared_ptr<RedisClient> client, std::string key_prefix, std::size_t max_per_owner,
                   std::unique_ptr<MemoryTaskStore> fallback);
    ~RedisTaskStore() override { *alive_ = false; }

    std::string_view backend() const override { return "redis"; }
    Task<void> create(TaskRecord record) override;
    Task<std::optional<TaskRecord>> get(std::string id, std::string owner) override;
    Task<TaskPage> list(std::string owner, std::string cursor, std::size_t limit) override;
    Task<TaskUpdate> update(TaskRecord change) override;
    Task<std::vector<TaskRecord>> unfinished(std::size_t limit) override;
    // How the store is doing, for the stores layer (the engine's TaskStore does not ask).
    StoreState state() const;
    // A random name per process; alive while its key <prefix>runner:<id> exists, which
    // start_heartbeat() renews.
    const std::string& runner_id() const override { return runner_id_; }
    Task<bool> runner_alive(std::string runner) override;
    // Renews this process's key every `every` (it expires after 5 × `every`), for as long
    // as the store lives.
    void start_heartbeat(Executor& executor, std::chrono::milliseconds every);

    MemoryTaskStore& fallback() { return *fallback_; }

private:
    // The reply, or nullopt when Redis could not answer (the caller falls back).
    Task<std::optional<RedisReply>> ask(std::vector<std::string> args);
    Task<std::optional<RedisReply>> ask(const RedisScript& script, std::vector<std::string> keys,
                                        std::vector<std::string> args);
    // Drops the owner's listed ids whose record is gone; the ids left, or nullopt when Redis
    // could not answer.
    Task<std::optional<std::int64_t>> prune(std::string owner);
    std::string record_key(const std::string& id) const { return prefix_ + "task:" + id; }
    std::string listing_key(const std::string& owner) const { return prefix_ + "tasks:" + owner; }
    // Every owner's unfinished records (an owner is "token:…" or "session:…", never this).
    std::string unfinished_key() const { return prefix_ + "unfinished-tasks"; }

    std::shared_ptr<RedisClient> client_;
    std::string prefix_;
    std::size_t max_per_owner_;
    std::unique_ptr<MemoryTaskStore> fallback_;
    RedisScript create_script_;
    RedisScript update_script_;
    RedisScript prune_script_;
    std::string runner_id_;
    std::string runner_key(const std::string& runner) const { return prefix_ + "runner:" + runner; }
    void beat(Executor& executor, std::chrono::milliseconds every);
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // the heartbeat's timers check it
    // Answers of runner_alive() for a second, so polling tasks/get pays no extra round trip.
    struct Liveness {
        bool alive;
        std::chrono::steady_clock::time_point at;
    };
    std::unordered_map<std::string, Liveness> liveness_;
};

// Pins shared by the replicas (pin_store.hpp). Per source, two hashes of "<kind>:<name>" to
// "<digest> <definition record as JSON>": <prefix>pins:<source>:pinned and
// <prefix>pins:<source>:pending; the sources that have any in the set <prefix>pins:sources;
// and a counter <prefix>pins:version that every write increments (the guard's poll reads
// it: one GET per poll_ms per replica, nothing per call). Every write is one Lua script
// (the hashes, the set and the counter change together or not at all) and returns once
// Redis has run it; a listing's changes are one script. A first sight is HSETNX: of two
// replicas that see a definition first at once, the first pin stays and the second is
// told so (record_listing counts it). load is one script too, so a snapshot is never half
// of a write. Keys are built inside that script from the prefix: Toolport's Redis is one
// server (or a primary), not a cluster.
//
// Redis unreachable, or an answer of the wrong shape: PinStoreError. The first read after
// start waits (up to about two seconds) for the connection the stores open in the
// background, so a server whose Redis answers does not start with its pins unread.
class RedisPinStore final : public PinStore {
public:
    RedisPinStore(std::shared_ptr<RedisClient> client, std::string key_prefix, Executor& executor);

    std::string_view backend() const override { return "redis"; }
    Task<PinSnapshot> load() override;
    Task<std::string> version() override;
    Task<std::size_t> record_listing(std::string source, ListingWrites writes) override;
    Task<void> approve(std::string source, PinRecord record) override;
    Task<std::size_t> reset(std::string source, std::string key) override;
    // Connected (what health reports).
    bool ready() const;

private:
    Task<void> first_connection();
    Task<RedisReply> run(const RedisScript& script, std::vector<std::string> keys, std::vector<std::string> args,
                         std::string what);
    std::string pinned_key(const std::string& source) const { return prefix_ + source + ":pinned"; }
    std::string pending_key(const std::string& source) const { return prefix_ + source + ":pending"; }

    std::shared_ptr<RedisClient> client_;
    std::string prefix_;  // <key_prefix>pins:
    Executor& executor_;
    RedisScript load_script_;
    RedisScript listing_script_;
    RedisScript approve_script_;
    RedisScript reset_script_;
};

// A record as its hash value ("<digest> <JSON>"), and back: nullopt for a value that is
// not one, or whose record is not filed under `field` (its kind:name).
std::string pin_hash_value(const PinRecord& record);
std::optional<PinRecord> pin_from_hash_value(std::string_view field, std::string_view value);

}  // namespace toolport::stores
