// The context pack's memory module and the path checks every context tool shares: notes
// appended durably and read back in order, a bad line skipped and reported (never hiding
// the rest), concurrent appends that never interleave, and ids and paths that try to
// leave their root refused with VALIDATION_ERROR.
#include <unistd.h>

#include <thread>

#include <gtest/gtest.h>

#include "context_test_support.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/memory/notes_file.hpp"
#include "providers/context/roots.hpp"

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

TEST(ContextIds, PlainNamesPassAndHostileOnesAreValidationErrors) {
    EXPECT_NO_THROW(check_name("rls-policy", "name"));
    EXPECT_NO_THROW(check_name("2025-10-15-auth flow", "sessionId"));
    for (const std::string& bad : std::vector<std::string>{"", ".", "..", ".hidden", "a/b", "a\\b", std::string("a\0b", 3),
                                                          "tab\there", std::string(256, 'x')}) {
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

TEST(ContextRoots, AProjectPathMustBeAnExistingDirectoryInsideAProjectsRoot) {
    ScratchDir dir;
    dir.mkdir("Dev/app");
    dir.mkdir("elsewhere/app");
    fs::create_directory_symlink(dir.path() / "elsewhere/app", dir.path() / "Dev/linked");
    std::vector<Root> roots{Root("projects root", dir.path() / "Dev")};
    EXPECT_EQ(resolve_project_path((dir.path() / "Dev/app").string(), roots), dir.path() / "Dev/app");
    EXPECT_EQ(resolve_project_path((dir.path() / "Dev/../Dev/app").string(), roots), dir.path() / "Dev/app");
    for (const std::string bad : {(dir.path() / "elsewhere/app").string(), (dir.path() / "Dev/linked").string(),
                                  (dir.path() / "Dev").string(), std::string("Dev/app"),
                                  (dir.path() / "Dev/missing").string(), std::string("/tmp\0x", 6)}) {
        EXPECT_EQ(code_of([&] { resolve_project_path(bad, roots); }), ErrorCode::validation_error) << bad;
    }
    EXPECT_EQ(find_project("app", roots), dir.path() / "Dev/app");
    EXPECT_TRUE(find_project("nope", roots).empty());
    EXPECT_EQ(code_of([&] { find_project("..", roots); }), ErrorCode::validation_error);
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
    NotesRead read = read_notes(project);
    ASSERT_EQ(read.notes.size(), 2u);
    EXPECT_EQ(read.notes[1].content, "CI is red \"again\"\nsecond line");
    EXPECT_TRUE(read.skipped_lines.empty());
    EXPECT_TRUE(read_notes(dir.mkdir("empty")).notes.empty());
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
    NotesRead read = read_notes(project);
    ASSERT_EQ(read.notes.size(), 3u);
    EXPECT_EQ(read.notes[0].content, "one");
    EXPECT_EQ(read.notes[1].content, "two");
    EXPECT_EQ(read.notes[2].content, "three");
    EXPECT_EQ(read.skipped_lines, (std::vector<int>{2, 4, 6}));
}

TEST(ContextNotes, ConcurrentAppendsNeverInterleave) {
    ScratchDir dir;
    const fs::path project = dir.mkdir("app");
    std::vector<std::thread> writers;
    for (int w = 0; w < 4; ++w) {
        writers.emplace_back([&, w] {
            for (int i = 0; i < 50; ++i) {
                append_note(project, {"general", std::string(2000, static_cast<char>('a' + w)) + std::to_string(i), "t"});
            }
        });
    }
    for (auto& t : writers) t.join();
    NotesRead read = read_notes(project);
    EXPECT_EQ(read.notes.size(), 200u);
    EXPECT_TRUE(read.skipped_lines.empty());
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
    EXPECT_EQ(code_of([&] { read_notes(dir.path() / "other"); }), ErrorCode::validation_error);
    EXPECT_EQ(code_of([&] { append_note(dir.path() / "other", {"general", "x", "t"}); }), ErrorCode::filesystem_error);
}

class ContextMemoryTools : public ::testing::Test {
protected:
    ContextMemoryTools()
        : project(dir.mkdir("Dev/app")),
          server({{"patterns_root", (dir.path() / "library").string()}, {"projects_root", (dir.path() / "Dev").string()},
                  {"index_file", (dir.path() / "cache/index.sqlite").string()}}) {}

    ScratchDir dir;
    fs::path project;
    ContextServer server;
};

TEST_F(ContextMemoryTools, ANoteIsOnDiskWhenAcknowledgedAndEachGetterSeesItsType) {
    Json added = server.call("addNote", {{"projectPath", project.string()}, {"type", "decision"}, {"content", "Use RLS"}});
    ASSERT_EQ(added["success"], true) << added;
    EXPECT_EQ(added["data"]["content"], "Use RLS");
    EXPECT_EQ(added["data"]["timestamp"].get<std::string>().size(), 24u);  // 2025-11-05T10:00:00.000Z
    EXPECT_GT(added["metadata"]["tokensUsed"].get<long long>(), 0);
    EXPECT_NE(read_file(notes_path(project)).find("\"Use RLS\""), std::string::npos);

    server.call("addNote", {{"projectPath", project.string()}, {"type", "blocker"}, {"content", "No staging DB"}});
    server.call("addNote", {{"projectPath", project.string()}, {"type", "hypothesis"}, {"content", "Cache is stale"}});
    server.call("addNote", {{"projectPath", project.string()}, {"type", "decision"}, {"content", "Ship Friday"}});

    Json decisions = server.call("getDecisions", {{"projectPath", project.string()}});
    EXPECT_EQ(decisions["data"], Json({"Use RLS", "Ship Friday"}));
    EXPECT_EQ(decisions["metadata"]["decisionsCount"], 2);
    EXPECT_EQ(server.call("getBlockers", {{"projectPath", project.string()}})["data"], Json({"No staging DB"}));
    Json hypotheses = server.call("getHypotheses", {{"projectPath", project.string()}});
    EXPECT_EQ(hypotheses["data"], Json({"Cache is stale"}));
    EXPECT_EQ(hypotheses["metadata"]["hypothesesCount"], 1);
    // Never cached: a note added after a read is in the next read.
    server.call("addNote", {{"projectPath", project.string()}, {"type", "blocker"}, {"content", "VPN down"}});
    EXPECT_EQ(server.call("getBlockers", {{"projectPath", project.string()}})["data"], Json({"No staging DB", "VPN down"}));
}

TEST_F(ContextMemoryTools, AMalformedLineIsReportedNotFatal) {
    dir.write("Dev/app/.agent-memory/session-notes.jsonl",
              "{\"type\":\"decision\",\"content\":\"kept\"}\n{broken\n{\"type\":\"decision\",\"content\":\"also kept\"}\n");
    Json decisions = server.call("getDecisions", {{"projectPath", project.string()}});
    EXPECT_EQ(decisions["data"], Json({"kept", "also kept"}));
    EXPECT_EQ(decisions["metadata"]["skippedLines"], Json({2}));
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

}  // namespace
