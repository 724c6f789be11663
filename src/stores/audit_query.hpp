// Reading the audit log back: the records that match a filter, from the audit file and its
// rotated files or from the Redis stream every replica writes to; and following the file
// as it grows (across rotations). A line that is not a record (garbled, cut short by a
// crash) is skipped and counted, never fatal.
//
//   auto result = query_audit_files("/var/lib/toolport/audit.jsonl", filter);
//   for (const auto& record : result.records) ...   // oldest first, the newest filter.limit
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "stores/audit_record.hpp"

namespace toolport::stores {

struct AuditOptions;

struct AuditQueryResult {
    std::vector<Json> records;      // oldest first
    std::size_t skipped_lines = 0;  // lines that were not records
    std::size_t scanned = 0;        // records looked at
};

// Throws AuditError when no file of the log can be read (none exists is an empty result).
AuditQueryResult query_audit_files(const std::string& path, const AuditFilter& filter);

// The stream's entries (XRANGE, bounded by the filter's times). Throws AuditError when
// Redis cannot be reached or refuses.
AuditQueryResult query_audit_stream(const std::string& redis_url, const std::string& stream, const AuditFilter& filter,
                                    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// GET /audit: the query string's filters (principal, tool, outcome, method, session,
// since, until, limit; percent-encoded) applied to the log `options` writes (its Redis
// stream when it has one, else its file), as {HTTP status, JSON body}: 200 with
// {"records": [...], "skipped_lines": n, "source": "file"|"redis"}, 400 naming a bad
// filter, 503 when the log cannot be read. Blocks: run it off the event loop.
std::pair<int, std::string> audit_http_query(const AuditOptions& options, std::string_view query);

// Tails the audit file from its end: poll() returns the records (matching the filter)
// written since the last poll, the rest of a file that was rotated away included.
class AuditFollower {
public:
    AuditFollower(std::string path, AuditFilter filter);
    ~AuditFollower();
    AuditFollower(const AuditFollower&) = delete;
    AuditFollower& operator=(const AuditFollower&) = delete;
    std::vector<Json> poll();
    std::size_t skipped_lines() const { return skipped_; }

private:
    std::vector<Json> drain();
    std::string path_;
    AuditFilter filter_;
    int fd_ = -1;
    std::uint64_t inode_ = 0;
    std::string partial_;  // a line whose end is not written yet
    std::size_t skipped_ = 0;
};

// Follows the Redis stream: poll() returns the entries added since the last one.
class StreamFollower {
public:
    StreamFollower(const std::string& redis_url, std::string stream, AuditFilter filter);
    ~StreamFollower();
    StreamFollower(const StreamFollower&) = delete;
    StreamFollower& operator=(const StreamFollower&) = delete;
    std::vector<Json> poll(std::chrono::milliseconds wait);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toolport::stores
