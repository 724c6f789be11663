#include "stores/audit_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include "observability/metrics.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"
#include "util/state_dir.hpp"

namespace toolport::stores {

namespace fs = std::filesystem;
using std::chrono::system_clock;

namespace {

constexpr const char* kWritten = "toolport_audit_records_total";
constexpr const char* kDropped = "toolport_audit_dropped_total";
constexpr const char* kWriteErrors = "toolport_audit_write_errors_total";
constexpr const char* kRedisErrors = "toolport_audit_redis_errors_total";

// The parts of a rotated file's name: <stem>-<time><ext>.
struct NameParts {
    std::string dir, stem, ext;
};
NameParts name_parts(const std::string& path) {
    fs::path p(path);
    return {p.parent_path().string(), p.stem().string(), p.extension().string()};
}

// "20261128T064017.123Z", sortable as text.
std::string compact_time(system_clock::time_point t) {
    std::string iso = iso_time(t);  // 2026-11-28T06:40:17.123Z
    std::string out;
    for (char c : iso)
        if (c != '-' && c != ':') out.push_back(c);
    return out;
}

bool is_rotated_name(const std::string& name, const NameParts& parts) {
    const std::string prefix = parts.stem + "-";
    if (name.size() <= prefix.size() + parts.ext.size()) return false;
    if (name.compare(0, prefix.size(), prefix) != 0) return false;
    if (name.compare(name.size() - parts.ext.size(), parts.ext.size(), parts.ext) != 0) return false;
    // The middle is the time (digits, T, '.', Z) and perhaps -N.
    const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - parts.ext.size());
    if (middle.size() < 16 || !std::isdigit(static_cast<unsigned char>(middle[0]))) return false;
    return middle.find_first_not_of("0123456789TZ.-") == std::string::npos;
}

// hiredis on the writer thread: a blocking connection of its own (the event loop's Redis
// client is not to be used from another thread, and this thread may wait).
class StreamWriter {
public:
    StreamWriter(const AuditOptions& options)
        : endpoint_(parse_redis_url(options.redis_url)),
          stream_(options.stream),
          max_len_(std::to_string(options.stream_max_len)),
          timeout_(options.redis_timeout) {}
    ~StreamWriter() { drop(); }

    // XADDs the lines (pipelined); returns how many failed.
    std::size_t add(const std::vector<std::string>& lines) {
        if (lines.empty()) return 0;
        if (!connect()) return lines.size();
        for (const auto& line : lines) {
            const char* argv[] = {"XADD", stream_.c_str(), "MAXLEN",    "~", max_len_.c_str(),
                                  "*",    "record",        line.c_str()};
            const std::size_t lens[] = {4, stream_.size(), 6, 1, max_len_.size(), 1, 6, line.size()};
            redisAppendCommandArgv(ctx_, 8, argv, lens);
        }
        std::size_t failed = 0;
        for (std::size_t i = 0; i < lines.size(); ++i) {
            void* reply = nullptr;
            if (redisGetReply(ctx_, &reply) != REDIS_OK) {
                failed += lines.size() - i;
                drop();
                break;
            }
            auto* r = static_cast<redisReply*>(reply);
            if (r->type == REDIS_REPLY_ERROR) {
                ++failed;
                warn(fmt::format("XADD refused: {}", std::string(r->str, r->len)));
            }
            freeReplyObject(r);
        }
        return failed;
    }

private:
    bool connect() {
        if (ctx_) return true;
        const auto now = std::chrono::steady_clock::now();
        if (now < retry_at_) return false;
        retry_at_ = now + std::chrono::seconds(1);
        timeval tv{static_cast<time_t>(timeout_.count() / 1000),
                   static_cast<suseconds_t>(timeout_.count() % 1000 * 1000)};
        ctx_ = redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port, tv);
        if (!ctx_ || ctx_->err) {
            warn(fmt::format("cannot connect to Redis at {}: {}", endpoint_.describe(),
                             ctx_ ? ctx_->errstr : "no memory"));
            drop();
            return false;
        }
        redisSetTimeout(ctx_, tv);
        if (!endpoint_.password.empty()) {
            std::vector<std::string> args{"AUTH"};
            if (!endpoint_.username.empty()) args.push_back(endpoint_.username);
            args.push_back(endpoint_.password);
            if (!simple(args)) return false;
        }
        if (endpoint_.db != 0 && !simple({"SELECT", std::to_string(endpoint_.db)})) return false;
        warned_ = false;
        return true;
    }
    bool simple(const std::vector<std::string>& args) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (const auto& a : args) {
            argv.push_back(a.c_str());
            lens.push_back(a.size());
        }
        auto* r = static_cast<redisReply*>(
            redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()));
        const bool ok = r && r->type != REDIS_REPLY_ERROR;
        if (r) freeReplyObject(r);
        if (!ok) {
            warn(fmt::format("Redis at {} refused {}", endpoint_.describe(), args[0]));
            drop();
        }
        return ok;
    }
    void drop() {
        if (ctx_) redisFree(ctx_);
        ctx_ = nullptr;
    }
    // Once per outage: the failures are counted in /metrics.
    void warn(const std::string& message) {
        if (warned_) return;
        warned_ = true;
        spdlog::warn("audit: {} (records go on to the file; failures are counted in {})", message, kRedisErrors);
    }

    RedisEndpoint endpoint_;
    std::string stream_, max_len_;
    std::chrono::milliseconds timeout_;
    redisContext* ctx_ = nullptr;
    std::chrono::steady_clock::time_point retry_at_{};
    bool warned_ = false;
};

}  // namespace

std::vector<std::string> audit_files(const std::string& path) {
    const NameParts parts = name_parts(path);
    std::vector<std::string> rotated;
    std::error_code ec;
    const fs::path dir = parts.dir.empty() ? fs::path(".") : fs::path(parts.dir);
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (is_rotated_name(name, parts)) rotated.push_back((dir / name).string());
    }
    std::sort(rotated.begin(), rotated.end());
    if (fs::exists(path, ec)) rotated.push_back(path);
    return rotated;
}

std::string default_audit_path() { return util::state_path("audit.jsonl"); }

AuditOptions resolve_audit_options(AuditOptions o, const StoreOptions& store, bool redis, const std::string& stream) {
    if (o.path.empty()) {
        o.path = default_audit_path();
        o.path_is_default = true;
    }
    if (redis && store.url.rfind("redis://", 0) == 0) o.redis_url = store.url;
    o.stream = stream.empty() ? store.key_prefix + "audit" : stream;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    o.replica = fmt::format("{}:{}", host, ::getpid());
    return o;
}

struct AuditLog::Impl {
    explicit Impl(const AuditOptions& o) : options(o) {
        auto& m = observability::metrics();
        m.describe(kWritten, "Audit records written to the audit file.");
        m.describe(kDropped, "Audit records dropped because the writer's queue was full (calls never wait for it).");
        m.describe(kWriteErrors, "Audit records that could not be written to the audit file.");
        m.describe(kRedisErrors, "Audit records that could not be added to the Redis stream.");
        written_metric = m.counter(kWritten, {});
        dropped_metric = m.counter(kDropped, {});
        write_errors_metric = m.counter(kWriteErrors, {});
        redis_errors_metric = m.counter(kRedisErrors, {});
        if (!o.redis_url.empty()) stream = std::make_unique<StreamWriter>(o);
    }

    const AuditOptions options;
    std::mutex mutex;
    std::condition_variable wake, written_cv;
    // The records waiting for the writer, as the lines they are written as (encoded by the
    // callers: the queue takes bytes, and a record's strings are freed on the thread that
    // made them). Swapped with the writer's batch each round, so both keep their room.
    std::string queue;
    std::size_t queued = 0;  // records (lines) in `queue`
    std::uint64_t submitted = 0, done = 0;
    bool stopping = false, flush_asked = false;
    Stats stats;   // under the mutex: dropped counted by submit, the rest copied from wstats
    Stats wstats;  // the writer thread's
    observability::Counter written_metric, dropped_metric, write_errors_metric, redis_errors_metric;
    std::unique_ptr<StreamWriter> stream;

    // The writer thread's own.
    int fd = -1;
    std::uint64_t size = 0;
    system_clock::time_point opened{};
    bool dirty = false;  // written since the last fsync
    std::chrono::steady_clock::time_point last_sync = std::chrono::steady_clock::now();
    bool warned_write = false;
    std::thread thread;

    // Opens (creating) the active file; the error as text, or "" when open.
    std::string open_file() {
        std::error_code ec;
        const fs::path p(options.path);
        if (p.has_parent_path()) fs::create_directories(p.parent_path(), ec);
        fd = ::open(options.path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) return std::strerror(errno);
        struct stat st {};
        if (::fstat(fd, &st) == 0) {
            size = static_cast<std::uint64_t>(st.st_size);
            if (!S_ISREG(st.st_mode)) {
                ::close(fd);
                fd = -1;
                return "not a regular file";
            }
        }
        opened = system_clock::now();
        // A file that was there before keeps its age: that of its first record.
        if (size > 0) {
            std::ifstream in(options.path);
            std::string first;
            if (std::getline(in, first)) {
                if (auto record = parse_record(first)) {
                    if (auto t = record_time(*record)) opened = std::min(opened, *t);
                }
            }
        }
        return {};
    }

    void rotate() {
        if (fd >= 0) {
            if (options.fsync != FsyncPolicy::never) ::fsync(fd);
            ::close(fd);
            fd = -1;
        }
        const NameParts parts = name_parts(options.path);
        const fs::path dir = parts.dir.empty() ? fs::path(".") : fs::path(parts.dir);
        const std::string base = parts.stem + "-" + compact_time(system_clock::now());
        // A counter of fixed width keeps the names of files rotated within one millisecond
        // in the order they were written.
        std::error_code ec;
        fs::path target = dir / fmt::format("{}-000{}", base, parts.ext);
        for (int n = 1; fs::exists(target, ec) && n < 1000; ++n)
            target = dir / fmt::format("{}-{:03}{}", base, n, parts.ext);
        fs::rename(options.path, target, ec);
        if (ec) spdlog::warn("audit: cannot rotate the audit file: {}", ec.message());
        ++wstats.rotations;
        if (auto error = open_file(); !error.empty()) spdlog::warn("audit: cannot open the audit file: {}", error);
        size = fd >= 0 ? size : 0;
        opened = system_clock::now();
        apply_retention();
    }

    void apply_retention() {
        auto files = audit_files(options.path);
        if (!files.empty() && files.back() == options.path) files.pop_back();
        std::error_code ec;
        std::size_t excess = options.keep_files > 0 && files.size() > options.keep_files
                                 ? files.size() - options.keep_files
                                 : 0;
        const auto now = fs::file_time_type::clock::now();
        for (std::size_t i = 0; i < files.size(); ++i) {
            bool remove = i < excess;
            if (!remove && options.keep_age.count() > 0) {
                auto mtime = fs::last_write_time(files[i], ec);
                remove = !ec && now - mtime > options.keep_age;
            }
            if (remove) fs::remove(files[i], ec);
        }
    }

    // Whether the next line (of `next` bytes) goes to a new file, with `pending` bytes
    // still to be written to this one. An empty file takes any line.
    bool due_for_rotation(std::size_t pending, std::size_t next) const {
        const std::uint64_t total = size + pending;
        if (total == 0) return false;
        if (options.rotate_bytes > 0 && total + next > options.rotate_bytes) return true;
        return options.rotate_age.count() > 0 && system_clock::now() - opened >= options.rotate_age;
    }

    void write_all(std::string_view data) {
        if (fd < 0) {
            if (auto error = open_file(); !error.empty()) throw AuditError(error);
        }
        std::size_t off = 0;
        while (off < data.size()) {
            ssize_t n = ::write(fd, data.data() + off, data.size() - off);
            if (n < 0) {
                if (errno == EINTR) continue;
                const std::string error = std::strerror(errno);
                // Reopened for the next batch (a file removed or a disk that came back).
                ::close(fd);
                fd = -1;
                throw AuditError(error);
            }
            off += static_cast<std::size_t>(n);
        }
        size += data.size();
        dirty = true;
    }

    // Writes a batch of lines (each ending with a newline), a megabyte at a time and where
    // the file rotates; then the Redis stream's XADDs.
    void write_batch(std::string_view batch) {
        static constexpr std::size_t kChunkBytes = 1 << 20;
        std::vector<std::string> lines;  // for the Redis stream
        std::size_t from = 0;            // the start of what is not written yet
        std::size_t in_chunk = 0;        // records in batch[from, the current line)
        auto emit = [&](std::size_t to) {
            if (to == from) return;
            try {
                write_all(batch.substr(from, to - from));
                wstats.written += in_chunk;
                written_metric.increment(static_cast<double>(in_chunk));
            } catch (const AuditError& e) {
                wstats.write_errors += in_chunk;
                write_errors_metric.increment(static_cast<double>(in_chunk));
                if (!warned_write) {
                    warned_write = true;
                    spdlog::error("audit: cannot write the audit file: {} (failures are counted in {})", e.what(),
                                  kWriteErrors);
                }
            }
            from = to;
            in_chunk = 0;
        };
        for (std::size_t start = 0; start < batch.size();) {
            const auto* nl = static_cast<const char*>(std::memchr(batch.data() + start, '\n', batch.size() - start));
            const std::size_t end = nl ? static_cast<std::size_t>(nl - batch.data()) + 1 : batch.size();
            if (stream) lines.emplace_back(batch.substr(start, end - 1 - start));
            if (due_for_rotation(start - from, end - start)) {
                emit(start);  // what belongs to this file
                rotate();
            }
            ++in_chunk;
            start = end;
            if (start - from >= kChunkBytes) emit(start);
        }
        emit(batch.size());
        if (fd >= 0 && dirty) {
            const auto now = std::chrono::steady_clock::now();
            if (options.fsync == FsyncPolicy::always ||
                (options.fsync == FsyncPolicy::interval && now - last_sync >= options.flush_interval)) {
                ::fdatasync(fd);
                dirty = false;
                last_sync = now;
            }
        }
        if (stream) {
            const std::size_t failed = stream->add(lines);
            if (failed) {
                wstats.redis_errors += failed;
                redis_errors_metric.increment(static_cast<double>(failed));
            }
        }
    }

    void run() {
        std::string batch;
        for (;;) {
            std::uint64_t upto;
            bool stop, forced;
            {
                std::unique_lock lock(mutex);
                wake.wait_for(lock, options.flush_interval, [&] {
                    return stopping || flush_asked ||
                           (queued > 0 && (options.fsync == FsyncPolicy::always || queued >= options.queue_capacity / 2));
                });
                forced = flush_asked;
                flush_asked = false;
                batch.swap(queue);
                queued = 0;
                upto = submitted;
                stop = stopping;
            }
            const std::size_t bytes = batch.size();
            if (bytes > 0) write_batch(batch);
            batch.clear();
            // Room far beyond what rounds take (after a burst) is let go.
            if (batch.capacity() > (4u << 20) && bytes < batch.capacity() / 4) std::string().swap(batch);
            // A flush asked with nothing new still gets its fsync.
            if (fd >= 0 && dirty && (stop || options.fsync != FsyncPolicy::never)) {
                const auto now = std::chrono::steady_clock::now();
                if (stop || forced || now - last_sync >= options.flush_interval) {
                    ::fdatasync(fd);
                    dirty = false;
                    last_sync = now;
                }
            }
            {
                std::lock_guard lock(mutex);
                done = upto;
                const auto dropped = stats.dropped;
                stats = wstats;
                stats.dropped = dropped;
                if (stop && queued == 0) {
                    written_cv.notify_all();
                    break;
                }
            }
            written_cv.notify_all();
        }
        if (fd >= 0) {
            if (options.fsync != FsyncPolicy::never) ::fsync(fd);
            ::close(fd);
            fd = -1;
        }
    }
};

AuditLog::AuditLog(AuditOptions options) : options_(std::move(options)) {
    if (options_.path.empty()) throw AuditError("audit: no file to write (audit.path)");
    if (options_.queue_capacity == 0) options_.queue_capacity = 1;
    if (options_.flush_interval.count() <= 0) options_.flush_interval = std::chrono::milliseconds(1000);
    if (!options_.redis_url.empty()) {
        try {
            (void)parse_redis_url(options_.redis_url);
        } catch (const StoreConfigError& e) {
            throw AuditError(fmt::format("audit: {}", e.what()));
        }
    }
    impl_ = std::make_unique<Impl>(options_);
    if (auto error = impl_->open_file(); !error.empty()) {
        throw AuditError(fmt::format("audit: cannot open the audit file {}: {}", options_.path, error));
    }
    impl_->apply_retention();
    impl_->thread = std::thread([impl = impl_.get()] { impl->run(); });
}

AuditLog::~AuditLog() {
    {
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->wake.notify_all();
    if (impl_->thread.joinable()) impl_->thread.join();
}

bool AuditLog::submit(AuditRecord&& record) {
    // Encoded outside the lock, into this thread's own buffer (kept between calls).
    thread_local std::string line;
    line.clear();
    append_record(record, line);
    line += '\n';
    bool notify = false;
    {
        std::lock_guard lock(impl_->mutex);
        if (impl_->queued >= options_.queue_capacity) {
            ++impl_->stats.dropped;
            impl_->dropped_metric.increment();
            return false;
        }
        impl_->queue += line;
        ++impl_->queued;
        ++impl_->submitted;
        notify = options_.fsync == FsyncPolicy::always || impl_->queued == options_.queue_capacity / 2;
    }
    if (notify) impl_->wake.notify_one();
    return true;
}

void AuditLog::flush() {
    std::unique_lock lock(impl_->mutex);
    const std::uint64_t target = impl_->submitted;
    impl_->flush_asked = true;
    impl_->wake.notify_one();
    impl_->written_cv.wait(lock, [&] { return impl_->done >= target || !impl_->thread.joinable(); });
}

AuditLog::Stats AuditLog::stats() const {
    std::lock_guard lock(impl_->mutex);
    return impl_->stats;
}

}  // namespace toolport::stores
