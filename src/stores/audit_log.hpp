// The audit log's writer: records handed over by the calls go into a bounded in-memory
// queue and a thread of its own writes them to an append-only JSONL file (rotated by size
// and age, old files removed by count and age) and, with Redis configured, XADDs them to a
// capped stream that every replica writes to. A call never waits for either: when the
// queue is full the record is dropped and counted (toolport_audit_dropped_total).
//
// Durability: the thread writes what is queued at least every flush_interval (at once
// with fsync: always), so a process killed with SIGKILL loses at most that much; fsync
// decides what survives the machine going down (always: every batch, interval: once per
// flush_interval, never: left to the kernel).
//
//   AuditLog log(options);           // throws AuditError when the file cannot be opened
//   log.submit(std::move(record));   // from any thread, never blocks
//   log.flush();                     // waits until everything queued is written (tests, shutdown)
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "stores/audit_record.hpp"

namespace toolport::stores {

struct StoreOptions;

struct AuditError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class FsyncPolicy { always, interval, never };

struct AuditOptions {
    // Off unless configured: measured side by side on bench/run_http_bench.sh's call, the
    // log cost more than the 10 % of throughput an always-on default may (issue 32).
    bool enabled = false;
    std::string path;                                            // the active file; rotated files sit next to it
    std::uint64_t rotate_bytes = 64ull << 20;                    // 0: no rotation by size
    std::chrono::seconds rotate_age{std::chrono::hours(24)};     // 0: no rotation by age
    std::size_t keep_files = 10;                                 // rotated files kept (0: no limit)
    std::chrono::seconds keep_age{std::chrono::hours(24 * 30)};  // rotated files older are removed (0: no limit)
    FsyncPolicy fsync = FsyncPolicy::interval;
    std::chrono::milliseconds flush_interval{1000};
    bool include_arguments = false;
    std::size_t queue_capacity = 65536;  // records waiting for the writer
    // Redis (the store's URL) and the stream, capped near stream_max_len entries (MAXLEN ~).
    std::string redis_url;
    std::string stream = "toolport:audit";
    std::size_t stream_max_len = 1000000;
    std::chrono::milliseconds redis_timeout{1000};
    // The path is the default one (not the operator's): failing to open it turns the log
    // off with a warning instead of stopping the start.
    bool path_is_default = false;
    // What every record's "replica" says (resolve_audit_options: host:pid).
    std::string replica;
};

class AuditLog {
public:
    explicit AuditLog(AuditOptions options);
    ~AuditLog();  // writes what is queued, then stops the thread
    AuditLog(const AuditLog&) = delete;
    AuditLog& operator=(const AuditLog&) = delete;

    // Queues the record, encoded here as its line (the writer thread only writes bytes);
    // false when the queue was full and it was dropped.
    bool submit(AuditRecord&& record);
    // Waits until every record submitted before the call is written (and fsynced, unless
    // the policy is never; XADDed when Redis is configured and reachable).
    void flush();

    const AuditOptions& options() const { return options_; }

    struct Stats {
        std::uint64_t written = 0;
        std::uint64_t dropped = 0;
        std::uint64_t write_errors = 0;
        std::uint64_t redis_errors = 0;
        std::uint64_t rotations = 0;
    };
    Stats stats() const;

private:
    struct Impl;
    AuditOptions options_;
    std::unique_ptr<Impl> impl_;
};

// The rotated files of `path`, oldest first, then `path` itself if it exists: the order
// their records were written in. A rotated file is named <stem>-<UTC time>-<counter><ext>
// (audit.jsonl -> audit-20261128T064017.123Z-000.jsonl).
std::vector<std::string> audit_files(const std::string& path);

// The options `toolport serve` and `toolport audit` use: the default path when none is
// set, the store's Redis (when `redis` and the store is redis://) and the stream's key
// (<store.key_prefix>audit when `stream` is empty).
AuditOptions resolve_audit_options(AuditOptions configured, const StoreOptions& store, bool redis,
                                   const std::string& stream);

// Where the audit file goes when audit.path is not set: $XDG_STATE_HOME/toolport/audit.jsonl
// (else ~/.local/state/toolport/audit.jsonl); "" when neither variable is set.
std::string default_audit_path();

}  // namespace toolport::stores
