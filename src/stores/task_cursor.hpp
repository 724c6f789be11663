// TaskCursor: the position a task listing (TaskStore::list, server/task_store.hpp) resumes
// from, in the form both task stores hand out and read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "server/task_store.hpp"

namespace toolport::stores {

// The position after a record in `owner`'s listing (newest first: created_at_ms, then id,
// both descending), as list() hands it out in next_cursor: "<created_at_ms>:<id>". Both
// stores use it, so a cursor stays valid when a replica falls back or recovers.
struct TaskCursor {
    std::int64_t created_at_ms = 0;
    std::string id;

    static TaskCursor after(const TaskRecord& record) { return {record.created_at_ms, record.id}; }
    std::string encode() const;
    // Throws std::invalid_argument for text not of that form.
    static TaskCursor parse(std::string_view text);
    // Whether a record at (created_at_ms, id) comes after this position in the listing.
    bool precedes(std::int64_t created, std::string_view record_id) const {
        return created < created_at_ms || (created == created_at_ms && record_id < id);
    }
};

}  // namespace toolport::stores
