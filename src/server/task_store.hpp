// TaskStore: the records of long-running calls run as tasks (MCP tasks: the 2025-11-25 task
// model and the 2026-07-28 tasks extension, SEP-2663), as the task engine (tasks.hpp) needs
// them. A record says what became of the call (working, waiting for input, completed with a
// result, failed with an error, cancelled), whom it belongs to, and how long it is kept.
// The server owns this interface; the stores layer implements it (stores/memory_task_store.hpp
// in memory by default; stores/redis_stores.hpp in Redis with `store: redis://...`, so that
// any replica can answer tasks/get for a task another replica runs).
//
// A record is visible only to its owner (the identity that created it: a token, else a
// session), and only until it expires: `ttl_ms` after it was created. A terminal record
// (completed, failed, cancelled) never changes again, so a cancellation that races the
// call's completion has one winner, decided by the store atomically.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"

namespace toolport {

enum class TaskStatus { working, input_required, completed, failed, cancelled };

std::string_view to_string(TaskStatus status);
std::optional<TaskStatus> task_status_from(std::string_view text);
inline bool is_terminal(TaskStatus s) {
    return s == TaskStatus::completed || s == TaskStatus::failed || s == TaskStatus::cancelled;
}

struct TaskRecord {
    std::string id;     // unguessable (128 random bits, hex); the key
    std::string owner;  // who may see it: "token:<digest>" or "session:<digest>"
    TaskStatus status = TaskStatus::working;
    std::string status_message;           // optional human-readable detail
    std::int64_t created_at_ms = 0;       // Unix epoch milliseconds
    std::int64_t last_updated_at_ms = 0;  // Unix epoch milliseconds
    std::int64_t ttl_ms = 0;              // kept this long after creation (> 0)
    std::int64_t poll_interval_ms = 0;    // suggested tasks/get interval (0: none suggested)
    std::string method;                   // the request run as the task ("tools/call")
    nlohmann::json params;                // its params (the tool's name and arguments)
    nlohmann::json result;                // completed: the request's result (a CallToolResult)
    nlohmann::json error;                 // failed: the JSON-RPC error {code, message, data?}
    nlohmann::json input_requests;        // input_required: what the task asks the client
    // The task model that created it: "2025-11-25" (SEP-1686: created with params.task, its
    // outcome read through tasks/result, a tool result with isError fails it) or empty (the
    // 2026-07-28 tasks extension). Set at creation; update() keeps it.
    std::string model;
    // The process that runs it (TaskStore::runner_id() of the store it was created in), so
    // that another replica can tell when that process has died. Set at creation.
    std::string runner;

    // The record as JSON (for storage): every field above, by its name (`model` and
    // `runner` may be absent in what from_json reads: records stored before they existed).
    nlohmann::json to_json() const;
    // Throws std::invalid_argument when `j` is not such a record.
    static TaskRecord from_json(const nlohmann::json& j);
};

struct TaskPage {
    std::vector<TaskRecord> tasks;  // newest first
    std::string next_cursor;        // empty when there are no more
};

// create() refuses a record when its owner already has the most live records a store keeps
// per owner (StoreOptions::max_tasks_per_owner), or the store holds its most records in all
// (memory: StoreOptions::max_tasks). Nothing is evicted to make room: an evicted record would
// be a result its client may still be polling for. Room comes back as records expire.
struct TaskLimitReached : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What came of a request to change a record.
enum class TaskUpdate {
    applied,    // the record now holds the change
    not_found,  // no such record for this owner (or it expired)
    terminal,   // the record was already completed, failed or cancelled: unchanged
};

class TaskStore {
public:
    virtual ~TaskStore() = default;
    virtual std::string_view backend() const = 0;

    // Stores a new record (its id must be new); it expires ttl_ms after created_at_ms (Redis:
    // on its clock; in process: ttl_ms after it was stored, which is the same moment).
    // Throws std::invalid_argument for a record without id or owner, with ttl_ms <= 0, or
    // whose id is taken (or, in Redis, that its own params name next to a status, which only
    // a client that guessed the id could do); TaskLimitReached at the caps above.
    virtual Task<void> create(TaskRecord record) = 0;
    // The record, if it exists, has not expired and belongs to `owner`.
    virtual Task<std::optional<TaskRecord>> get(std::string id, std::string owner) = 0;
    // `owner`'s records, newest first, `limit` at most per page from `cursor` (empty: the
    // first page; std::invalid_argument for a cursor no list() handed out). A limit of 0
    // counts as 1. Expired records are not listed.
    virtual Task<TaskPage> list(std::string owner, std::string cursor, std::size_t limit) = 0;
    // Replaces the record's status and its status_message, result, error, input_requests and
    // last_updated_at_ms with those of `change` (same id and owner), unless the record is
    // terminal. The TTL is not extended.
    virtual Task<TaskUpdate> update(TaskRecord change) = 0;
    // For the operator: the records still running or waiting for input (not terminal, not
    // expired), of every owner, newest first, `limit` at most. Replicas sharing the store
    // see each other's.
    virtual Task<std::vector<TaskRecord>> unfinished(std::size_t limit) = 0;

    // Replicas sharing the store: this process's name as a task's runner, and whether the
    // process named `runner` is still alive. In process every record is this process's;
    // in Redis each process renews a heartbeat key, and one that has not for a few seconds
    // is gone (kill -9, a lost machine). When the store cannot tell, it answers true: a
    // task is never given up on a guess.
    virtual const std::string& runner_id() const = 0;
    virtual Task<bool> runner_alive(std::string runner) = 0;
};

}  // namespace toolport
