// executeSkill's sandbox: a skill runs in a child process with its input on stdin and its
// JSON output on stdout; a skill that loops forever, allocates without bound, forks
// children, writes garbage or reads an environment secret is stopped or contained and
// reported as SKILL_EXECUTION_FAILED, and Toolport keeps serving. Also getPatternReuse,
// which reads the same library and the projects' sessions.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>

#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "context_test_support.hpp"
#include "providers/context/context_pack.hpp"
#include "providers/context/patterns/skill_process.hpp"

using namespace toolport;
using namespace toolport::context;
using namespace toolport::test_support;
using namespace std::chrono_literals;

namespace {

// Whether process `pid` is gone (or a zombie: an orphan nobody has reaped yet is dead too)
// by `limit`.
bool process_ends_within(pid_t pid, std::chrono::milliseconds limit) {
    const auto until = std::chrono::steady_clock::now() + limit;
    for (;;) {
        if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        std::getline(stat, line);
        auto close = line.rfind(')');
        if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z') return true;
        if (std::chrono::steady_clock::now() >= until) return false;
        std::this_thread::sleep_for(20ms);
    }
}

}  // namespace

namespace {

const char* kSchemaSkillMd = R"(# Skill: Greeter
**Quality Score:** 8/10

## Overview

Greets someone.

## Input

```json
{"type": "object", "properties": {"name": {"type": "string", "minLength": 1}}, "required": ["name"]}
```
)";

class ContextExecuteSkill : public ::testing::Test {
protected:
    ContextExecuteSkill() {
        dir.write("library/backend/greeter.md", "# Greeter\n\nGreets.\n");
        dir.write("library/backend/greeter-SKILL.md", kSchemaSkillMd);
        // The original server's style: an ES module exporting the camelCased name.
        dir.write("library/backend/greeter.mjs", "export async function greeter(input) { return {greeting: `hello ${input.name}`}; }\n");
        dir.write("library/backend/py-sum.md", "# Sum\n");
        dir.write("library/backend/py-sum.py",
                  "import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'sum': sum(d['values'])}))\n");
        dir.write("library/backend/sh-echo.md", "# Echo\n");
        dir.write("library/backend/sh-echo.sh", "cat\n");
        dir.write("library/backend/ts-only.md", "# TS only\n");
        dir.write("library/backend/ts-only.ts", "export function tsOnly() {}\n");
        dir.write("library/backend/docs-only.md", "# Docs only\n");
        dir.write("library/testing/forever.md", "# Forever\n");
        dir.write("library/testing/forever.sh", "while :; do :; done\n");
        dir.write("library/testing/hog.md", "# Hog\n");
        dir.write("library/testing/hog.py", "x = []\nwhile True:\n    x.append(bytearray(16 << 20))\n");
        dir.write("library/testing/forker.md", "# Forker\n");
        dir.write("library/testing/forker.sh",
                  "(sleep 300; echo escaped > \"$PWD/../forker-was-here\") &\na=$!\n(sleep 300) &\n"
                  "echo \"{\\\"forked\\\": true, \\\"pids\\\": [$a, $!]}\"\n");
        dir.write("library/testing/garbage.md", "# Garbage\n");
        dir.write("library/testing/garbage.sh", "printf 'not json \\001\\002'\n");
        dir.write("library/testing/secret.md", "# Secret\n");
        dir.write("library/testing/secret.sh",
                  "printf '{\"secret\": \"%s\", \"home\": \"%s\", \"cwd\": \"%s\"}' \"$TOOLPORT_UT_SECRET\" \"$HOME\" \"$PWD\"\n");
        dir.write("library/testing/failing.md", "# Failing\n");
        dir.write("library/testing/failing.sh", "echo 'something broke' >&2\nexit 3\n");
        dir.write("library/testing/flood.md", "# Flood\n");
        dir.write("library/testing/flood.sh", "yes '{\"a\": 1}'\n");
        dir.mkdir("Dev");
        ::setenv("TOOLPORT_UT_SECRET", "hunter2", 1);
        server = std::make_unique<ContextServer>(Json{{"patterns_root", (dir.path() / "library").string()},
                                                      {"projects_root", (dir.path() / "Dev").string()},
                                                      {"index_file", (dir.path() / "cache/index.sqlite").string()},
                                                      {"skill_timeout_ms", 1500},
                                                      {"skill_memory_mb", 128},
                                                      {"skill_output_kb", 64}});
    }
    ~ContextExecuteSkill() override { ::unsetenv("TOOLPORT_UT_SECRET"); }

    Json run(const std::string& id, Json input = Json::object(), bool dry_run = false) {
        return server->call("executeSkill", {{"skillId", id}, {"input", std::move(input)}, {"dryRun", dry_run}});
    }

    ScratchDir dir;
    std::unique_ptr<ContextServer> server;
};

TEST_F(ContextExecuteSkill, EachRuntimeTakesJsonInAndGivesJsonOut) {
    Json node = run("backend/greeter", {{"name", "Ada"}});
    ASSERT_EQ(node["success"], true) << node;
    EXPECT_EQ(node["data"], Json({{"greeting", "hello Ada"}}));
    EXPECT_EQ(node["metadata"]["runtime"], "node");
    Json py = run("backend/py-sum", {{"values", {1, 2, 3}}});
    ASSERT_EQ(py["success"], true) << py;
    EXPECT_EQ(py["data"]["sum"], 6);
    Json sh = run("backend/sh-echo", {{"x", 1}});
    EXPECT_EQ(sh["data"], Json({{"x", 1}}));
}

TEST_F(ContextExecuteSkill, TheDeclaredSchemaChecksTheInputAndDryRunRunsNothing) {
    Json dry = run("backend/greeter", {{"name", "Ada"}}, true);
    ASSERT_EQ(dry["success"], true) << dry;
    EXPECT_EQ(dry["data"]["schemaChecked"], true);
    EXPECT_EQ(dry["data"]["functionName"], "greeter");
    Json bad = run("backend/greeter", {{"name", 42}}, true);
    EXPECT_EQ(bad["error"]["code"], "VALIDATION_ERROR");
    EXPECT_NE(bad["error"]["message"].get<std::string>().find("/name"), std::string::npos);
    EXPECT_EQ(run("backend/greeter", Json::object())["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextExecuteSkill, MissingCodeAndMissingPatternsHaveTheirCodes) {
    Json ts = run("backend/ts-only");
    EXPECT_EQ(ts["error"]["code"], "SKILL_NOT_FOUND");
    EXPECT_NE(ts["error"]["message"].get<std::string>().find("compile ts-only.ts"), std::string::npos);
    EXPECT_EQ(run("backend/docs-only")["error"]["code"], "SKILL_NOT_FOUND");
    EXPECT_EQ(run("backend/nope")["error"]["code"], "PATTERN_NOT_FOUND");
    EXPECT_EQ(run("../backend/greeter")["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextExecuteSkill, HostileSkillsAreStoppedAndReported) {
    const auto started = std::chrono::steady_clock::now();
    Json forever = run("testing/forever");
    EXPECT_EQ(forever["error"]["code"], "SKILL_EXECUTION_FAILED");
    EXPECT_NE(forever["error"]["message"].get<std::string>().find("1500 ms"), std::string::npos) << forever;
    EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);

    Json hog = run("testing/hog");
    EXPECT_EQ(hog["error"]["code"], "SKILL_EXECUTION_FAILED") << hog;

    Json garbage = run("testing/garbage");
    EXPECT_EQ(garbage["error"]["code"], "SKILL_EXECUTION_FAILED");
    EXPECT_NE(garbage["error"]["message"].get<std::string>().find("did not write JSON"), std::string::npos);

    Json flood = run("testing/flood");
    EXPECT_EQ(flood["error"]["code"], "SKILL_EXECUTION_FAILED");
    EXPECT_NE(flood["error"]["message"].get<std::string>().find("more than 65536 bytes"), std::string::npos) << flood;

    Json failing = run("testing/failing");
    EXPECT_EQ(failing["error"]["code"], "SKILL_EXECUTION_FAILED");
    EXPECT_NE(failing["error"]["message"].get<std::string>().find("status 3"), std::string::npos);
    EXPECT_NE(failing["error"]["message"].get<std::string>().find("something broke"), std::string::npos);

    // Still serving.
    EXPECT_EQ(run("backend/sh-echo", {{"ok", true}})["success"], true);
}

TEST_F(ContextExecuteSkill, ChildrenDieWithTheSkillAndNoSecretReachesIt) {
    Json forker = run("testing/forker");
    ASSERT_EQ(forker["success"], true) << forker;
    // The backgrounded subshells were in the skill's process group: killed with it. (By
    // their pids, not by name: another process on the machine may well be sleeping too.)
    ASSERT_EQ(forker["data"]["pids"].size(), 2u) << forker;
    for (const auto& pid : forker["data"]["pids"])
        EXPECT_TRUE(process_ends_within(pid.get<pid_t>(), 2s)) << "pid " << pid;

    Json secret = run("testing/secret");
    ASSERT_EQ(secret["success"], true) << secret;
    EXPECT_EQ(secret["data"]["secret"], "");
    const std::string home = secret["data"]["home"];
    EXPECT_EQ(home, secret["data"]["cwd"].get<std::string>());
    EXPECT_NE(home.find("toolport-skill-"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(home));  // the working directory is removed
}

// A skill may run for minutes: executeSkill supports tasks, and a client that declared the
// tasks extension gets a task whose result is the skill's envelope.
TEST_F(ContextExecuteSkill, ItRunsAsATaskForAClientThatDeclaredTheExtension) {
    const auto& tool = *server->runtime->server().registry().tools().at("executeSkill");
    EXPECT_EQ(tool.execution, (Json{{"taskSupport", "optional"}}));
    auto stateless = server->runtime->server().open_session(
        [this](const Json& m, const protocol::RequestId*) { server->out.push_back(m); }, CallerIdentity{"", "", ""});
    int next = 500;
    auto send = [&](const std::string& method, Json params) {
        params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                           {"io.modelcontextprotocol/clientCapabilities",
                            {{"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}}}};
        const int id = ++next;
        stateless->receive(protocol::Request{id, method, std::move(params)});
        Json answer;
        server->pump([&] {
            for (const auto& m : server->out) {
                if (m.value("id", Json()) == id && !m.contains("method")) answer = m;
            }
            return !answer.is_null();
        });
        return answer.value("result", answer);
    };
    Json created = send("tools/call", {{"name", "executeSkill"},
                                       {"arguments", {{"skillId", "backend/py-sum"}, {"input", {{"values", {4, 5}}}}}}});
    ASSERT_EQ(created.value("resultType", ""), "task") << created.dump();
    Json task;
    for (int i = 0; i < 200; ++i) {
        task = send("tasks/get", {{"taskId", created["taskId"]}});
        if (task.value("status", "") != "working") break;
        std::this_thread::sleep_for(20ms);  // the skill's process runs on a worker thread
    }
    ASSERT_EQ(task.value("status", ""), "completed") << task.dump();
    const Json& envelope = task["result"]["structuredContent"];
    ASSERT_EQ(envelope["success"], true) << task.dump();
    EXPECT_EQ(envelope["data"]["sum"], 9);
    EXPECT_EQ(envelope["metadata"]["runtime"], "python3");
    stateless->close();
}

TEST_F(ContextExecuteSkill, ProgressIsReportedWhileItRunsAndTheClientsCancellationKillsIt) {
    const fs::path pid_file = dir.path() / "sleeper.pid";
    dir.write("library/testing/sleeper.md", "# Sleeper\n");
    dir.write("library/testing/sleeper.sh", "echo $$ > '" + pid_file.string() + "'\nsleep 30\n");
    auto messages_with = [&](const std::string& method) {
        std::vector<Json> found;
        for (const auto& m : server->out) {
            if (m.value("method", "") == method) found.push_back(m);
        }
        return found;
    };
    auto answer_to = [&](int id) -> const Json* {
        for (const auto& m : server->out) {
            if (m.value("id", Json()) == id) return &m;
        }
        return nullptr;
    };

    // Progress about once a second, on the client's token, until the 1.5 s limit stops it.
    server->session->receive(protocol::Request{101, "tools/call",
                                               {{"name", "executeSkill"},
                                                {"arguments", {{"skillId", "testing/sleeper"}, {"input", Json::object()}}},
                                                {"_meta", {{"progressToken", "skill-1"}}}}});
    server->pump([&] { return answer_to(101) != nullptr; });
    ASSERT_NE(answer_to(101), nullptr);
    EXPECT_EQ((*answer_to(101))["result"]["structuredContent"]["error"]["code"], "SKILL_EXECUTION_FAILED");
    const auto progress = messages_with("notifications/progress");
    ASSERT_GE(progress.size(), 1u);
    EXPECT_EQ(progress[0]["params"]["progressToken"], "skill-1");
    EXPECT_GT(progress[0]["params"]["progress"].get<double>(), 0.5);

    // notifications/cancelled for a running skill: its process is killed, and no answer comes.
    fs::remove(pid_file);
    server->session->receive(protocol::Request{102, "tools/call", {{"name", "executeSkill"}, {"arguments", {{"skillId", "testing/sleeper"}, {"input", Json::object()}}}}});
    server->pump([&] { return fs::exists(pid_file) && fs::file_size(pid_file) > 0; });
    const pid_t pid = std::stoi(read_file(pid_file));
    ASSERT_EQ(::kill(pid, 0), 0);
    server->session->receive(protocol::Notification{"notifications/cancelled", {{"requestId", 102}, {"reason", "user stopped it"}}});
    server->pump([&] { return ::kill(pid, 0) != 0; });
    EXPECT_NE(::kill(pid, 0), 0) << "the cancelled skill is still running";
    EXPECT_EQ(answer_to(102), nullptr);
    // Still serving.
    EXPECT_EQ(run("backend/sh-echo", {{"ok", true}})["success"], true);
}

TEST(ContextSkillProcess, CancellationKillsTheProcessGroup) {
    SkillProcessSpec spec;
    spec.argv = {"bash", "-c", "sleep 30 & sleep 30; echo never"};
    spec.timeout = 20s;
    std::atomic<bool> cancel{false};
    std::thread canceller([&] {
        std::this_thread::sleep_for(300ms);
        cancel = true;
    });
    int ticks = 0;
    const auto started = std::chrono::steady_clock::now();
    auto result = run_skill_process(spec, cancel, [&](std::chrono::milliseconds) { ++ticks; });
    canceller.join();
    EXPECT_EQ(result.end, SkillProcessResult::End::cancelled);
    EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
    EXPECT_TRUE(result.out.empty());
}

TEST(ContextSkillProcess, AMissingRuntimeFailsToStartWithAReason) {
    SkillProcessSpec spec;
    spec.argv = {"no-such-runtime-xyz"};
    std::atomic<bool> cancel{false};
    auto result = run_skill_process(spec, cancel, {});
    EXPECT_EQ(result.end, SkillProcessResult::End::failed_to_start);
    EXPECT_NE(result.start_error.find("not installed"), std::string::npos);
}

TEST(ContextSkillMd, TheFirstJsonSchemaBlockIsTheInputSchema) {
    EXPECT_EQ(declared_input_schema(kSchemaSkillMd)->at("required"), Json({"name"}));
    EXPECT_FALSE(declared_input_schema("```json\n[1, 2]\n```\n```json\nnot json\n```"));
    EXPECT_FALSE(declared_input_schema("no blocks"));
}

class ContextPatternReuse : public ::testing::Test {
protected:
    ContextPatternReuse() {
        dir.write("library/database/rls-policy.md", "# RLS\n");
        dir.write("library/database/rls-policy-SKILL.md", "**Quality Score:** 8.5/10\n");
        dir.write("library/database/rls-policy-generator.md", "# RLS generator\n");
        dir.write("library/security/secret-scan.md", "# Scan\n");
        dir.write("Dev/alpha/.agent-artifacts/2025-10-01-a.md", "# A\nUsed database/rls-policy and security/secret-scan.\n");
        dir.write("Dev/alpha/.agent-artifacts/2025-11-01-b/session-summary.md", "# B\nAgain database/rls-policy.\n");
        dir.write("Dev/beta/.agent-artifacts/2025-09-01-c/finalization-pack.json",
                  R"({"summary": "applied database/rls-policy-generator and database/rls-policy"})");
        server = std::make_unique<ContextServer>(Json{{"patterns_root", (dir.path() / "library").string()},
                                                      {"projects_root", (dir.path() / "Dev").string()},
                                                      {"index_file", (dir.path() / "cache/index.sqlite").string()}});
    }
    ScratchDir dir;
    std::unique_ptr<ContextServer> server;
};

TEST_F(ContextPatternReuse, MentionsAreCountedPerProjectInEveryLayout) {
    Json one = server->call("getPatternReuse", {{"patternId", "database/rls-policy"}});
    ASSERT_EQ(one["success"], true) << one;
    EXPECT_EQ(one["data"]["reuseCount"], 2);
    EXPECT_EQ(one["data"]["sessions"], 3);
    EXPECT_EQ(one["data"]["projects"], Json({"alpha", "beta"}));
    EXPECT_EQ(one["data"]["firstUsed"], "2025-09-01");
    EXPECT_EQ(one["data"]["lastUsed"], "2025-11-01");
    EXPECT_EQ(one["data"]["quality"], 8.5);

    Json all = server->call("getPatternReuse");
    std::vector<std::string> ids;
    for (const auto& p : all["data"]) ids.push_back(p["patternId"]);
    EXPECT_EQ(ids, (std::vector<std::string>{"database/rls-policy", "database/rls-policy-generator", "security/secret-scan"}));
    Json recent = server->call("getPatternReuse", {{"sortBy", "recent"}});
    EXPECT_EQ(recent["data"][0]["patternId"], "database/rls-policy");
    EXPECT_EQ(recent["data"][1]["patternId"], "security/secret-scan");
    EXPECT_EQ(server->call("getPatternReuse", {{"minReuseCount", 2}})["data"].size(), 1u);
    Json by_category = server->call("getPatternReuse", {{"sortBy", "category"}});
    EXPECT_EQ(by_category["data"][2]["patternId"], "security/secret-scan");

    EXPECT_EQ(server->call("getPatternReuse", {{"patternId", "database/none"}})["error"]["code"], "PATTERN_NOT_FOUND");
    EXPECT_EQ(server->call("getPatternReuse", {{"sortBy", "size"}})["error"]["code"], "VALIDATION_ERROR");
}

}  // namespace
