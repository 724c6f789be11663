// Session memory on disk: <project>/.agent-memory/session-notes.jsonl, one note per line,
//
//   {"type":"decision","content":"Use RLS for tenant isolation","timestamp":"2025-11-05T10:12:00.000Z"}
//
// the format of the original server, so existing projects keep their notes. Appends are
// durable and safe under concurrency: one write of the whole line under an exclusive
// lock, then fsync (and the directory's fsync when the file was new), before the call is
// answered. A reader takes the lock shared and skips lines it cannot parse, reporting
// them, so one bad line never hides the rest.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace toolport::context {

inline constexpr const char* kNoteTypes[] = {"decision", "hypothesis", "blocker", "general"};

struct Note {
    std::string type;
    std::string content;
    std::string timestamp;  // ISO-8601 UTC
};

struct NotesRead {
    std::vector<Note> notes;         // in file order
    std::vector<int> skipped_lines;  // 1-based lines that were not a note
};

// The notes file of a project directory (already resolved and checked).
std::filesystem::path notes_path(const std::filesystem::path& project);

// Appends `note` durably. Throws ContextError (FILESYSTEM_ERROR) on any failure, and
// VALIDATION_ERROR when .agent-memory is a symlink or not a directory.
void append_note(const std::filesystem::path& project, const Note& note);

// Every note of the project (none when the file does not exist).
NotesRead read_notes(const std::filesystem::path& project);

}  // namespace toolport::context
