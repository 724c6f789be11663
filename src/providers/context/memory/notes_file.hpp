// Session memory on disk: <project>/.agent-memory/session-notes.jsonl, one note per line,
//
//   {"type":"decision","content":"Use RLS for tenant isolation","timestamp":"2025-11-05T10:12:00.000Z"}
//
// the format of the original server, so existing projects keep their notes. Appends are
// durable and safe under concurrency: one write of the whole line, stamped with the time
// under an exclusive lock (so the file is in time order), then fdatasync (and the directory's fsync when the file was new), before the call
// is answered.
//
// Reads are pages, newest note first, and bounded: the file is read backwards in blocks
// from the end (or from where the previous page stopped) until the page is full, the
// notes are older than `since`, or a budget of bytes scanned is spent; never the whole
// file at once. Where a page stops, a cursor says where the next one starts: the byte
// offset below which nothing was read yet, with a digest of the bytes before it so a
// cursor is never applied to a rewritten file. Lines that are not notes are skipped and reported by offset,
// so one bad line never hides the rest.
//
// Every file is opened non-blocking and checked to be a regular file (a FIFO planted at
// the name would otherwise block the worker for ever), and never through a symlink.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::context {

inline constexpr const char* kNoteTypes[] = {"decision", "hypothesis", "blocker", "general"};

struct Note {
    std::string type;
    std::string content;
    std::string timestamp;  // ISO-8601 UTC
};

// An instant in milliseconds since the epoch (UTC).
using NoteTime = std::chrono::sys_time<std::chrono::milliseconds>;

// An ISO 8601 date ("2025-11-05", midnight UTC) or date-time ("2025-11-05T10:12:00Z",
// "2025-11-05T10:12:00.123+02:00", "2025-11-05T10:12"; without an offset it is UTC), or
// nullopt when `text` is neither or names no real date.
std::optional<NoteTime> parse_iso8601(std::string_view text);

// Where a page stops: read only what lies below `offset` next time.
struct NotesCursor {
    std::uint64_t offset = 0;
    // A digest of the (up to 64) bytes before `offset`: a cursor is not applied to a file
    // rewritten since (the same name, other content), whatever its inode.
    std::uint64_t fingerprint = 0;
    // The byte at offset - 1 is inside an over-long line still being skipped.
    bool inside_line = false;
};
std::string encode_cursor(const NotesCursor& cursor);
// nullopt when `text` is not a cursor this server handed out (in its one spelling).
std::optional<NotesCursor> decode_cursor(std::string_view text);

struct NotesQuery {
    std::string type;  // only notes of this type; empty: every type
    std::size_t limit = 100;
    std::optional<NoteTime> since;  // inclusive; notes without a readable timestamp are left out
    std::optional<NoteTime> until;  // inclusive
    std::optional<NotesCursor> cursor;
    // At most this much of the file is read per page (a little more: whole blocks). A page
    // that stops on it has a cursor even when it holds fewer notes than `limit`.
    std::size_t max_scan_bytes = 4u << 20;
    // The page stops once its notes' contents (as JSON strings) pass this.
    std::size_t max_page_bytes = 256u << 10;
    // A line longer than this is not a note (appends are at most ~400 KiB): skipped.
    std::size_t max_line_bytes = 1u << 20;
};

struct NotesPage {
    std::vector<Note> notes;  // newest first
    std::optional<NotesCursor> next;
    std::vector<std::uint64_t> skipped_offsets;  // byte offsets of lines that are not notes (at most 100)
    std::uint64_t scanned_bytes = 0;
};

// The notes file of a project directory (already resolved and checked).
std::filesystem::path notes_path(const std::filesystem::path& project);

// Appends `note` durably and returns it as stored: without a timestamp it is stamped
// with the current time once it holds the file's lock. Throws ContextError
// (FILESYSTEM_ERROR) on any failure, a notes file that is not a regular file included,
// and VALIDATION_ERROR when .agent-memory is a symlink or not a directory.
Note append_note(const std::filesystem::path& project, Note note);

// One page of the project's notes (none when the file does not exist). VALIDATION_ERROR
// for a cursor that does not fit the file (rewritten or truncated since) and for a symlink at
// .agent-memory or the file; FILESYSTEM_ERROR when the file is not a regular file or
// cannot be read.
NotesPage read_notes_page(const std::filesystem::path& project, const NotesQuery& query);

}  // namespace toolport::context
