#include "providers/context/memory/notes_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "providers/context/durable_files.hpp"
#include "observability/iso_time.hpp"
#include "providers/context/envelope.hpp"
#include "util/base64.hpp"

namespace toolport::context {

namespace {

constexpr const char* kMemoryDir = ".agent-memory";
constexpr const char* kNotesFile = "session-notes.jsonl";
constexpr const char* kShownFile = ".agent-memory/session-notes.jsonl";
constexpr std::size_t kBlockBytes = 64u << 10;
constexpr std::size_t kMaxSkippedReported = 100;
// Notes are appended in time order (each is stamped under the file's lock): a backward
// scan stops at the first note older than `since` by more than this, which leaves room
// for the clock being set back a little.
constexpr std::chrono::minutes kSinceSlack{1};

[[noreturn]] void notes_failure(const std::string& doing) {
    throw ContextError(ErrorCode::filesystem_error,
                       fmt::format("cannot {} {}: {}", doing, kShownFile, std::strerror(errno)));
}

bool write_all(int fd, const std::string& data) {
    std::size_t done = 0;
    while (done < data.size()) {
        const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        done += static_cast<std::size_t>(n);
    }
    return true;
}

[[noreturn]] void memory_dir_unusable() {
    throw ContextError(ErrorCode::validation_error,
                       fmt::format("{} in the project is a symlink or not a directory; notes are not read or written "
                                   "through it",
                                   kMemoryDir));
}

// The memory directory, never followed through a symlink (it could point anywhere on the
// machine); created first when `create`. -1 (errno ENOENT) when it does not exist.
int open_memory_dir(const std::filesystem::path& project, bool create) {
    const std::string dir = (project / kMemoryDir).string();
    if (create && ::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) notes_failure("create the directory of");
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP || errno == ENOTDIR) memory_dir_unusable();
        if (errno != ENOENT || create) notes_failure("open the directory of");
    }
    return fd;
}

void lock(int fd, int how) {
    // Blocking: a writer holds the lock for one append. Should another process hold it for
    // ever, the call ends at its deadline and the worker pool stands in for this thread.
    while (::flock(fd, how) != 0) {
        if (errno != EINTR) notes_failure("lock");
    }
}

bool read_digits(std::string_view text, std::size_t at, std::size_t count, int& out) {
    if (at + count > text.size()) return false;
    out = 0;
    for (std::size_t i = at; i < at + count; ++i) {
        if (text[i] < '0' || text[i] > '9') return false;
        out = out * 10 + (text[i] - '0');
    }
    return true;
}

// One line of the file → a note, or nullopt when it is not one.
std::optional<Note> parse_note(std::string_view line) {
    auto value = nlohmann::json::parse(line, nullptr, false);
    const bool usable = value.is_object() && value.contains("type") && value["type"].is_string() &&
                        value.contains("content") && value["content"].is_string();
    if (!usable) return std::nullopt;
    Note note{value["type"].get<std::string>(), value["content"].get<std::string>(), ""};
    if (auto ts = value.find("timestamp"); ts != value.end() && ts->is_string())
        note.timestamp = ts->get<std::string>();
    return note;
}

// Reads [offset, offset + size) fully.
void read_at(int fd, char* into, std::size_t size, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = ::pread(fd, into + done, size - done, static_cast<off_t>(offset + done));
        if (n < 0) {
            if (errno == EINTR) continue;
            notes_failure("read");
        }
        if (n == 0) notes_failure("read (the file shrank while read)");
        done += static_cast<std::size_t>(n);
    }
}

// FNV-1a over the (up to 64) bytes before `offset`.
std::uint64_t fingerprint(int fd, std::uint64_t offset) {
    char bytes[64];
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof bytes, offset));
    read_at(fd, bytes, n, offset - n);
    std::uint64_t hash = 14695981039346656037ull;
    for (std::size_t i = 0; i < n; ++i) {
        hash ^= static_cast<unsigned char>(bytes[i]);
        hash *= 1099511628211ull;
    }
    return hash;
}

// The backward scan of one page.
class PageReader {
public:
    PageReader(const NotesQuery& query, int fd) : q_(query), fd_(fd) {}

    NotesPage read(std::uint64_t end, bool inside_line) {
        // A budget below one line plus one block could stop without progress.
        const std::uint64_t budget = std::max(q_.max_scan_bytes, q_.max_line_bytes + kBlockBytes);
        std::uint64_t pos = end;
        std::string tail;  // the start of a line that began before `pos` and ends at pos + tail.size()
        bool discarding = inside_line;
        std::vector<char> block(kBlockBytes);
        while (!done_) {
            if (pos == 0) {
                // What is left is the file's first line.
                if (discarding) skipped(0);
                else if (!tail.empty()) line(0, tail);
                break;
            }
            if (end - pos >= budget) {
                const std::uint64_t at = discarding ? pos : pos + tail.size();
                page_.next = NotesCursor{at, fingerprint(fd_, at), discarding};
                break;
            }
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kBlockBytes, pos));
            pos -= n;
            read_at(fd_, block.data(), n, pos);
            page_.scanned_bytes += n;
            std::string_view bytes(block.data(), n);
            std::size_t stop = n;  // lines of this block end here, going down
            while (!done_) {
                const std::size_t nl = stop == 0 ? std::string_view::npos : bytes.rfind('\n', stop - 1);
                if (nl == std::string_view::npos) {
                    // No line starts in the rest of the block: it goes before the tail.
                    if (!discarding) {
                        tail.insert(0, bytes.substr(0, stop));
                        if (tail.size() > q_.max_line_bytes) {
                            discarding = true;
                            tail.clear();
                            tail.shrink_to_fit();
                        }
                    }
                    break;
                }
                const std::uint64_t start = pos + nl + 1;
                if (discarding) {
                    skipped(start);
                    discarding = false;
                } else {
                    line(start, std::string(bytes.substr(nl + 1, stop - nl - 1)) + tail);
                }
                tail.clear();
                stop = nl;
            }
        }
        return std::move(page_);
    }

private:
    void skipped(std::uint64_t offset) {
        if (page_.skipped_offsets.size() < kMaxSkippedReported) page_.skipped_offsets.push_back(offset);
    }

    void line(std::uint64_t start, std::string_view text) {
        if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;  // blank lines are not notes
        std::optional<Note> note = parse_note(text);
        if (!note) {
            skipped(start);
            return;
        }
        if (q_.since || q_.until) {
            const auto at = parse_iso8601(note->timestamp);
            if (!at) return;  // no time to filter by
            if (q_.since && *at < *q_.since) {
                // Older than what was asked for; from a little further on, so is the rest.
                if (*at < *q_.since - kSinceSlack) done_ = true;
                return;
            }
            if (q_.until && *at > *q_.until) return;
        }
        if (!q_.type.empty() && note->type != q_.type) return;
        page_bytes_ += nlohmann::json(note->content).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).size();
        page_.notes.push_back(std::move(*note));
        if (page_.notes.size() >= q_.limit || page_bytes_ >= q_.max_page_bytes) {
            done_ = true;
            if (start > 0) page_.next = NotesCursor{start, fingerprint(fd_, start), false};
        }
    }

    const NotesQuery& q_;
    int fd_;
    NotesPage page_;
    std::size_t page_bytes_ = 0;
    bool done_ = false;
};

}  // namespace

std::optional<NoteTime> parse_iso8601(std::string_view t) {
    using namespace std::chrono;
    int y = 0, mo = 0, d = 0;
    if (!read_digits(t, 0, 4, y) || t.size() < 10 || t[4] != '-' || !read_digits(t, 5, 2, mo) || t[7] != '-' ||
        !read_digits(t, 8, 2, d)) {
        return std::nullopt;
    }
    const year_month_day date{year{y}, month{static_cast<unsigned>(mo)}, day{static_cast<unsigned>(d)}};
    if (!date.ok()) return std::nullopt;
    NoteTime at = time_point_cast<milliseconds>(sys_days(date));
    if (t.size() == 10) return at;
    if (t[10] != 'T' && t[10] != 't' && t[10] != ' ') return std::nullopt;
    int h = 0, mi = 0, s = 0, ms = 0;
    if (!read_digits(t, 11, 2, h) || t.size() < 16 || t[13] != ':' || !read_digits(t, 14, 2, mi)) return std::nullopt;
    std::size_t p = 16;
    if (p < t.size() && t[p] == ':') {
        if (!read_digits(t, p + 1, 2, s)) return std::nullopt;
        p += 3;
        if (p < t.size() && (t[p] == '.' || t[p] == ',')) {
            ++p;
            const std::size_t first = p;
            while (p < t.size() && t[p] >= '0' && t[p] <= '9') {
                if (p - first < 3) ms = ms * 10 + (t[p] - '0');
                ++p;
            }
            if (p == first) return std::nullopt;
            for (std::size_t i = std::min<std::size_t>(p - first, 3); i < 3; ++i) ms *= 10;
        }
    }
    if (h > 23 || mi > 59 || s > 60) return std::nullopt;
    at += hours(h) + minutes(mi) + seconds(s) + milliseconds(ms);
    if (p == t.size()) return at;  // no offset: UTC
    if ((t[p] == 'Z' || t[p] == 'z') && p + 1 == t.size()) return at;
    if (t[p] != '+' && t[p] != '-') return std::nullopt;
    int oh = 0, om = 0;
    const std::size_t rest = t.size() - p - 1;
    const bool colon = rest == 5 && t[p + 3] == ':';
    if (!(rest == 2 || rest == 4 || colon) || !read_digits(t, p + 1, 2, oh)) return std::nullopt;
    if (rest > 2 && !read_digits(t, p + (colon ? 4 : 3), 2, om)) return std::nullopt;
    if (oh > 23 || om > 59) return std::nullopt;
    const auto offset = hours(oh) + minutes(om);
    return t[p] == '+' ? at - offset : at + offset;
}

std::string encode_cursor(const NotesCursor& cursor) {
    return util::base64url_encode(
        fmt::format("n2:{}:{:016x}:{}", cursor.offset, cursor.fingerprint, cursor.inside_line ? 1 : 0));
}

std::optional<NotesCursor> decode_cursor(std::string_view text) {
    if (text.empty() || text.size() > 200) return std::nullopt;
    const auto raw = util::base64url_decode(text);
    if (!raw || !raw->starts_with("n2:")) return std::nullopt;
    NotesCursor c;
    const char* p = raw->data() + 3;
    const char* end = raw->data() + raw->size();
    auto number = [&](std::uint64_t& out, int base) {
        auto [next, ec] = std::from_chars(p, end, out, base);
        if (ec != std::errc() || next == p) return false;
        p = next;
        return true;
    };
    std::uint64_t inside = 0;
    if (!number(c.offset, 10) || p == end || *p++ != ':' || !number(c.fingerprint, 16) || p == end || *p++ != ':' ||
        !number(inside, 10) || p != end || inside > 1 || c.offset == 0) {
        return std::nullopt;
    }
    c.inside_line = inside == 1;
    // One spelling only: what this server hands out, not look-alikes.
    if (encode_cursor(c) != text) return std::nullopt;
    return c;
}

std::filesystem::path notes_path(const std::filesystem::path& project) { return project / kMemoryDir / kNotesFile; }

Note append_note(const std::filesystem::path& project, Note note) {
    OwnedFd dir{open_memory_dir(project, true)};
    // Relative to the directory just opened, without following a symlink planted as the
    // file itself, and without blocking on a FIFO planted there (refused as not a regular
    // file). Read-write: the last byte is checked for a line torn by a crash.
    OwnedFd file{open_regular_file_at(dir.fd, kNotesFile, O_RDWR | O_APPEND, kShownFile)};
    bool created = false;
    if (file.fd < 0 && errno == ENOENT) {
        file.fd = open_regular_file_at(dir.fd, kNotesFile, O_RDWR | O_APPEND | O_CREAT, kShownFile, 0644);
        created = file.fd >= 0;
    }
    if (file.fd < 0) notes_failure("open");
    lock(file.fd, LOCK_EX);
    // Stamped now, under the lock, so the file stays in time order however long this
    // append waited for the lock.
    if (note.timestamp.empty()) note.timestamp = observability::iso8601_utc(std::chrono::system_clock::now(), true);
    // The original's key order: type, content, timestamp.
    std::string line = nlohmann::ordered_json{{"type", note.type},
                                              {"content", note.content},
                                              {"timestamp", note.timestamp}}
                           .dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    line += '\n';
    // A line torn by an earlier crash must not swallow this note: start on a fresh line.
    struct stat st {};
    if (::fstat(file.fd, &st) == 0 && st.st_size > 0) {
        char last = '\n';
        if (::pread(file.fd, &last, 1, st.st_size - 1) == 1 && last != '\n') line.insert(line.begin(), '\n');
    }
    if (!write_all(file.fd, line)) notes_failure("append to");
    if (::fdatasync(file.fd) != 0) notes_failure("flush");
    // A new file's name is durable only once its directory is.
    if (created && ::fsync(dir.fd) != 0) notes_failure("flush the directory of");
    return note;
}

NotesPage read_notes_page(const std::filesystem::path& project, const NotesQuery& query) {
    OwnedFd dir{open_memory_dir(project, false)};
    if (dir.fd < 0) return {};  // no memory yet
    OwnedFd file{open_regular_file_at(dir.fd, kNotesFile, O_RDONLY, kShownFile)};
    if (file.fd < 0) {
        if (errno == ENOENT) return {};
        if (errno == ELOOP) {
            throw ContextError(ErrorCode::validation_error,
                               fmt::format("{} is a symlink; notes are not read through it", kShownFile));
        }
        notes_failure("open");
    }
    lock(file.fd, LOCK_SH);
    // The size under the lock: no append is half done.
    struct stat st {};
    if (::fstat(file.fd, &st) != 0) notes_failure("inspect");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    std::uint64_t end = size;
    bool inside_line = false;
    if (query.cursor) {
        if (query.cursor->offset > size || fingerprint(file.fd, query.cursor->offset) != query.cursor->fingerprint) {
            throw ContextError(ErrorCode::validation_error,
                               fmt::format("the cursor does not fit {} (rewritten or truncated since)", kShownFile),
                               "Call again without cursor to start from the newest note.");
        }
        end = query.cursor->offset;
        inside_line = query.cursor->inside_line;
    }
    return PageReader(query, file.fd).read(end, inside_line);
}

}  // namespace toolport::context
