// The pattern library's search index: SQLite FTS5 over each pattern's name, description
// and documentation, ranked by BM25 (a name match weighs most), quality breaking ties.
// It lives in a cache file (rebuilt when missing or unreadable; never inside the library),
// is brought up to date at start — only patterns whose files changed are read again — and
// is kept current with inotify: every search first applies the changes the kernel has
// queued, so a pattern written to disk is found by the next search, and a watcher thread
// applies them in between (and says so, for resources/list_changed).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "providers/context/patterns/library.hpp"

namespace toolport::context {

struct PatternHit {
    std::string id, category, name, description;
    std::optional<double> quality;
    bool has_executable = false;
    std::string path;  // the documentation, relative to the library
};

// What changed in the index, for those who mirror it (the Skills extension's resources).
struct IndexChanges {
    // `patterns` is the whole index (after a full re-sync), not just what changed.
    bool complete = false;
    std::vector<PatternHit> patterns;  // added or changed (or, when complete, all)
    std::vector<std::string> removed;  // ids no longer indexed (when not complete)
    bool empty() const { return !complete && patterns.empty() && removed.empty(); }
};

struct PatternQuery {
    std::string keyword;   // empty: every pattern, best quality first
    std::string category;  // empty: all
    bool executable_only = false;
    std::size_t limit = 20;
};

class PatternIndex {
public:
    // Opens (or creates) the index at `file`; an unusable file is replaced, and when none
    // can be written the index lives in memory. Does not read the library yet (sync()).
    PatternIndex(const PatternLibrary& library, std::filesystem::path file);
    ~PatternIndex();
    PatternIndex(const PatternIndex&) = delete;
    PatternIndex& operator=(const PatternIndex&) = delete;

    struct SyncStats {
        std::size_t patterns = 0;  // in the index afterwards
        std::size_t read = 0;      // patterns (re)read from disk
        std::size_t removed = 0;
        std::chrono::milliseconds duration{0};
    };
    // Brings the whole index up to date with the library.
    SyncStats sync();
    // Starts watching the library with inotify (and a thread that applies changes as they
    // come). `on_change` is told what each applied change did, by whichever thread applied
    // it, with the index locked: it must only hand the news on (post it to the event loop),
    // never call the index itself. Returns false when inotify is unavailable.
    bool watch(std::function<void(IndexChanges)> on_change);
    // Applies the file changes queued since the last call. Returns whether any applied.
    bool refresh();
    // Re-reads one pattern (or forgets it when its .md is gone).
    void update(const std::string& category, const std::string& name);

    std::vector<PatternHit> search(const PatternQuery& query);
    std::size_t size();
    const std::filesystem::path& file() const;

    // The FTS5 query for a keyword: each word as a prefix term, any of them (exposed for
    // tests). Empty when the keyword has no word.
    static std::string fts_query(const std::string& keyword);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// Where the index of `library_root` lives by default: $XDG_CACHE_HOME (else ~/.cache)
// /toolport/patterns-<hash of the root>.sqlite.
std::filesystem::path default_index_file(const std::filesystem::path& library_root);

}  // namespace toolport::context
