#include "stores/memory_task_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "stores/argument_checks.hpp"
#include "stores/task_cursor.hpp"

namespace toolport::stores {

MemoryTaskStore::MemoryTaskStore(Executor& executor, Limits limits) : executor_(executor), limits_(limits) {}

// The parameters are copied into each coroutine, so a task may outlive the caller's arguments.
Task<void> MemoryTaskStore::create(TaskRecord record) {
    create_now(std::move(record));
    co_return;
}

Task<std::optional<TaskRecord>> MemoryTaskStore::get(std::string id, std::string owner) {
    co_return get_now(id, owner);
}

Task<TaskPage> MemoryTaskStore::list(std::string owner, std::string cursor, std::size_t limit) {
    co_return list_now(owner, cursor, limit);
}

Task<TaskUpdate> MemoryTaskStore::update(TaskRecord change) { co_return update_now(change); }

void MemoryTaskStore::create_now(TaskRecord record) {
    if (record.id.empty()) throw std::invalid_argument("a task record needs an id");
    if (record.owner.empty()) throw std::invalid_argument("a task record needs an owner");
    if (record.ttl_ms <= 0) throw std::invalid_argument("a task record needs a ttl_ms > 0");
    const auto now = executor_.now();
    drop_expired(now);
    if (records_.count(record.id)) throw std::invalid_argument("task id " + record.id + " is taken");
    // Every record counted below is live: drop_expired has just run.
    auto owner_listing = by_owner_.find(record.owner);
    const std::size_t owned = owner_listing == by_owner_.end() ? 0 : owner_listing->second.size();
    if (owned >= limits_.max_records_per_owner)
        throw TaskLimitReached("this owner already has " + std::to_string(owned) + " tasks");
    if (records_.size() >= limits_.max_records)
        throw TaskLimitReached("the task store holds its most records (" + std::to_string(records_.size()) + ")");

    const auto expires_at = now + clamp_duration(std::chrono::milliseconds(record.ttl_ms));
    by_owner_[record.owner].emplace(record.created_at_ms, record.id);
    by_expiry_.emplace(expires_at, record.id);
    std::string id = record.id;
    records_.emplace(std::move(id), Entry{std::move(record), expires_at});
}

std::optional<TaskRecord> MemoryTaskStore::get_now(const std::string& id, const std::string& owner) {
    Entry* entry = live(id, executor_.now());
    // Another owner's record answers as a missing one would: ids are not to be probed.
    if (!entry || entry->record.owner != owner) return std::nullopt;
    return entry->record;
}

std::vector<TaskRecord> MemoryTaskStore::unfinished_now(std::size_t limit) {
    drop_expired(executor_.now());
    std::vector<const TaskRecord*> found;
    for (const auto& [id, entry] : records_) {
        if (!is_terminal(entry.record.status)) found.push_back(&entry.record);
    }
    std::sort(found.begin(), found.end(), [](const TaskRecord* a, const TaskRecord* b) {
        return std::tie(a->created_at_ms, a->id) > std::tie(b->created_at_ms, b->id);
    });
    if (found.size() > limit) found.resize(limit);
    std::vector<TaskRecord> out;
    out.reserve(found.size());
    for (const auto* record : found) out.push_back(*record);
    return out;
}

TaskPage MemoryTaskStore::list_now(const std::string& owner, const std::string& cursor, std::size_t limit) {
    const std::size_t page_size = std::max<std::size_t>(limit, 1);
    std::optional<TaskCursor> after;
    if (!cursor.empty()) after = TaskCursor::parse(cursor);  // before any work: a bad cursor changes nothing

    TaskPage page;
    auto owner_listing = by_owner_.find(owner);
    if (owner_listing == by_owner_.end()) return page;
    const Listing& listing = owner_listing->second;
    const auto now = executor_.now();
    // In the descending order, the first key after the cursor is the first one below it.
    auto it = after ? listing.upper_bound(ListingKey{after->created_at_ms, after->id}) : listing.begin();
    std::vector<std::string> expired;
    bool more = false;
    for (; it != listing.end(); ++it) {
        const Entry& entry = records_.at(it->second);
        if (entry.expires_at <= now) {
            expired.push_back(it->second);
            continue;
        }
        if (page.tasks.size() == page_size) {
            more = true;
            break;
        }
        page.tasks.push_back(entry.record);
    }
    if (more) page.next_cursor = TaskCursor::after(page.tasks.back()).encode();
    for (const auto& id : expired) drop(id);  // after the walk: drop() edits the listing
    return page;
}

TaskUpdate MemoryTaskStore::update_now(const TaskRecord& change) {
    Entry* entry = live(change.id, executor_.now());
    if (!entry || entry->record.owner != change.owner) return TaskUpdate::not_found;
    TaskRecord& record = entry->record;
    if (is_terminal(record.status)) return TaskUpdate::terminal;
    record.status = change.status;
    record.status_message = change.status_message;
    record.result = change.result;
    record.error = change.error;
    record.input_requests = change.input_requests;
    record.last_updated_at_ms = change.last_updated_at_ms;
    return TaskUpdate::applied;
}

MemoryTaskStore::Entry* MemoryTaskStore::live(const std::string& id, TimePoint now) {
    auto found = records_.find(id);
    if (found == records_.end()) return nullptr;
    if (found->second.expires_at <= now) {
        drop(id);
        return nullptr;
    }
    return &found->second;
}

void MemoryTaskStore::drop(const std::string& id) {
    auto found = records_.find(id);
    if (found == records_.end()) return;
    const Entry& entry = found->second;
    by_expiry_.erase({entry.expires_at, id});
    auto owner_listing = by_owner_.find(entry.record.owner);
    if (owner_listing != by_owner_.end()) {
        owner_listing->second.erase({entry.record.created_at_ms, id});
        if (owner_listing->second.empty()) by_owner_.erase(owner_listing);
    }
    records_.erase(found);
}

void MemoryTaskStore::drop_expired(TimePoint now) {
    while (!by_expiry_.empty() && by_expiry_.begin()->first <= now) {
        std::string id = by_expiry_.begin()->second;  // a copy: drop() erases the index entry
        drop(id);
    }
}

}  // namespace toolport::stores
