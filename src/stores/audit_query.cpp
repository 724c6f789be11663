#include "stores/audit_query.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include <fmt/format.h>
#include <hiredis/hiredis.h>

#include "stores/audit_log.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"
#include "util/percent.hpp"

namespace toolport::stores {

namespace {

// Hands `take` each line of the file at `path` (without its newline), the last line first,
// until `take` returns false; reads the file from its end in blocks. False when the file
// cannot be opened (errno says why).
template <typename Take>
bool for_each_line_backward(const std::string& path, Take&& take) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return false;
    constexpr off_t kBlock = 64 * 1024;
    off_t pos = st.st_size;
    std::string data;  // a block, then the start of the line that went on past it
    std::string tail;  // the start of a line whose beginning is in a block not read yet
    while (pos > 0) {
        const off_t n = std::min(pos, kBlock);
        pos -= n;
        data.resize(static_cast<std::size_t>(n));
        for (std::size_t got = 0; got < data.size();) {
            const ssize_t r = ::pread(fd, data.data() + got, data.size() - got, pos + static_cast<off_t>(got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return true;  // the file shrank or failed meanwhile: what was read stands
            got += static_cast<std::size_t>(r);
        }
        data += tail;
        std::size_t end = data.size();
        while (const void* nl = end > 0 ? ::memrchr(data.data(), '\n', end) : nullptr) {
            const auto at = static_cast<std::size_t>(static_cast<const char*>(nl) - data.data());
            if (!take(std::string_view(data).substr(at + 1, end - at - 1))) return true;
            end = at;
        }
        tail.assign(data, 0, end);
    }
    if (!tail.empty()) take(std::string_view(tail));
    return true;
}

// The time the writer gave a record, read off the line without parsing it: append_record
// writes it last (`,"ts":"2026-11-28T06:40:17.123Z"}`). Empty for a line that does not end so.
std::string_view written_time(std::string_view line) {
    constexpr std::string_view key = R"("ts":")";
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.size() < key.size() + 3 || line.back() != '}' || line[line.size() - 2] != '"') return {};
    const std::size_t close = line.size() - 2;
    const std::size_t at = line.rfind(key, close);
    if (at == std::string_view::npos) return {};
    return line.substr(at + key.size(), close - at - key.size());
}

// Keeps the newest `limit` records (all with 0).
class Newest {
public:
    explicit Newest(std::size_t limit) : limit_(limit) {}
    void add(Json record) {
        records_.push_back(std::move(record));
        if (limit_ > 0 && records_.size() > limit_) records_.pop_front();
    }
    std::vector<Json> take() {
        return {std::make_move_iterator(records_.begin()), std::make_move_iterator(records_.end())};
    }

private:
    std::size_t limit_;
    std::deque<Json> records_;
};

// A blocking hiredis connection for the CLI and the HTTP query (off the event loop).
struct RedisConnection {
    redisContext* ctx = nullptr;
    RedisEndpoint endpoint;
    RedisConnection(const std::string& url, std::chrono::milliseconds timeout) {
        try {
            endpoint = parse_redis_url(url);
        } catch (const StoreConfigError& e) {
            throw AuditError(e.what());
        }
        timeval tv{static_cast<time_t>(timeout.count() / 1000), static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
        ctx = redisConnectWithTimeout(endpoint.host.c_str(), endpoint.port, tv);
        if (!ctx || ctx->err) {
            std::string why = ctx ? ctx->errstr : "out of memory";
            if (ctx) redisFree(ctx);
            ctx = nullptr;
            throw AuditError(fmt::format("cannot connect to Redis at {}: {}", endpoint.describe(), why));
        }
        redisSetTimeout(ctx, tv);
        if (!endpoint.password.empty()) {
            std::vector<std::string> args{"AUTH"};
            if (!endpoint.username.empty()) args.push_back(endpoint.username);
            args.push_back(endpoint.password);
            command(args);
        }
        if (endpoint.db != 0) command({"SELECT", std::to_string(endpoint.db)});
    }
    ~RedisConnection() {
        if (ctx) redisFree(ctx);
    }
    struct Free {
        void operator()(redisReply* r) const { freeReplyObject(r); }
    };
    using Reply = std::unique_ptr<redisReply, Free>;
    Reply command(const std::vector<std::string>& args) {
        std::vector<const char*> argv;
        std::vector<std::size_t> lens;
        for (const auto& a : args) {
            argv.push_back(a.c_str());
            lens.push_back(a.size());
        }
        Reply r(static_cast<redisReply*>(redisCommandArgv(ctx, static_cast<int>(argv.size()), argv.data(), lens.data())));
        if (!r) throw AuditError(fmt::format("Redis at {} did not answer {}", endpoint.describe(), args[0]));
        if (r->type == REDIS_REPLY_ERROR) {
            throw AuditError(
                fmt::format("Redis at {} refused {}: {}", endpoint.describe(), args[0], std::string(r->str, r->len)));
        }
        return r;
    }
};

// One XRANGE entry ([id, [field, value, ...]]): its id, and its record when it holds one.
std::optional<Json> entry_record(const redisReply* entry, std::string& id) {
    if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2) return std::nullopt;
    const redisReply* rid = entry->element[0];
    const redisReply* fields = entry->element[1];
    if (rid->type == REDIS_REPLY_STRING) id.assign(rid->str, rid->len);
    if (fields->type != REDIS_REPLY_ARRAY) return std::nullopt;
    for (std::size_t i = 0; i + 1 < fields->elements; i += 2) {
        const redisReply* name = fields->element[i];
        const redisReply* value = fields->element[i + 1];
        if (name->type == REDIS_REPLY_STRING && std::string_view(name->str, name->len) == "record" &&
            value->type == REDIS_REPLY_STRING) {
            return parse_record(std::string_view(value->str, value->len));
        }
    }
    return std::nullopt;
}

std::string ms_of(std::chrono::system_clock::time_point t) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count());
}

// Reads entries after `start` ("-" or "(id") up to `end`, in pages; hands each record to `take`.
template <typename Take>
std::string read_stream(RedisConnection& redis, const std::string& stream, std::string start, const std::string& end,
                        std::size_t& skipped, Take&& take) {
    std::string last;
    for (;;) {
        auto reply = redis.command({"XRANGE", stream, start, end, "COUNT", "1000"});
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) break;
        for (std::size_t i = 0; i < reply->elements; ++i) {
            auto record = entry_record(reply->element[i], last);
            if (record) take(std::move(*record));
            else ++skipped;
        }
        if (reply->elements < 1000 || last.empty()) break;
        start = "(" + last;
    }
    return last;
}

}  // namespace

AuditQueryResult query_audit_files(const std::string& path, const AuditFilter& filter) {
    AuditQueryResult result;
    // Newest first: the files from the active one back, each from its end, until `limit`
    // records matched. The first page of a console or CLI query reads the lines it shows,
    // not the whole log; records are in the order they were written, so the newest N read
    // this way are the N a forward pass would have kept.
    std::vector<Json> newest_first;
    const std::string until_text = filter.until ? iso_time(*filter.until) : std::string();
    const auto files = audit_files(path);
    std::size_t unreadable = 0;
    int open_error = 0;
    bool enough = false;
    for (auto file = files.rbegin(); file != files.rend() && !enough; ++file) {
        const bool read = for_each_line_backward(*file, [&](std::string_view line) {
            if (line.empty()) return true;
            // Written after `until` (its time, the line's last member, later than it): passed
            // over without being parsed, as the pages of an older stretch skip the newer lines.
            if (!until_text.empty()) {
                const std::string_view ts = written_time(line);
                if (ts.size() == until_text.size() && ts > until_text) return true;
            }
            auto record = parse_record(line);
            if (!record) {
                ++result.skipped_lines;
                return true;
            }
            ++result.scanned;
            // Every record is looked at, none skipped by its file: a clock stepped back puts
            // older times after newer ones.
            if (filter.matches(*record)) newest_first.push_back(std::move(*record));
            enough = filter.limit > 0 && newest_first.size() >= filter.limit;
            return !enough;
        });
        if (!read) {
            ++unreadable;
            open_error = errno;
        }
    }
    if (!files.empty() && unreadable == files.size()) {
        throw AuditError(fmt::format("cannot read the audit file {}: {}", path, std::strerror(open_error)));
    }
    result.records.assign(std::make_move_iterator(newest_first.rbegin()), std::make_move_iterator(newest_first.rend()));
    return result;
}

AuditQueryResult query_audit_stream(const std::string& redis_url, const std::string& stream, const AuditFilter& filter,
                                    std::chrono::milliseconds timeout) {
    RedisConnection redis(redis_url, timeout);
    AuditQueryResult result;
    Newest newest(filter.limit);
    // Entry ids start with the time they were added in ms: the time bounds narrow the range.
    const std::string start = filter.since ? ms_of(*filter.since - std::chrono::seconds(5)) : "-";
    const std::string end = filter.until ? ms_of(*filter.until + std::chrono::seconds(5)) : "+";
    read_stream(redis, stream, start, end, result.skipped_lines, [&](Json record) {
        ++result.scanned;
        if (filter.matches(record)) newest.add(std::move(record));
    });
    result.records = newest.take();
    return result;
}

std::pair<int, std::string> audit_http_query(const AuditOptions& options, std::string_view query) {
    AuditFilter filter;
    const auto now = std::chrono::system_clock::now();
    auto error_body = [](const std::string& message) {
        return Json{{"error", message}}.dump(-1, ' ', false, Json::error_handler_t::replace);
    };
    while (!query.empty()) {
        const auto amp = query.find('&');
        const std::string_view pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (pair.empty()) continue;
        const auto eq = pair.find('=');
        auto name = util::percent_decode(pair.substr(0, eq));
        auto value = util::percent_decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        if (!name || !value)
            return {400, error_body("Bad Request: a query parameter is not percent-encoded correctly")};
        for (auto& c : *value)
            if (c == '+') c = ' ';
        if (value->empty()) continue;  // ?tool=&outcome=ok: an empty filter is no filter
        if (auto problem = set_filter_field(filter, *name, *value, now); !problem.empty()) {
            return {400, error_body("Bad Request: " + problem)};
        }
    }
    try {
        const bool redis = !options.redis_url.empty();
        auto result = redis ? query_audit_stream(options.redis_url, options.stream, filter)
                            : query_audit_files(options.path, filter);
        Json body = {{"records", std::move(result.records)},
                     {"skipped_lines", result.skipped_lines},
                     {"source", redis ? "redis" : "file"}};
        return {200, body.dump(-1, ' ', false, Json::error_handler_t::replace)};
    } catch (const AuditError& e) {
        return {503, error_body(std::string("Service Unavailable: the audit log cannot be read: ") + e.what())};
    }
}

AuditFollower::AuditFollower(std::string path, AuditFilter filter)
    : path_(std::move(path)), filter_(std::move(filter)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0) {
        struct stat st {};
        if (::fstat(fd_, &st) == 0) inode_ = st.st_ino;
        ::lseek(fd_, 0, SEEK_END);
    }
}

AuditFollower::~AuditFollower() {
    if (fd_ >= 0) ::close(fd_);
}

std::vector<Json> AuditFollower::drain() {
    std::vector<Json> out;
    if (fd_ < 0) return out;
    char buffer[65536];
    for (;;) {
        ssize_t n = ::read(fd_, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        partial_.append(buffer, static_cast<std::size_t>(n));
    }
    std::size_t start = 0;
    for (std::size_t nl; (nl = partial_.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(partial_.data() + start, nl - start);
        if (line.empty()) continue;
        auto record = parse_record(line);
        if (!record) ++skipped_;
        else if (filter_.matches(*record)) out.push_back(std::move(*record));
    }
    partial_.erase(0, start);
    // A line longer than any record (a file that is not an audit log) is not kept whole.
    if (partial_.size() > (64u << 20)) {
        partial_.clear();
        ++skipped_;
    }
    return out;
}

std::vector<Json> AuditFollower::poll() {
    std::vector<Json> out = drain();
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0) return out;  // between a rotation's rename and the new file
    if (fd_ >= 0 && st.st_ino == inode_) return out;
    // Rotated: the old file's rest was read above. A file rotated after it before this poll
    // (two rotations between polls) is read whole; then the new one from its start.
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
        bool after_ours = false;
        for (const auto& file : audit_files(path_)) {
            if (file == path_) break;
            struct stat fst {};
            if (::stat(file.c_str(), &fst) != 0) continue;
            if (!after_ours) {
                after_ours = fst.st_ino == inode_;
                continue;
            }
            partial_.clear();
            fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd_ < 0) continue;
            auto whole = drain();
            out.insert(out.end(), std::make_move_iterator(whole.begin()), std::make_move_iterator(whole.end()));
            ::close(fd_);
            fd_ = -1;
        }
    }
    partial_.clear();
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return out;
    inode_ = st.st_ino;
    auto more = drain();
    out.insert(out.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
    return out;
}

struct StreamFollower::Impl {
    Impl(const std::string& url, std::string s, AuditFilter f)
        : redis(url, std::chrono::milliseconds(5000)), stream(std::move(s)), filter(std::move(f)) {}
    RedisConnection redis;
    std::string stream;
    AuditFilter filter;
    std::string last = "$";
};

StreamFollower::StreamFollower(const std::string& redis_url, std::string stream, AuditFilter filter)
    : impl_(std::make_unique<Impl>(redis_url, std::move(stream), std::move(filter))) {}
StreamFollower::~StreamFollower() = default;

std::vector<Json> StreamFollower::poll(std::chrono::milliseconds wait) {
    std::vector<Json> out;
    auto reply = impl_->redis.command(
        {"XREAD", "COUNT", "1000", "BLOCK", std::to_string(wait.count()), "STREAMS", impl_->stream, impl_->last});
    // [[stream, [entries...]]], or nil after the wait.
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements == 0) return out;
    const redisReply* s = reply->element[0];
    if (s->type != REDIS_REPLY_ARRAY || s->elements != 2 || s->element[1]->type != REDIS_REPLY_ARRAY) return out;
    const redisReply* entries = s->element[1];
    for (std::size_t i = 0; i < entries->elements; ++i) {
        auto record = entry_record(entries->element[i], impl_->last);
        if (record && impl_->filter.matches(*record)) out.push_back(std::move(*record));
    }
    return out;
}

}  // namespace toolport::stores
