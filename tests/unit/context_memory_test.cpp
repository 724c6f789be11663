// The context pack's memory module and the path checks every context tool shares: notes
// appended durably and read back a page at a time, newest first (limit, cursor, since and
// until, a bounded backward read), a bad line skipped and reported (never hiding the
// rest), concurrent appends that never interleave, a FIFO or a directory where the notes
// file should be refused instead of blocking a worker, and ids and paths that try to leave
// their root refused with VALIDATION_ERROR.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <future>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "context_test_support.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/memory/notes_file.hpp"
#include "providers/context/roots.hpp"
#include "pipeline/policy.hpp"
#include "schema/json_schema.hpp"

using namespace toolport;
using namespace toolport::context;
using namespace toolport::test_support;

namespace {

ErrorCode code_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const ContextError& e) {
        return e.code();
    }
    ADD_FAILURE() << "no ContextError";
    return ErrorCode::filesystem_error;
}

std::string message_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const ContextError& e) {
        return std::string(e.what()) + " | " + e.suggestion();
    }
    ADD_FAILURE() << "no ContextError";
    return {};
}

// Every note the query selects, oldest first, read page by page as the tools do.
struct AllNotes {
    std::vector<Note> notes;
    std::vector<std::uint64_t> skipped;
    int pages = 0;
};
AllNotes all_notes(const fs::path& project, NotesQuery query = {}) {
    AllNotes out;
    for (;;) {
        NotesPage page = read_notes_page(project, query);
        ++out.pages;
        out.notes.insert(out.notes.end(), page.notes.begin(), page.notes.end());
        out.skipped.insert(out.skipped.end(), page.skipped_offsets.begin(), page.skipped_offsets.end());
        if (!page.next) break;
        if (out.pages > 100000) {
            ADD_FAILURE() << "the pages never end";
            break;
        }
        query.cursor = page.next;
    }
    std::reverse(out.notes.begin(), out.notes.end());
    std::sort(out.skipped.begin(), out.skipped.end());
    return out;
}

std::vector<std::string> contents(const std::vector<Note>& notes) {
    std::vector<std::string> out;
    for (const auto& n : notes) out.push_back(n.content);
    return out;
}

std::string note_line(const std::string& type, const std::string& content, const std::string& timestamp) {
    return nlohmann::ordered_json{{"type", type}, {"content", content}, {"timestamp", timestamp}}.dump() + "\n";
}

// "2025-11-05T10:00:00.000Z" plus `minutes`.
std::string minute_stamp(int minutes) {
    return fmt::format("2025-11-{:02}T{:02}:{:02}:00.000Z", 5 + minutes / 1440, minutes / 60 % 24, minutes % 60);
}

// The byte offset where 1-based line `number` of `text` starts.
std::uint64_t line_offset(const std::string& text, int number) {
    std::size_t at = 0;
    for (int line = 1; line < number; ++line) at = text.find('\n', at) + 1;
    return at;
}

// Runs `fn` on a thread and waits at most 10 s; should it block on the FIFO at `fifo`
// (the defect), a writer opening it lets it go, so the test fails instead of hanging.
bool returns_in_time(const std::function<void()>& fn, const fs::path& fifo) {
    std::promise<void> finished;
    auto done = finished.get_future();
    std::thread([&fn, &finished] {
        try {
            fn();
        } catch (...) {}
        finished.set_value();
    }).detach();
    if (done.wait_for(std::chrono::seconds(10)) == std::future_status::ready) return true;
    for (int i = 0; i < 100 && done.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready; ++i) {
        const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
        if (w >= 0) ::close(w);
        const int r = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
        if (r >= 0) ::close(r);
    }
    done.wait();
    return false;
}

TEST(ContextIds, PlainNamesPassAndHostileOnesAreValidationErrors) {
    EXPECT_NO_THROW(check_name("rls-policy", "name"));
    EXPECT_NO_THROW(check_name("2025-10-15-auth flow", "sessionId"));
    for (const std::string& bad : std::vector<std::string>{"", ".", "..", ".hidden", "a/b", "a\\b",
                                                           std::string("a\0b", 3), "tab\there", std::string(256, 'x')}) {
        EXPECT_EQ(code_of([&] { check_name(bad, "name"); }), ErrorCode::validation_error) << bad;
    }
    const SkillId id = parse_skill_id("database/rls-policy");
    EXPECT_EQ(id.category, "database");
    EXPECT_EQ(id.name, "rls-policy");
    EXPECT_EQ(id.str(), "database/rls-policy");
    for (const char* bad : {"database", "a/b/c", "../etc", "database/..", "/etc/passwd", "database/"}) {
        EXPECT_EQ(code_of([&] { parse_skill_id(bad); }), ErrorCode::validation_error) << bad;
    }
}

TEST(ContextRoots, PathsThatLeaveTheRootThroughDotsOrSymlinksAreRefused) {
    ScratchDir dir;
    dir.mkdir("library/database");
    dir.write("outside/secret.md", "secret");
    fs::create_directory_symlink(dir.path() / "outside", dir.path() / "library/escape");
    Root root("pattern library", dir.path() / "library");
    EXPECT_EQ(root.resolve("database/x.md"), dir.path() / "library/database/x.md");
    EXPECT_EQ(root.display(root.resolve("database/x.md")), "database/x.md");
    EXPECT_EQ(code_of([&] { root.resolve("../outside/secret.md"); }), ErrorCode::validation_error);
    EXPECT_EQ(code_of([&] { root.resolve("escape/secret.md"); }), ErrorCode::validation_error);
    EXPECT_EQ(code_of([&] { root.resolve("/etc/passwd"); }), ErrorCode::validation_error);
    // The message names the path relative to the root, never the machine's directories.
    try {
        root.resolve("escape/secret.md");
    } catch (const ContextError& e) {
        EXPECT_EQ(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
    }
}

TEST(ContextRoots, AProjectIsANameUnderAProjectsRootOrAnAbsolutePathInsideOne) {
    ScratchDir dir;
    dir.mkdir("Dev/app");
    dir.mkdir("Dev/group/nested");
    dir.mkdir("Dev/.hidden");
    dir.mkdir("elsewhere/app");
    fs::create_directory_symlink(dir.path() / "elsewhere/app", dir.path() / "Dev/linked");
    std::vector<Root> roots{Root("projects root", dir.path() / "Dev")};
    EXPECT_EQ(resolve_project((dir.path() / "Dev/app").string(), roots).dir, dir.path() / "Dev/app");
    EXPECT_EQ(resolve_project((dir.path() / "Dev/../Dev/app").string(), roots).name, "app");
    EXPECT_EQ(resolve_project("app", roots).dir, dir.path() / "Dev/app");
    // A project further down is named by its path under the root, which addresses it again.
    const Project nested = resolve_project((dir.path() / "Dev/group/nested").string(), roots);
    EXPECT_EQ(nested.name, "group/nested");
    EXPECT_EQ(resolve_project(nested.name, roots).dir, nested.dir);
    for (const std::string& bad :
         {(dir.path() / "elsewhere/app").string(), (dir.path() / "Dev/linked").string(), (dir.path() / "Dev").string(),
          (dir.path() / "Dev/missing").string(), std::string("/tmp\0x", 6), std::string("nope"),
          std::string("../elsewhere/app"), std::string(".hidden"), std::string("linked"), std::string("")}) {
        try {
            resolve_project(bad, roots);
            ADD_FAILURE() << "accepted " << bad;
        } catch (const ContextError& e) {
            EXPECT_EQ(e.code(), ErrorCode::validation_error) << bad;
            // No server path in the message; the suggestion names the projects there are.
            EXPECT_EQ(std::string(e.what()).find(dir.path().string()), std::string::npos) << e.what();
            EXPECT_NE(e.suggestion().find("app, group"), std::string::npos) << e.suggestion();
        }
    }
    std::vector<std::string> names;
    for (const auto& p : list_projects(roots)) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"app", "group"}));
}

TEST(ContextRoots, AMissingOrUnreadableProjectsRootIsAFilesystemError) {
    ScratchDir dir;
    dir.write("file", "x");
    for (const fs::path& root : {dir.path() / "missing", dir.path() / "file"}) {
        std::vector<Root> roots{Root("projects root", root)};
        EXPECT_FALSE(root_problem(roots.front()).empty());
        EXPECT_EQ(code_of([&] { resolve_project("app", roots); }), ErrorCode::filesystem_error) << root;
        EXPECT_EQ(code_of([&] { check_projects_roots(roots); }), ErrorCode::filesystem_error) << root;
    }
    EXPECT_EQ(root_problem(Root("projects root", dir.path())), "");
}

TEST(ContextNotes, AppendedNotesReadBackInOrderInTheOriginalFormat) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    append_note(project, {"decision", "Use RLS", "2025-11-05T10:00:00.000Z"});
    append_note(project, {"blocker", "CI is red \"again\"\nsecond line", "2025-11-05T10:01:00.000Z"});
    EXPECT_EQ(read_file(notes_path(project)),
              "{\"type\":\"decision\",\"content\":\"Use RLS\",\"timestamp\":\"2025-11-05T10:00:00.000Z\"}\n"
              "{\"type\":\"blocker\",\"content\":\"CI is red \\\"again\\\"\\nsecond line\","
              "\"timestamp\":\"2025-11-05T10:01:00.000Z\"}\n");
    AllNotes read = all_notes(project);
    ASSERT_EQ(read.notes.size(), 2u);
    EXPECT_EQ(read.notes[1].content, "CI is red \"again\"\nsecond line");
    EXPECT_EQ(read.notes[1].timestamp, "2025-11-05T10:01:00.000Z");
    EXPECT_TRUE(read.skipped.empty());
    EXPECT_EQ(read.pages, 1);
    // Newest first in a page.
    EXPECT_EQ(read_notes_page(project, {}).notes[0].content, read.notes[1].content);
    EXPECT_TRUE(read_notes_page(dir.mkdir("empty"), {}).notes.empty());
    EXPECT_FALSE(read_notes_page(dir.mkdir("empty"), {}).next);
}

TEST(ContextNotes, ABadLineIsSkippedAndReportedAndATornLastLineDoesNotSwallowTheNextNote) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    dir.write("app/.agent-memory/session-notes.jsonl",
              "{\"type\":\"decision\",\"content\":\"one\",\"timestamp\":\"t\"}\n"
              "not json at all\n"
              "\n"
              "{\"type\":\"decision\"}\n"
              "{\"type\":\"decision\",\"content\":\"two\"}\n"
              "{\"type\":\"decision\",\"content\":\"torn");  // a crash mid-write, before our time
    append_note(project, {"decision", "three", "t"});
    AllNotes read = all_notes(project);
    ASSERT_EQ(read.notes.size(), 3u);
    EXPECT_EQ(read.notes[0].content, "one");
    EXPECT_EQ(read.notes[1].content, "two");
    EXPECT_EQ(read.notes[2].content, "three");
    const std::string text = read_file(notes_path(project));
    EXPECT_EQ(read.skipped,
              (std::vector<std::uint64_t>{line_offset(text, 2), line_offset(text, 4), line_offset(text, 6)}));
}

TEST(ContextNotes, ConcurrentAppendsNeverInterleave) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([&, w] {
            for (int i = 0; i < 50; ++i) {
                // Stamped under the lock: the file stays in time order.
                append_note(project, {"general", std::string(2000, static_cast<char>('a' + w)) + std::to_string(i), ""});
            }
        });
    }
    for (auto& t : writers) t.join();
    AllNotes read = all_notes(project);
    EXPECT_EQ(read.notes.size(), 200u);
    EXPECT_TRUE(read.skipped.empty());
    EXPECT_TRUE(std::is_sorted(read.notes.begin(), read.notes.end(),
                               [](const Note& a, const Note& b) { return a.timestamp < b.timestamp; }));
    EXPECT_EQ(read.notes[0].timestamp.size(), 24u);
}

TEST(ContextNotes, NotesAreNeverWrittenOrReadThroughASymlink) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    dir.mkdir("elsewhere");
    fs::create_directory_symlink(dir.path() / "elsewhere", project / ".agent-memory");
    EXPECT_EQ(code_of([&] { append_note(project, {"general", "x", "t"}); }), ErrorCode::validation_error);
    EXPECT_FALSE(fs::exists(dir.path() / "elsewhere/session-notes.jsonl"));

    const fs::path other = dir.mkdir("other/.agent-memory");
    dir.write("secret.jsonl", "{\"type\":\"decision\",\"content\":\"secret\"}\n");
    fs::create_symlink(dir.path() / "secret.jsonl", other / "session-notes.jsonl");
    EXPECT_EQ(code_of([&] { read_notes_page(dir.path() / "other", {}); }), ErrorCode::validation_error);
    EXPECT_EQ(code_of([&] { append_note(dir.path() / "other", {"general", "x", "t"}); }), ErrorCode::filesystem_error);
    // Nor read through a symlinked .agent-memory.
    dir.write("elsewhere/session-notes.jsonl", "{\"type\":\"decision\",\"content\":\"secret\"}\n");
    EXPECT_EQ(code_of([&] { read_notes_page(project, {}); }), ErrorCode::validation_error);
}

TEST(ContextNotes, AFifoOrADirectoryAsTheNotesFileIsRefusedWithoutBlocking) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    dir.mkdir("app/.agent-memory");
    const fs::path fifo = notes_path(project);
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    std::string read_error, append_error;
    ErrorCode read_code{}, append_code{};
    ASSERT_TRUE(returns_in_time(
        [&] {
            read_code = code_of([&] { read_notes_page(project, {}); });
            read_error = message_of([&] { read_notes_page(project, {}); });
        },
        fifo))
        << "reading a FIFO blocked";
    ASSERT_TRUE(returns_in_time(
        [&] {
            append_code = code_of([&] { append_note(project, {"decision", "x", "t"}); });
            append_error = message_of([&] { append_note(project, {"decision", "x", "t"}); });
        },
        fifo))
        << "appending to a FIFO blocked";
    EXPECT_EQ(read_code, ErrorCode::filesystem_error);
    EXPECT_EQ(append_code, ErrorCode::filesystem_error);
    EXPECT_NE(read_error.find("FIFO"), std::string::npos) << read_error;
    EXPECT_NE(read_error.find("Remove or rename .agent-memory/session-notes.jsonl"), std::string::npos) << read_error;
    EXPECT_EQ(read_error.find(dir.path().string()), std::string::npos) << read_error;
    EXPECT_NE(append_error.find("FIFO"), std::string::npos) << append_error;

    const fs::path other = dir.mkdir("other/.agent-memory/session-notes.jsonl").parent_path().parent_path();
    EXPECT_EQ(code_of([&] { read_notes_page(other, {}); }), ErrorCode::filesystem_error);
    EXPECT_NE(message_of([&] { read_notes_page(other, {}); }).find("a directory"), std::string::npos);
    EXPECT_EQ(code_of([&] { append_note(other, {"decision", "x", "t"}); }), ErrorCode::filesystem_error);
}

TEST(ContextNotes, PagesComeNewestFirstAndTheirCursorsCoverEveryNoteOnce) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    // ~600 KB: many 64 KiB blocks, lines cut at every block boundary.
    std::string text;
    std::vector<std::string> decisions;
    for (int i = 0; i < 5000; ++i) {
        const std::string type = kNoteTypes[i % 4];
        const std::string content = fmt::format("{} {} {}", type, i, std::string(i % 97, 'x'));
        if (type == "decision") decisions.push_back(content);
        text += note_line(type, content, minute_stamp(i));
    }
    dir.write("app/.agent-memory/session-notes.jsonl", text);

    NotesQuery query;
    query.type = "decision";
    query.limit = 37;
    NotesPage first = read_notes_page(project, query);
    ASSERT_EQ(first.notes.size(), 37u);
    EXPECT_EQ(first.notes[0].content, decisions.back());
    EXPECT_EQ(first.notes[1].content, decisions[decisions.size() - 2]);
    ASSERT_TRUE(first.next);
    EXPECT_LT(first.scanned_bytes, text.size());  // not the whole file for one page

    AllNotes all = all_notes(project, query);
    EXPECT_EQ(contents(all.notes), decisions);
    EXPECT_EQ(all.pages, static_cast<int>((decisions.size() + 36) / 37));
    // Every type, and the default page.
    EXPECT_EQ(all_notes(project).notes.size(), 5000u);
    EXPECT_EQ(read_notes_page(project, {}).notes.size(), 100u);
}

TEST(ContextNotes, AReadStopsAtItsScanBudgetWithACursorAndSkipsOverLongLines) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    std::string text = note_line("decision", "the first decision", minute_stamp(0));
    const std::uint64_t long_line = text.size();
    text += std::string(300000, 'z') + "\n";  // not a note, and longer than any note line
    for (int i = 0; i < 3000; ++i) text += note_line("general", fmt::format("chatter {}", i), minute_stamp(1 + i));
    text += note_line("decision", "the last decision", minute_stamp(4000));
    dir.write("app/.agent-memory/session-notes.jsonl", text);

    NotesQuery query;
    query.type = "decision";
    query.max_scan_bytes = 1;  // at least a line and a block: ~65 KiB a page
    query.max_line_bytes = 1024;
    NotesPage first = read_notes_page(project, query);
    ASSERT_EQ(first.notes.size(), 1u);
    EXPECT_EQ(first.notes[0].content, "the last decision");
    ASSERT_TRUE(first.next) << "the budget was spent before the file's start";
    EXPECT_LE(first.scanned_bytes, 2u * 65536u + 1024u);

    // Pages go on through the chatter (some empty) and through the long line, which is
    // cut by the budget more than once.
    AllNotes all = all_notes(project, query);
    EXPECT_EQ(contents(all.notes), (std::vector<std::string>{"the first decision", "the last decision"}));
    EXPECT_EQ(all.skipped, (std::vector<std::uint64_t>{long_line}));
    EXPECT_GE(all.pages, 4);  // ~555 KB at two 64 KiB blocks a page
    // With the default line limit the same file reads whole in one scan budget.
    EXPECT_EQ(all_notes(project, {.type = "decision"}).pages, 1);
}

TEST(ContextNotes, SinceAndUntilSelectByTimeAndSinceEndsTheScanEarly) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    std::string text;
    for (int i = 0; i < 20000; ++i) text += note_line("decision", fmt::format("old {}", i), "2024-01-01T00:00:00.000Z");
    text += note_line("decision", "no time", "");
    text += note_line("decision", "bad time", "yesterday");
    for (int i = 0; i < 10; ++i) text += note_line("decision", fmt::format("d{}", i), minute_stamp(i * 60));
    dir.write("app/.agent-memory/session-notes.jsonl", text);

    NotesQuery query;
    query.type = "decision";
    query.since = parse_iso8601("2025-11-05T03:00:00Z");
    query.until = parse_iso8601("2025-11-05T06:00:00.000Z");
    NotesPage page = read_notes_page(project, query);
    EXPECT_EQ(contents(page.notes), (std::vector<std::string>{"d6", "d5", "d4", "d3"}));  // both ends inclusive
    EXPECT_FALSE(page.next);
    EXPECT_LT(page.scanned_bytes, 200000u) << "the scan went on past notes older than since";

    query.until.reset();
    query.limit = 3;
    EXPECT_EQ(contents(all_notes(project, query).notes),
              (std::vector<std::string>{"d3", "d4", "d5", "d6", "d7", "d8", "d9"}));
    // An offset is applied: 05:00+02:00 is 03:00 UTC.
    query.since = parse_iso8601("2025-11-05T05:00:00+02:00");
    EXPECT_EQ(all_notes(project, query).notes.size(), 7u);
    // Without filters, notes without a usable time are there too.
    query = {};
    query.limit = 12;
    EXPECT_EQ(contents(read_notes_page(project, query).notes)[10], "bad time");
}

TEST(ContextNotes, Iso8601DatesAndTimesParseAndNonsenseDoesNot) {
    using namespace std::chrono;
    const auto at = [](int y, unsigned m, unsigned d, int h, int mi, int s, int ms) {
        return NoteTime(sys_days(year{y} / m / d).time_since_epoch() + hours(h) + minutes(mi) + seconds(s) +
                        milliseconds(ms));
    };
    EXPECT_EQ(parse_iso8601("2025-11-05"), at(2025, 11, 5, 0, 0, 0, 0));
    EXPECT_EQ(parse_iso8601("2025-11-05T10:12:00.000Z"), at(2025, 11, 5, 10, 12, 0, 0));
    EXPECT_EQ(parse_iso8601("2025-11-05T10:12:07.5Z"), at(2025, 11, 5, 10, 12, 7, 500));
    EXPECT_EQ(parse_iso8601("2025-11-05T10:12:07.123456Z"), at(2025, 11, 5, 10, 12, 7, 123));
    EXPECT_EQ(parse_iso8601("2025-11-05T10:12"), at(2025, 11, 5, 10, 12, 0, 0));
    EXPECT_EQ(parse_iso8601("2025-11-05t10:12:00z"), at(2025, 11, 5, 10, 12, 0, 0));
    EXPECT_EQ(parse_iso8601("2025-11-05T10:12:00+02:00"), at(2025, 11, 5, 8, 12, 0, 0));
    EXPECT_EQ(parse_iso8601("2025-11-05T10:12:00-0130"), at(2025, 11, 5, 11, 42, 0, 0));
    EXPECT_EQ(parse_iso8601("2025-11-05T00:30:00+01"), at(2025, 11, 4, 23, 30, 0, 0));
    for (const char* bad :
         {"", "yesterday", "2025-13-01", "2025-02-30", "2025-11-05T24:00", "2025-11-05T10:60", "2025-11-05T10:12:00.Z",
          "2025-11-05T10:12:00+2", "2025-11-05X10:12", "2025-11-5", "2025-11-05T10:12:00Zjunk", "20251105"}) {
        EXPECT_FALSE(parse_iso8601(bad)) << bad;
    }
}

TEST(ContextNotes, ACursorIsRefusedForAnotherFileAndGarbageIsNoCursor) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    for (int i = 0; i < 5; ++i) append_note(project, {"decision", fmt::format("n{}", i), minute_stamp(i)});
    NotesQuery query;
    query.limit = 2;
    NotesPage first = read_notes_page(project, query);
    ASSERT_TRUE(first.next);
    const std::string cursor = encode_cursor(*first.next);
    ASSERT_TRUE(decode_cursor(cursor));
    EXPECT_EQ(decode_cursor(cursor)->offset, first.next->offset);
    for (const std::string& bad :
         {std::string(), std::string("garbage"), std::string("bjE6MTAw"), cursor + "x", std::string(300, 'A')}) {
        EXPECT_FALSE(decode_cursor(bad)) << bad;
    }
    // The same bytes in a new file: the cursor still means the same place.
    const std::string text = read_file(notes_path(project));
    fs::remove(notes_path(project));
    dir.write("app/.agent-memory/session-notes.jsonl", text);
    query.cursor = first.next;
    EXPECT_EQ(contents(read_notes_page(project, query).notes), (std::vector<std::string>{"n2", "n1"}));
    // Other bytes before the cursor (the file rewritten), or a file cut shorter: the cursor
    // does not apply, whatever inode the new file got.
    fs::remove(notes_path(project));
    dir.write("app/.agent-memory/session-notes.jsonl", note_line("decision", "inserted", minute_stamp(0)) + text);
    EXPECT_EQ(code_of([&] { read_notes_page(project, query); }), ErrorCode::validation_error);
    EXPECT_NE(message_of([&] { read_notes_page(project, query); }).find("without cursor"), std::string::npos);
    dir.write("app/.agent-memory/session-notes.jsonl", text);
    NotesCursor beyond = *read_notes_page(project, {.limit = 1}).next;
    beyond.offset = text.size() + 1;
    query.cursor = beyond;
    EXPECT_EQ(code_of([&] { read_notes_page(project, query); }), ErrorCode::validation_error);
}

Json pack_settings(const ScratchDir& dir) {
    return {{"patterns_root", (dir.path() / "library").string()},
            {"projects_root", (dir.path() / "Dev").string()},
            {"index_file", (dir.path() / "cache/index.sqlite").string()}};
}

class ContextMemoryTools : public ::testing::Test {
protected:
    ContextMemoryTools() : project(dir.mkdir("Dev/app")), server(pack_settings(dir)) {}

    // structuredContent checked against the tool's outputSchema from tools/list, as
    // clients such as the TypeScript SDK do.
    // Every tool tools/list gives, page by page.
    Json all_tools() {
        Json tools = Json::array();
        Json params = Json::object();
        for (int page = 0; page < 100; ++page) {
            Json listed = server.request("tools/list", params);
            for (auto& t : listed["tools"]) tools.push_back(std::move(t));
            if (!listed.contains("nextCursor")) break;
            params["cursor"] = listed["nextCursor"];
        }
        return tools;
    }

    void expect_valid_output(const std::string& tool, const Json& structured) {
        if (output_schemas.empty()) {
            for (const auto& t : all_tools()) {
                output_schemas.emplace(t["name"].get<std::string>(), schema::compile(t["outputSchema"]));
            }
        }
        const auto& compiled = output_schemas.at(tool);
        EXPECT_TRUE(compiled.is_valid(structured)) << tool << ": " << structured.dump().substr(0, 400);
    }

    ScratchDir dir;
    fs::path project;
    ContextServer server;
    std::map<std::string, schema::CompiledSchema> output_schemas;
};

TEST_F(ContextMemoryTools, ANoteIsOnDiskWhenAcknowledgedAndEachGetterSeesItsType) {
    Json added = server.call("addNote",
                             {{"projectPath", project.string()}, {"type", "decision"}, {"content", "Use RLS"}});
    ASSERT_EQ(added["success"], true) << added;
    EXPECT_EQ(added["data"]["content"], "Use RLS");
    EXPECT_EQ(added["data"]["timestamp"].get<std::string>().size(), 24u);  // 2025-11-05T10:00:00.000Z
    EXPECT_GT(added["metadata"]["tokensUsed"].get<long long>(), 0);
    EXPECT_NE(read_file(notes_path(project)).find("\"Use RLS\""), std::string::npos);

    server.call("addNote", {{"projectPath", project.string()}, {"type", "blocker"}, {"content", "No staging DB"}});
    server.call("addNote", {{"projectPath", project.string()}, {"type", "hypothesis"}, {"content", "Cache is stale"}});
    server.call("addNote", {{"projectPath", project.string()}, {"type", "decision"}, {"content", "Ship Friday"}});

    Json decisions = server.call("getDecisions", {{"projectPath", project.string()}});
    EXPECT_EQ(decisions["data"], Json({"Ship Friday", "Use RLS"}));  // newest first
    EXPECT_FALSE(decisions["metadata"].contains("nextCursor"));
    EXPECT_EQ(decisions["metadata"]["decisionsCount"], 2);
    EXPECT_EQ(server.call("getBlockers", {{"projectPath", project.string()}})["data"], Json({"No staging DB"}));
    Json hypotheses = server.call("getHypotheses", {{"projectPath", project.string()}});
    EXPECT_EQ(hypotheses["data"], Json({"Cache is stale"}));
    EXPECT_EQ(hypotheses["metadata"]["hypothesesCount"], 1);
    // Never cached: a note added after a read is in the next read.
    server.call("addNote", {{"projectPath", project.string()}, {"type", "blocker"}, {"content", "VPN down"}});
    EXPECT_EQ(server.call("getBlockers", {{"projectPath", project.string()}})["data"],
              Json({"VPN down", "No staging DB"}));
}

TEST_F(ContextMemoryTools, AMalformedLineIsReportedNotFatal) {
    dir.write(
        "Dev/app/.agent-memory/session-notes.jsonl",
        "{\"type\":\"decision\",\"content\":\"kept\"}\n{broken\n{\"type\":\"decision\",\"content\":\"also kept\"}\n");
    Json decisions = server.call("getDecisions", {{"projectPath", project.string()}});
    EXPECT_EQ(decisions["data"], Json({"also kept", "kept"}));
    // Where the bad line starts in the file (line numbers would need the whole file read).
    EXPECT_EQ(decisions["metadata"]["skippedLineOffsets"],
              Json({std::string("{\"type\":\"decision\",\"content\":\"kept\"}\n").size()}));
}

TEST_F(ContextMemoryTools, BadArgumentsAndPathsAreValidationErrorsInTheEnvelope) {
    Json bad_type = server.call("addNote", {{"projectPath", project.string()}, {"type", "idea"}, {"content", "x"}});
    EXPECT_EQ(bad_type["success"], false);
    EXPECT_EQ(bad_type["error"]["code"], "VALIDATION_ERROR");
    EXPECT_EQ(bad_type["error"]["parameter"], "type");
    EXPECT_EQ(server.last_result["isError"], true);

    Json missing = server.call("getDecisions", Json::object());
    EXPECT_EQ(missing["error"]["code"], "VALIDATION_ERROR");

    Json outside = server.call("addNote", {{"projectPath", dir.path().string()}, {"type", "general"}, {"content", "x"}});
    EXPECT_EQ(outside["error"]["code"], "VALIDATION_ERROR");
    EXPECT_EQ(outside["metadata"]["tokensUsed"], 0);
    const std::string message = outside["error"]["message"];
    EXPECT_EQ(message.find(dir.path().string()), std::string::npos) << "home or scratch path leaked: " << message;

    Json escape = server.call("getBlockers", {{"projectPath", (project / "../../..").string()}});
    EXPECT_EQ(escape["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextMemoryTools, TheGettersPageNewestFirstWithLimitCursorSinceAndUntil) {
    std::string text;
    std::vector<std::string> decisions;
    for (int i = 0; i < 130; ++i) {
        const std::string type = i % 10 == 0 ? "blocker" : "decision";
        const std::string content = fmt::format("{} at minute {}", type, i);
        if (type == "decision") decisions.insert(decisions.begin(), content);  // newest first
        text += note_line(type, content, minute_stamp(i));
    }
    dir.write("Dev/app/.agent-memory/session-notes.jsonl", text);

    // The default page, then the cursor to the end.
    std::vector<std::string> seen;
    Json page = server.call("getDecisions", {{"projectPath", project.string()}});
    ASSERT_EQ(page["success"], true) << page;
    expect_valid_output("getDecisions", page);
    EXPECT_EQ(page["data"].size(), 50u);
    EXPECT_EQ(page["metadata"]["decisionsCount"], 50);
    for (;;) {
        for (const auto& c : page["data"]) seen.push_back(c);
        if (!page["metadata"].contains("nextCursor")) break;
        page = server.call("getDecisions", {{"projectPath", project.string()},
                                            {"limit", 50},
                                            {"cursor", page["metadata"]["nextCursor"]}});
        ASSERT_EQ(page["success"], true) << page;
        expect_valid_output("getDecisions", page);
    }
    EXPECT_EQ(seen, decisions);

    Json window = server.call("getBlockers", {{"projectPath", project.string()},
                                              {"since", "2025-11-05T00:30:00Z"},
                                              {"until", "2025-11-05T01:10"},
                                              {"limit", 2}});
    expect_valid_output("getBlockers", window);
    EXPECT_EQ(window["data"], Json({"blocker at minute 70", "blocker at minute 60"}));
    ASSERT_TRUE(window["metadata"].contains("nextCursor"));
    Json rest = server.call("getBlockers", {{"projectPath", project.string()},
                                            {"since", "2025-11-05T00:30:00Z"},
                                            {"until", "2025-11-05T01:10"},
                                            {"cursor", window["metadata"]["nextCursor"]}});
    EXPECT_EQ(rest["data"], Json({"blocker at minute 50", "blocker at minute 40", "blocker at minute 30"}));
    EXPECT_FALSE(rest["metadata"].contains("nextCursor"));
    expect_valid_output("getBlockers", rest);
    Json hypotheses = server.call("getHypotheses", {{"projectPath", project.string()}});
    EXPECT_EQ(hypotheses["data"], Json::array());
    expect_valid_output("getHypotheses", hypotheses);

    // Each bad argument is a VALIDATION_ERROR that says what to send.
    for (const Json& bad : {Json{{"limit", 0}}, Json{{"limit", 501}}, Json{{"limit", "ten"}},
                            Json{{"cursor", "nonsense"}}, Json{{"since", "last week"}}, Json{{"until", "2025-02-30"}}}) {
        Json args = bad;
        args["projectPath"] = project.string();
        Json refused = server.call("getDecisions", args);
        EXPECT_EQ(refused["success"], false) << bad;
        EXPECT_EQ(refused["error"]["code"], "VALIDATION_ERROR") << refused;
        expect_valid_output("getDecisions", refused);
    }
    Json bad_since = server.call("getDecisions", {{"projectPath", project.string()}, {"since", "last week"}});
    EXPECT_NE(bad_since["error"]["suggestion"].get<std::string>().find("2025-11-05T10:12:00Z"), std::string::npos);

    // The schemas say what the tools take and give.
    bool listed = false;
    for (const auto& t : all_tools()) {
        if (t["name"] != "getDecisions") continue;
        listed = true;
        for (const char* key : {"projectPath", "limit", "cursor", "since", "until"}) {
            EXPECT_TRUE(t["inputSchema"]["properties"].contains(key)) << key;
        }
        const Json& metadata = t["outputSchema"]["properties"]["metadata"]["properties"];
        for (const char* key : {"decisionsCount", "nextCursor", "skippedLineOffsets"}) {
            EXPECT_TRUE(metadata.contains(key)) << key;
        }
    }
    EXPECT_TRUE(listed);
}

TEST_F(ContextMemoryTools, APageTooLargeForTheResponseLimitSuggestsWhatTheToolAccepts) {
    ContextServer capped(pack_settings(dir), [](Config& config) {
        pipeline::PolicyOverride small;
        small.max_response_bytes = 3000;
        config.pipeline.tools["getDecisions"] = small;
    });
    std::string text;
    for (int i = 0; i < 40; ++i)
        text += note_line("decision", fmt::format("{} {}", i, std::string(200, 'n')), minute_stamp(i));
    dir.write("Dev/app/.agent-memory/session-notes.jsonl", text);
    Json refused = capped.call("getDecisions", {{"projectPath", project.string()}});
    ASSERT_EQ(refused["success"], false) << refused;
    EXPECT_EQ(refused["error"]["code"], "MCP_RESPONSE_TOO_LARGE");
    const std::string suggestion = refused["error"]["suggestion"];
    for (const char* accepted : {"limit", "cursor", "nextCursor", "since", "until"}) {
        EXPECT_NE(suggestion.find(accepted), std::string::npos) << accepted << " not in: " << suggestion;
    }
    EXPECT_EQ(suggestion.find("fields"), std::string::npos) << suggestion;
    Json smaller = capped.call("getDecisions", {{"projectPath", project.string()}, {"limit", 3}});
    EXPECT_EQ(smaller["success"], true) << smaller;
    EXPECT_EQ(smaller["data"].size(), 3u);
}

TEST_F(ContextMemoryTools, AFifoAsTheNotesFileIsAClearErrorAndTheOtherToolsKeepAnswering) {
    dir.mkdir("Dev/app/.agent-memory");
    ASSERT_EQ(::mkfifo(notes_path(project).c_str(), 0644), 0);
    // More calls than the pack has workers: none may be left blocked on the FIFO.
    for (const char* tool : {"getDecisions", "getBlockers", "getHypotheses"}) {
        Json refused = server.call(tool, {{"projectPath", project.string()}});
        ASSERT_EQ(refused["success"], false) << tool << ": " << refused;
        EXPECT_EQ(refused["error"]["code"], "FILESYSTEM_ERROR");
        EXPECT_NE(refused["error"]["message"].get<std::string>().find("FIFO"), std::string::npos) << refused;
        EXPECT_TRUE(refused["error"].contains("suggestion"));
        expect_valid_output(tool, refused);
    }
    Json add = server.call("addNote", {{"projectPath", project.string()}, {"type", "decision"}, {"content", "x"}});
    EXPECT_EQ(add["error"]["code"], "FILESYSTEM_ERROR") << add;
    // Another project's memory, and the other modules, still answer.
    const fs::path other = dir.mkdir("Dev/other");
    Json ok = server.call("addNote", {{"projectPath", other.string()}, {"type", "decision"}, {"content", "fine"}});
    EXPECT_EQ(ok["success"], true) << ok;
    EXPECT_EQ(server.call("getDecisions", {{"projectPath", other.string()}})["data"], Json({"fine"}));
    EXPECT_EQ(server.call("searchArtifacts", {{"keyword", "anything"}})["success"], true);
}

TEST(ContextMemoryDeadline, AWorkerBlockedInTheKernelDoesNotOutliveTheCallsDeadline) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("Dev/app");
    const fs::path other = dir.mkdir("Dev/other");
    ContextServer server(pack_settings(dir),
                         [](Config& config) { config.pipeline.defaults.timeout = std::chrono::milliseconds(300); });
    Json added = server.call("addNote", {{"projectPath", project.string()}, {"type", "decision"}, {"content", "held"}});
    ASSERT_EQ(added["success"], true) << added;
    // Another holder of the file's lock, which never lets go while the calls run: each
    // read blocks in flock() on a worker thread.
    const int holder = ::open(notes_path(project).c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(holder, 0);
    ASSERT_EQ(::flock(holder, LOCK_EX), 0);
    for (int i = 0; i < 4; ++i) {  // twice as many as the pack's workers
        Json late = server.call("getDecisions", {{"projectPath", project.string()}});
        EXPECT_EQ(late["success"], false) << late;
        EXPECT_EQ(late["error"]["code"], "TIMEOUT") << late;
    }
    // Spares stand in for the blocked workers: the pack still serves.
    Json ok = server.call("addNote", {{"projectPath", other.string()}, {"type", "blocker"}, {"content", "still here"}});
    EXPECT_EQ(ok["success"], true) << ok;
    EXPECT_EQ(server.call("getBlockers", {{"projectPath", other.string()}})["data"], Json({"still here"}));
    ::close(holder);
    // Released: the project reads again.
    EXPECT_EQ(server.call("getDecisions", {{"projectPath", project.string()}})["data"], Json({"held"}));
}

}  // namespace
