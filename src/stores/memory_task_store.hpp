// MemoryTaskStore: task records kept in this process (`store: memory`, and RedisTaskStore's
// fallback while Redis is away). Touched from the event-loop thread only, like every store.
//
// A record expires ttl_ms after it was stored, on the executor's steady clock: it is
// stored as it is created, so that is created_at_ms to within the call, and it neither
// jumps with the wall clock nor needs the wall clock in tests (they use a fake executor).
//
// Memory stays bounded: an expired record is dropped when get, list or update meets it,
// and every create first drops every expired record (popped from the front of an index
// ordered by expiry, so each record costs that work once); beyond that, the caps below
// refuse new records (TaskLimitReached) rather than evict live ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include "async/executor.hpp"
#include "server/task_store.hpp"
#include "stores/store_health.hpp"

namespace toolport::stores {

class MemoryTaskStore final : public TaskStore {
public:
    struct Limits {
        std::size_t max_records = 100000;          // in all
        std::size_t max_records_per_owner = 1000;  // live records of one owner
    };

    // `executor` supplies the clock (tests use a fake one).
    explicit MemoryTaskStore(Executor& executor) : MemoryTaskStore(executor, Limits{}) {}
    MemoryTaskStore(Executor& executor, Limits limits);

    std::string_view backend() const override { return "memory"; }
    // Only this process sees these records: their runner is this process, alive.
    const std::string& runner_id() const override { return runner_id_; }
    Task<bool> runner_alive(std::string) override { co_return true; }
    Task<void> create(TaskRecord record) override;
    Task<std::optional<TaskRecord>> get(std::string id, std::string owner) override;
    Task<TaskPage> list(std::string owner, std::string cursor, std::size_t limit) override;
    Task<TaskUpdate> update(TaskRecord change) override;
    Task<std::vector<TaskRecord>> unfinished(std::size_t limit) override { co_return unfinished_now(limit); }
    // How the store is doing, for the stores layer (the engine's TaskStore does not ask).
    StoreState state() const { return StoreState::available; }

    // The same operations without a coroutine, for callers already on the loop.
    void create_now(TaskRecord record);
    std::optional<TaskRecord> get_now(const std::string& id, const std::string& owner);
    TaskPage list_now(const std::string& owner, const std::string& cursor, std::size_t limit);
    TaskUpdate update_now(const TaskRecord& change);
    std::vector<TaskRecord> unfinished_now(std::size_t limit);

    // Records held, expired ones not yet dropped included.
    std::size_t records() const { return records_.size(); }
    // Owners with at least one record held.
    std::size_t owners() const { return by_owner_.size(); }

private:
    using TimePoint = Executor::Clock::time_point;
    std::string runner_id_ = "local";
    struct Entry {
        TaskRecord record;
        TimePoint expires_at;
    };
    // An owner's listing order, newest first: (created_at_ms, id) descending.
    using ListingKey = std::pair<std::int64_t, std::string>;
    using Listing = std::set<ListingKey, std::greater<>>;

    // The record's live entry, or nullptr (an expired one is dropped on the way).
    Entry* live(const std::string& id, TimePoint now);
    void drop(const std::string& id);
    void drop_expired(TimePoint now);

    Executor& executor_;
    Limits limits_;
    std::unordered_map<std::string, Entry> records_;
    std::unordered_map<std::string, Listing> by_owner_;
    std::set<std::pair<TimePoint, std::string>> by_expiry_;
};

}  // namespace toolport::stores
