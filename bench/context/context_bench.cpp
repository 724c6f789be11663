// The context pack's figures (issue 11): a generated library of 10,000 patterns, served
// in-process through the whole pipeline (an MCP session, validation, the envelope), and
// timed per call. Prints p50/p99 per measurement and the target it is held against.
//
//   build-bench/context_bench [PATTERNS]     (default 10000; scratch files under $BENCH_DIR or ./)
//
// What is timed:
//   index build      PatternIndex::sync() on an empty cache file (what a first start does)
//   start-up         the whole pack starting on that library with a fresh index
//   warm start-up    the same with the index file of the previous start (nothing changed)
//   searchPatterns   tools/call with one or two words drawn from the library's vocabulary
//   incremental      one pattern file rewritten on disk → the search that finds its new word
//   loadSkill        tools/call of a pattern with documentation, SKILL.md and code
//   addNote          tools/call that appends a note and fsyncs it (a disk, not tmpfs)
//   executeSkill     tools/call of a shell skill against the same script run directly
//                    (fork/exec, stdin, stdout, wait): the difference is our overhead;
//                    and sandboxed (bubblewrap, the default) against unsandboxed
//                    (skill_allow_unsandboxed): the difference is the sandbox's start-up
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "context_test_support.hpp"
#include "providers/context/patterns/library.hpp"
#include "providers/context/patterns/search_index.hpp"

extern char** environ;

using namespace toolport;
using namespace toolport::test_support;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Stats {
    double p50, p99;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v[std::min(v.size() - 1, v.size() * 99 / 100)]};
}

void report(const char* what, Stats s, double target_ms = 0) {
    std::printf("%-44s p50 %9.3f ms  p99 %9.3f ms", what, s.p50, s.p99);
    if (target_ms > 0) std::printf("   target p50 < %g ms %s", target_ms, s.p50 < target_ms ? "ok" : "MISSED");
    std::printf("\n");
}
void report_once(const char* what, double ms, double target_ms) {
    std::printf("%-44s     %9.3f ms                    target < %g ms %s\n", what, ms, target_ms,
                target_ms > 0 && ms < target_ms ? "ok" : (target_ms > 0 ? "MISSED" : ""));
}

const std::vector<std::string> kCategories = {"database",     "security",       "ui", "backend", "testing",
                                              "architecture", "mcp-integration"};

// A vocabulary of made-up words so that a keyword matches a few dozen patterns, as real
// keywords do, not all or none.
std::vector<std::string> vocabulary(std::mt19937& rng, std::size_t n) {
    const std::string letters = "abcdefghiklmnoprstuvy";
    std::vector<std::string> words;
    for (std::size_t i = 0; i < n; ++i) {
        std::string w;
        const int len = 4 + static_cast<int>(rng() % 6);
        for (int k = 0; k < len; ++k) w += letters[rng() % letters.size()];
        words.push_back(w);
    }
    return words;
}

void generate_library(const ScratchDir& dir, std::size_t count, const std::vector<std::string>& words,
                      std::mt19937& rng) {
    auto pick = [&] { return words[rng() % words.size()]; };
    for (std::size_t i = 0; i < count; ++i) {
        const std::string& category = kCategories[i % kCategories.size()];
        const std::string name = fmt::format("{}-{}-{}", pick(), pick(), i);
        std::string doc = fmt::format("# {} {}\n\n## Overview\n\n", pick(), pick());
        for (int p = 0; p < 3; ++p) {
            for (int w = 0; w < 60; ++w) doc += pick() + (w % 12 == 11 ? ".\n" : " ");
            doc += "\n\n";
        }
        dir.write(fmt::format("library/{}/{}.md", category, name), doc);
        if (i % 3 == 0) {
            dir.write(fmt::format("library/{}/{}-SKILL.md", category, name),
                      fmt::format("# Skill: {}\n\n**Quality Score:** {}.{}/10\n\n## Overview\n\n{} {} {} {}.\n", name,
                                  5 + rng() % 5, rng() % 10, pick(), pick(), pick(), pick()));
        }
        if (i % 5 == 0) dir.write(fmt::format("library/{}/{}.sh", category, name), "cat\n");
    }
}

// Runs `argv` with `input` on stdin and waits; returns its stdout.
std::string run_direct(const std::vector<std::string>& argv, const std::string& input) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_addclose(&actions, in[1]);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    if (posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) throw std::runtime_error("spawn");
    posix_spawn_file_actions_destroy(&actions);
    ::close(in[0]);
    ::close(out[1]);
    [[maybe_unused]] auto w = ::write(in[1], input.data(), input.size());
    ::close(in[1]);
    std::string output;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) output.append(buf, static_cast<std::size_t>(n));
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return output;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t patterns = argc > 1 ? std::stoul(argv[1]) : 10000;
    if (const char* base = std::getenv("BENCH_DIR")) ::setenv("TMPDIR", base, 1);
    else ::setenv("TMPDIR", std::filesystem::current_path().c_str(), 1);
    spdlog::set_level(spdlog::level::warn);

    ScratchDir dir;  // under TMPDIR: on a disk, so fsync costs what it costs
    std::mt19937 rng(42);
    const auto words = vocabulary(rng, 4000);
    auto t = Clock::now();
    generate_library(dir, patterns, words, rng);
    std::printf("library: %zu patterns generated in %.0f ms under %s\n\n", patterns, ms_since(t), dir.path().c_str());
    dir.mkdir("Dev/demo");
    const std::string project = (dir.path() / "Dev/demo").string();

    {
        context::PatternLibrary library(context::Root("pattern library", dir.path() / "library"), kCategories);
        context::PatternIndex index(library, dir.path() / "cache/cold.sqlite");
        t = Clock::now();
        const auto synced = index.sync();
        report_once(fmt::format("index build ({} patterns, empty cache)", synced.patterns).c_str(), ms_since(t), 2000);
    }

    const Json settings = {{"patterns_root", (dir.path() / "library").string()},
                           {"projects_root", (dir.path() / "Dev").string()},
                           {"index_file", (dir.path() / "cache/index.sqlite").string()},
                           {"skill_timeout_ms", 10000},
                           {"skill_allow_unsandboxed", true}};  // sandboxed wherever bwrap can be
    t = Clock::now();
    auto server = std::make_unique<ContextServer>(settings);
    report_once("start-up: pack + index + skill resources", ms_since(t), 0);
    server.reset();
    t = Clock::now();
    server = std::make_unique<ContextServer>(settings);
    report_once("warm start-up (index file kept)", ms_since(t), 0);
    std::printf("\n");

    std::vector<double> search, load, note, incremental, exec_tool, exec_direct;
    std::size_t hits = 0;
    for (int i = 0; i < 500; ++i) {
        const std::string keyword = i % 2 ? words[rng() % words.size()]
                                          : words[rng() % words.size()] + " " + words[rng() % words.size()];
        t = Clock::now();
        Json r = server->call("searchPatterns", {{"keyword", keyword}});
        search.push_back(ms_since(t));
        hits += r["data"].size();
        if (r["success"] != true) {
            std::fprintf(stderr, "searchPatterns failed: %s\n", r.dump().c_str());
            return 1;
        }
    }
    report("searchPatterns (1-2 words, limit 20)", stats(search), 5);
    std::printf("%-44s %zu results per search on average\n", "", hits / 500);

    const auto list = context::PatternLibrary(context::Root("l", dir.path() / "library"), kCategories).list();
    for (int i = 0; i < 20; ++i) {
        const auto& p = list[static_cast<std::size_t>(i) * 97 % list.size()];
        const std::string marker = fmt::format("zqxmarker{}", i);
        dir.write(fmt::format("library/{}/{}", p.category, p.doc_file), fmt::format("# Changed\n\n{} now.\n", marker));
        t = Clock::now();
        Json r = server->call("searchPatterns", {{"keyword", marker}});
        incremental.push_back(ms_since(t));
        if (r["data"].size() != 1) {
            std::fprintf(stderr, "the changed pattern was not found: %s\n", r.dump().c_str());
            return 1;
        }
    }
    report("incremental: file changed -> found by search", stats(incremental), 50);

    for (int i = 0; i < 500; ++i) {
        const auto& p = list[static_cast<std::size_t>(i) * 3 % list.size()];  // every third has a SKILL.md
        t = Clock::now();
        Json r = server->call("loadSkill", {{"skillId", p.id()}, {"includeCode", true}});
        load.push_back(ms_since(t));
        if (r["success"] != true) return 1;
    }
    report("loadSkill (docs + SKILL.md + code)", stats(load), 1);

    for (int i = 0; i < 300; ++i) {
        t = Clock::now();
        Json r = server->call("addNote", {{"projectPath", project},
                                          {"type", "decision"},
                                          {"content", fmt::format("decision {}", i)}});
        note.push_back(ms_since(t));
        if (r["success"] != true) return 1;
    }
    report("addNote (append + fdatasync + dir fsync)", stats(note), 10);

    const auto& skill = *std::find_if(list.begin(), list.end(),
                                      [](const context::PatternFiles& p) { return p.runnable_file.ends_with(".sh"); });
    const std::string script = (skill.dir / skill.runnable_file).string();
    const Json input = {{"x", 1}};
    bool tool_sandboxed = false;
    for (int i = 0; i < 100; ++i) {
        t = Clock::now();
        run_direct({"bash", script}, input.dump());
        exec_direct.push_back(ms_since(t));
        t = Clock::now();
        Json r = server->call("executeSkill", {{"skillId", skill.id()}, {"input", input}});
        exec_tool.push_back(ms_since(t));
        if (r["success"] != true) {
            std::fprintf(stderr, "executeSkill failed: %s\n", r.dump().c_str());
            return 1;
        }
        tool_sandboxed = r["metadata"]["sandboxed"] == true;
    }
    const Stats direct = stats(exec_direct), tool = stats(exec_tool);
    report("bash skill run directly (posix_spawn)", direct);
    report(tool_sandboxed ? "executeSkill of the same skill, sandboxed"
                          : "executeSkill of the same skill (NO sandbox here)",
           tool);
    std::printf("%-44s     %9.3f ms\n", "executeSkill overhead (p50 difference)", tool.p50 - direct.p50);

    // The same without the sandbox (a bwrap that does not exist, unsandboxed runs allowed),
    // calls interleaved with the sandboxed server's so that both see the same machine load.
    Json unsandboxed_settings = settings;
    unsandboxed_settings["skill_bwrap"] = "/nonexistent/bwrap";
    unsandboxed_settings["skill_allow_unsandboxed"] = true;
    unsandboxed_settings["index_file"] = (dir.path() / "cache/plain.sqlite").string();
    auto plain = std::make_unique<ContextServer>(unsandboxed_settings);
    std::vector<double> exec_plain, exec_boxed;
    for (int i = 0; i < 100; ++i) {
        t = Clock::now();
        Json r = plain->call("executeSkill", {{"skillId", skill.id()}, {"input", input}});
        exec_plain.push_back(ms_since(t));
        if (r["success"] != true || r["metadata"]["sandboxed"] != false) return 1;
        t = Clock::now();
        r = server->call("executeSkill", {{"skillId", skill.id()}, {"input", input}});
        exec_boxed.push_back(ms_since(t));
        if (r["success"] != true) return 1;
    }
    const Stats plain_stats = stats(exec_plain), boxed_stats = stats(exec_boxed);
    report("executeSkill, unsandboxed", plain_stats);
    report("executeSkill, sandboxed (bwrap)", boxed_stats);
    std::printf("%-44s     %9.3f ms                    target < 10 ms %s\n", "sandbox overhead (p50 difference)",
                boxed_stats.p50 - plain_stats.p50, boxed_stats.p50 - plain_stats.p50 < 10 ? "ok" : "MISSED");
    return 0;
}
