#include "providers/context/patterns/search_index.hpp"

#include <poll.h>
#include <sqlite3.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "providers/context/envelope.hpp"
#include "util/digest.hpp"

namespace toolport::context {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kSchemaVersion = 1;

// One prepared statement, finalized with its scope.
class Statement {
public:
    Statement(sqlite3* db, const char* sql) {
        if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) {
            throw std::runtime_error(fmt::format("index: {} ({})", sqlite3_errmsg(db), sql));
        }
    }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    Statement& bind(int i, const std::string& v) {
        sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
        return *this;
    }
    Statement& bind(int i, long long v) {
        sqlite3_bind_int64(stmt_, i, v);
        return *this;
    }
    Statement& bind(int i, std::optional<double> v) {
        if (v) sqlite3_bind_double(stmt_, i, *v);
        else sqlite3_bind_null(stmt_, i);
        return *this;
    }
    bool step() {
        const int rc = sqlite3_step(stmt_);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        throw std::runtime_error(fmt::format("index: {}", sqlite3_errmsg(sqlite3_db_handle(stmt_))));
    }
    void reset() {
        sqlite3_reset(stmt_);
        sqlite3_clear_bindings(stmt_);
    }
    std::string text(int col) const {
        auto p = sqlite3_column_text(stmt_, col);
        return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(stmt_, col)) : std::string();
    }
    long long integer(int col) const { return sqlite3_column_int64(stmt_, col); }
    std::optional<double> real(int col) const {
        if (sqlite3_column_type(stmt_, col) == SQLITE_NULL) return std::nullopt;
        return sqlite3_column_double(stmt_, col);
    }

private:
    sqlite3_stmt* stmt_ = nullptr;
};

void exec(sqlite3* db, const char* sql) {
    char* error = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
        std::string message = error ? error : "unknown error";
        sqlite3_free(error);
        throw std::runtime_error(fmt::format("index: {}", message));
    }
}

const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS patterns(
  rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, category TEXT NOT NULL, name TEXT NOT NULL,
  description TEXT NOT NULL, quality REAL, has_executable INTEGER NOT NULL, path TEXT NOT NULL,
  modified_ns INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS patterns_fts USING fts5(name, description, document,
  tokenize = 'unicode61 remove_diacritics 2');
)SQL";

// The pattern a file of a category folder belongs to ("x-SKILL.md", "x.md", "x.ts" → x).
std::optional<std::string> pattern_of(const std::string& file) {
    if (file.empty() || file[0] == '.') return std::nullopt;
    for (const char* suffix : {"-SKILL.md", ".md", ".ts", ".js", ".mjs", ".py", ".sh"}) {
        const std::string_view s(suffix);
        if (file.size() > s.size() && file.ends_with(s)) return file.substr(0, file.size() - s.size());
    }
    return std::nullopt;
}

}  // namespace

struct PatternIndex::Impl {
    const PatternLibrary& library;
    fs::path file;
    std::mutex mutex;  // the connection and the watch table
    sqlite3* db = nullptr;

    // inotify: watch descriptor → category ("" for the library root and its patterns/).
    int inotify_fd = -1;
    int stop_fd = -1;
    std::map<int, std::string> watches;
    std::thread watcher;
    std::function<void(IndexChanges)> on_change;

    // Statements of the write path, prepared once: a start that indexes 10,000 patterns
    // runs each of them 10,000 times. Finalized before the connection closes.
    std::map<const char*, std::unique_ptr<Statement>> prepared;

    Impl(const PatternLibrary& library, fs::path file) : library(library), file(std::move(file)) {}

    // `sql` (a string literal: the cache is keyed by its address), prepared and reset.
    Statement& statement(const char* sql) {
        auto& slot = prepared[sql];
        if (!slot) slot = std::make_unique<Statement>(db, sql);
        else slot->reset();
        return *slot;
    }

    void close() {
        prepared.clear();
        sqlite3_close(db);
        db = nullptr;
    }

    bool try_open(const std::string& target) {
        if (sqlite3_open_v2(target.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            nullptr) == SQLITE_OK) {
            try {
                // A cache: losing the last writes in a crash costs a re-read at start.
                exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;");
                exec(db, kSchema);
                check_version();
                return true;
            } catch (const std::exception& e) {
                spdlog::warn("context: the pattern index {} is unusable ({})", target, e.what());
            }
        }
        sqlite3_close(db);
        db = nullptr;
        return false;
    }

    // The cache file; replaced when unusable; in memory when no file can be written.
    void open() {
        if (!file.empty()) {
            std::error_code ec;
            fs::create_directories(file.parent_path(), ec);
            if (try_open(file.string())) return;
            for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(file.string() + suffix, ec);
            if (try_open(file.string())) return;
            spdlog::warn("context: keeping the pattern index in memory");
            file.clear();
        }
        if (!try_open(":memory:")) throw std::runtime_error("cannot open the pattern index, even in memory");
    }

    void check_version() {
        Statement get(db, "SELECT value FROM meta WHERE key = 'version'");
        const std::string wanted = std::to_string(kSchemaVersion) + " " + library.root().canonical().string();
        if (get.step() && get.text(0) == wanted) return;
        exec(db, "DELETE FROM patterns; DELETE FROM patterns_fts;");
        Statement put(db, "INSERT OR REPLACE INTO meta(key, value) VALUES ('version', ?1)");
        put.bind(1, wanted).step();
    }

    std::string relative_doc(const PatternFiles& f) const { return library.root().display(f.dir / f.doc_file); }

    // Inside a transaction, with the mutex held.
    void upsert(const PatternInfo& info) {
        remove(info.files.id());
        Statement& insert = statement(
            "INSERT INTO patterns(id, category, name, description, quality, has_executable, path, modified_ns) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
        insert.bind(1, info.files.id())
            .bind(2, info.files.category)
            .bind(3, info.files.name)
            .bind(4, info.description)
            .bind(5, info.quality)
            .bind(6, static_cast<long long>(info.files.has_executable()))
            .bind(7, relative_doc(info.files))
            .bind(8, info.modified_ns)
            .step();
        const long long row = sqlite3_last_insert_rowid(db);
        Statement& fts = statement(
            "INSERT INTO patterns_fts(rowid, name, description, document) VALUES (?1, ?2, ?3, ?4)");
        // Hyphenated names are words: "rls-policy" is found by "rls" and by "policy".
        fts.bind(1, row).bind(2, info.files.name).bind(3, info.description).bind(4, info.document).step();
    }

    bool remove(const std::string& id) {
        Statement& find = statement("SELECT rowid FROM patterns WHERE id = ?1");
        if (!find.bind(1, id).step()) return false;
        const long long row = find.integer(0);
        find.reset();
        statement("DELETE FROM patterns_fts WHERE rowid = ?1").bind(1, row).step();
        statement("DELETE FROM patterns WHERE rowid = ?1").bind(1, row).step();
        return true;
    }

    // Re-reads one pattern; adds what it did to `changes`.
    void update_locked(const std::string& category, const std::string& name, IndexChanges& changes) {
        const std::string id = category + "/" + name;
        std::optional<PatternHit> now;
        exec(db, "BEGIN");
        try {
            auto files = library.find(category, name);
            if (files) {
                try {
                    const PatternInfo info = library.read(*files);
                    upsert(info);
                    now = PatternHit{id,
                                     category,
                                     name,
                                     info.description,
                                     info.quality,
                                     files->has_executable(),
                                     relative_doc(*files)};
                } catch (const ContextError& e) {
                    spdlog::warn("context: pattern {} not indexed: {}", files->id(), e.what());
                    remove(id);
                }
            } else {
                remove(id);
            }
            exec(db, "COMMIT");
        } catch (...) {
            exec(db, "ROLLBACK");
            throw;
        }
        if (now) changes.patterns.push_back(std::move(*now));
        else changes.removed.push_back(id);
    }

    // Every indexed pattern, best quality first.
    std::vector<PatternHit> all_locked() {
        Statement& s = statement(
            "SELECT id, category, name, description, quality, has_executable, path FROM patterns "
            "ORDER BY coalesce(quality, -1) DESC, name, id");
        std::vector<PatternHit> hits;
        while (s.step()) hits.push_back(hit_of(s));
        return hits;
    }

    static PatternHit hit_of(const Statement& s) {
        return {s.text(0), s.text(1), s.text(2), s.text(3), s.real(4), s.integer(5) != 0, s.text(6)};
    }

    SyncStats sync_locked() {
        const auto started = Clock::now();
        SyncStats stats;
        std::map<std::string, long long> indexed;  // id → modified_ns
        {
            Statement all(db, "SELECT id, modified_ns FROM patterns");
            while (all.step()) indexed.emplace(all.text(0), all.integer(1));
        }
        exec(db, "BEGIN");
        try {
            std::set<std::string> present;
            for (const auto& files : library.list()) {
                present.insert(files.id());
                auto it = indexed.find(files.id());
                // Cheap check first: the newest mtime of the pattern's files.
                // (file_clock's epoch is in the future: these counts are negative.)
                long long newest = std::numeric_limits<long long>::min();
                for (const std::string& f : {files.doc_file, files.skill_file, files.code_file}) {
                    if (f.empty()) continue;
                    std::error_code ec;
                    auto t = fs::last_write_time(files.dir / f, ec);
                    if (!ec)
                        newest = std::max<long long>(
                            newest, std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
                }
                if (it != indexed.end() && it->second == newest) continue;
                try {
                    upsert(library.read(files));
                    ++stats.read;
                } catch (const ContextError& e) {
                    spdlog::warn("context: pattern {} not indexed: {}", files.id(), e.what());
                }
            }
            for (const auto& [id, _] : indexed) {
                if (!present.count(id) && remove(id)) ++stats.removed;
            }
            exec(db, "COMMIT");
        } catch (...) {
            exec(db, "ROLLBACK");
            throw;
        }
        stats.patterns = count_locked();
        stats.duration = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
        return stats;
    }

    std::size_t count_locked() {
        Statement count(db, "SELECT count(*) FROM patterns");
        count.step();
        return static_cast<std::size_t>(count.integer(0));
    }

    // (Re)adds watches on the library root, its patterns/ folder and every category folder.
    void add_watches_locked() {
        constexpr uint32_t kFileEvents = IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO |
                                         IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;
        auto add = [&](const fs::path& dir, const std::string& category) {
            const int wd = inotify_add_watch(inotify_fd, dir.c_str(), kFileEvents);
            if (wd >= 0) watches[wd] = category;
        };
        std::error_code ec;
        if (fs::is_directory(library.root().path(), ec)) add(library.root().canonical(), "");
        if (fs::is_directory(library.root().canonical() / "patterns", ec))
            add(library.root().canonical() / "patterns", "");
        for (const auto& category : library.categories()) {
            for (const auto& dir : library.category_dirs(category)) add(dir, category);
        }
    }

    // Reads every queued event and applies them; says what changed. The mutex is held.
    IndexChanges refresh_locked() {
        IndexChanges changes;
        if (inotify_fd < 0) return changes;
        std::set<std::pair<std::string, std::string>> touched;
        bool layout_changed = false;
        alignas(inotify_event) char buffer[64 * 1024];
        for (;;) {
            const ssize_t n = ::read(inotify_fd, buffer, sizeof buffer);
            if (n <= 0) break;  // EAGAIN: nothing more queued
            for (ssize_t offset = 0; offset < n;) {
                const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
                offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
                if (event->mask & IN_Q_OVERFLOW) {
                    layout_changed = true;
                    continue;
                }
                auto w = watches.find(event->wd);
                if (w == watches.end()) continue;
                const std::string name = event->len ? std::string(event->name) : std::string();
                if (event->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
                    if (event->mask & IN_IGNORED) watches.erase(w);
                    layout_changed = true;
                    continue;
                }
                if (w->second.empty() || (event->mask & IN_ISDIR)) {
                    layout_changed = true;  // a category folder came or went
                    continue;
                }
                if (auto pattern = pattern_of(name)) touched.emplace(w->second, *pattern);
            }
        }
        if (layout_changed) {
            for (const auto& [wd, _] : watches) inotify_rm_watch(inotify_fd, wd);
            watches.clear();
            add_watches_locked();
            // rm_watch queues IN_IGNORED for the old descriptors: drained next time, unknown by then.
            sync_locked();
            changes.complete = true;
            changes.patterns = all_locked();
            return changes;
        }
        for (const auto& [category, name] : touched) update_locked(category, name, changes);
        return changes;
    }

    // Tells the watcher what a change did, if it did anything.
    void announce(IndexChanges changes) {
        if (on_change && !changes.empty()) on_change(std::move(changes));
    }

    void watch_loop() {
        pollfd fds[2] = {{inotify_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
        for (;;) {
            if (::poll(fds, 2, -1) < 0) {
                if (errno == EINTR) continue;
                return;
            }
            if (fds[1].revents) return;
            // Let a burst of writes (an editor saving three files) settle into one update.
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            std::lock_guard lock(mutex);
            try {
                announce(refresh_locked());
            } catch (const std::exception& e) {
                spdlog::warn("context: the pattern index could not apply a change: {}", e.what());
            }
        }
    }
};

PatternIndex::PatternIndex(const PatternLibrary& library, fs::path file)
    : impl_(std::make_unique<Impl>(library, std::move(file))) {
    impl_->open();
}

PatternIndex::~PatternIndex() {
    if (impl_->watcher.joinable()) {
        const uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(impl_->stop_fd, &one, sizeof one);
        impl_->watcher.join();
    }
    if (impl_->inotify_fd >= 0) ::close(impl_->inotify_fd);
    if (impl_->stop_fd >= 0) ::close(impl_->stop_fd);
    impl_->close();
}

PatternIndex::SyncStats PatternIndex::sync() {
    std::lock_guard lock(impl_->mutex);
    SyncStats stats = impl_->sync_locked();
    if (impl_->on_change) impl_->announce(IndexChanges{true, impl_->all_locked(), {}});
    return stats;
}

bool PatternIndex::watch(std::function<void(IndexChanges)> on_change) {
    std::lock_guard lock(impl_->mutex);
    if (impl_->inotify_fd >= 0) return true;
    impl_->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (impl_->inotify_fd < 0) return false;
    impl_->stop_fd = eventfd(0, EFD_CLOEXEC);
    impl_->on_change = std::move(on_change);
    impl_->add_watches_locked();
    impl_->watcher = std::thread([this] { impl_->watch_loop(); });
    return true;
}

bool PatternIndex::refresh() {
    std::lock_guard lock(impl_->mutex);
    IndexChanges changes = impl_->refresh_locked();
    const bool changed = !changes.empty();
    impl_->announce(std::move(changes));
    return changed;
}

void PatternIndex::update(const std::string& category, const std::string& name) {
    std::lock_guard lock(impl_->mutex);
    IndexChanges changes;
    impl_->update_locked(category, name, changes);
    impl_->announce(std::move(changes));
}

std::size_t PatternIndex::size() {
    std::lock_guard lock(impl_->mutex);
    return impl_->count_locked();
}

const fs::path& PatternIndex::file() const { return impl_->file; }

std::string PatternIndex::fts_query(const std::string& keyword) {
    std::string query;
    std::string word;
    auto flush = [&] {
        if (word.empty()) return;
        query += (query.empty() ? "" : " OR ") + ("\"" + word + "\"*");
        word.clear();
    };
    for (unsigned char c : keyword) {
        if (std::isalnum(c) || c >= 0x80 || c == '_') word += static_cast<char>(c);
        else flush();
    }
    flush();
    return query;
}

std::vector<PatternHit> PatternIndex::search(const PatternQuery& q) {
    std::lock_guard lock(impl_->mutex);
    impl_->announce(impl_->refresh_locked());
    std::vector<PatternHit> hits;
    const std::string match = fts_query(q.keyword);
    if (!q.keyword.empty() && match.empty()) return hits;
    const char* ranked =
        "SELECT p.id, p.category, p.name, p.description, p.quality, p.has_executable, p.path "
        "FROM patterns_fts JOIN patterns p ON p.rowid = patterns_fts.rowid "
        "WHERE patterns_fts MATCH ?1 AND (?2 = '' OR p.category = ?2) AND (?3 = 0 OR p.has_executable = 1) "
        "ORDER BY bm25(patterns_fts, 10.0, 4.0, 1.0), coalesce(p.quality, -1) DESC, p.id LIMIT ?4";
    const char* listed =
        "SELECT p.id, p.category, p.name, p.description, p.quality, p.has_executable, p.path FROM patterns p "
        "WHERE ?1 = '' AND (?2 = '' OR p.category = ?2) AND (?3 = 0 OR p.has_executable = 1) "
        "ORDER BY coalesce(p.quality, -1) DESC, p.name, p.id LIMIT ?4";
    Statement& s = impl_->statement(match.empty() ? listed : ranked);
    s.bind(1, match)
        .bind(2, q.category)
        .bind(3, static_cast<long long>(q.executable_only))
        .bind(4, static_cast<long long>(q.limit));
    while (s.step()) {
        hits.push_back(Impl::hit_of(s));
    }
    return hits;
}

fs::path default_index_file(const fs::path& library_root) {
    fs::path cache;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') cache = xdg;
    else if (const char* home = std::getenv("HOME"); home && *home == '/') cache = fs::path(home) / ".cache";
    else cache = fs::temp_directory_path();
    std::error_code ec;
    auto root = fs::weakly_canonical(library_root, ec);
    const std::string key = util::sha256_hex((ec ? library_root : root).string()).substr(0, 16);
    return cache / "toolport" / ("patterns-" + key + ".sqlite");
}

}  // namespace toolport::context
