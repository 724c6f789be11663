// Tool calls as tasks (server/tasks.hpp): a session fed parsed messages in the stateless
// revision, tasks recorded in the in-memory store, time controlled by ManualExecutor.
#include <gtest/gtest.h>

#include "manual_executor.hpp"
#include "server/session.hpp"
#include "server/tasks.hpp"
#include "server/tool_error.hpp"
#include "stores/memory_task_store.hpp"

using namespace toolport;
using namespace std::chrono_literals;
using protocol::Json;
using test_support::ManualExecutor;

namespace {

class TasksTest : public ::testing::Test {
protected:
    TasksTest() {
        ServerOptions options;
        options.task_ttl = 60s;
        options.task_poll_interval = 250ms;
        server = std::make_unique<McpServer>(exec, options);
        engine = std::make_shared<TaskEngine>(*server, store);
        engine->install();
        server->set_tasks(engine);
        session = open();
    }

    std::shared_ptr<ServerSession> open(CallerIdentity caller = {}) {
        return server->open_session(
            [this](const Json& m, const protocol::RequestId*) { out.push_back(m); }, std::move(caller));
    }

    void add_tool(const std::string& name, const char* support, ToolHandler handler, Json meta = nullptr) {
        ToolSpec t;
        t.name = name;
        t.description = "test tool " + name;
        t.handler = std::move(handler);
        if (support) t.execution = Json{{"taskSupport", support}};
        t.meta = std::move(meta);
        server->registry().add_tool(std::move(t));
    }

    static Json with_tasks() { return Json{{"extensions", {{kTasksExtension, Json::object()}}}}; }

    // A stateless request from `to` (default: the test's session) declaring `caps`; its reply.
    Json call(const std::string& method, Json params, Json caps = with_tasks(), ServerSession* to = nullptr) {
        params["_meta"] = Json{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                               {"io.modelcontextprotocol/clientCapabilities", std::move(caps)}};
        const Json id = next_id++;
        (to ? *to : *session).receive(protocol::Request{id, method, std::move(params)});
        exec.run();
        for (const auto& m : out) {
            if (!m.contains("method") && m.contains("id") && m["id"] == id) return m;
        }
        return nullptr;
    }

    Json start(const std::string& tool, Json arguments = Json::object()) {
        auto r = call("tools/call", {{"name", tool}, {"arguments", std::move(arguments)}});
        EXPECT_EQ(r["result"].value("resultType", ""), "task") << r.dump();
        return r["result"];
    }

    Json get(const std::string& id) { return call("tasks/get", {{"taskId", id}}); }

    ManualExecutor exec;
    stores::MemoryTaskStore store{exec};
    std::unique_ptr<McpServer> server;
    std::shared_ptr<TaskEngine> engine;
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
    int next_id = 1;
};

Task<ToolResult> sleep_then_answer(RequestContext& ctx, const Json&) {
    co_await ctx.sleep(5s);
    co_return ToolResult::text("done");
}

TEST_F(TasksTest, TaskSupportingToolAnswersCreateTaskResultThenCompletes) {
    add_tool("slow", "optional", sleep_then_answer);
    Json created = start("slow");
    const std::string id = created["taskId"];
    EXPECT_EQ(id.size(), 32u);  // 128 random bits, hex
    EXPECT_EQ(created["status"], "working");
    EXPECT_EQ(created["ttlMs"], 60000);
    EXPECT_EQ(created["pollIntervalMs"], 250);
    EXPECT_TRUE(created["createdAt"].is_string());
    EXPECT_FALSE(created.contains("task"));
    EXPECT_FALSE(created.contains("result"));

    Json working = get(id)["result"];
    EXPECT_EQ(working["status"], "working");
    EXPECT_EQ(working["resultType"], "complete");
    EXPECT_FALSE(working.contains("result"));

    exec.advance(5s);
    Json done = get(id)["result"];
    EXPECT_EQ(done["status"], "completed");
    EXPECT_EQ(done["result"]["content"][0]["text"], "done");
    EXPECT_EQ(engine->running(), 0u);
}

TEST_F(TasksTest, WithoutTheExtensionOptionalToolsRunInTheRequestAndRequiredOnesAreRefused) {
    add_tool("slow", "optional", sleep_then_answer);
    add_tool("must", "required", sleep_then_answer);
    add_tool("plain", nullptr, sleep_then_answer);
    const Json id = next_id;
    call("tools/call", {{"name", "slow"}, {"arguments", Json::object()}}, Json::object());
    exec.advance(5s);
    Json sync;
    for (const auto& m : out) {
        if (m.contains("id") && m["id"] == id) sync = m;
    }
    EXPECT_EQ(sync["result"]["content"][0]["text"], "done") << sync.dump();
    EXPECT_FALSE(sync["result"].contains("taskId"));

    Json refused = call("tools/call", {{"name", "must"}, {"arguments", Json::object()}}, Json::object());
    EXPECT_EQ(refused["error"]["code"], -32021);
    EXPECT_TRUE(refused["error"]["data"]["requiredCapabilities"]["extensions"].contains(kTasksExtension));

    // A tool without task support is never a task, even for a client that supports them.
    const Json plain_id = next_id;
    call("tools/call", {{"name", "plain"}, {"arguments", Json::object()}});
    exec.advance(5s);
    for (const auto& m : out) {
        if (m.contains("id") && m["id"] == plain_id) EXPECT_FALSE(m["result"].contains("taskId")) << m.dump();
    }
}

TEST_F(TasksTest, TaskMethodsNeedTheExtensionAndAKnownTaskId) {
    for (const char* method : {"tasks/get", "tasks/cancel"}) {
        EXPECT_EQ(call(method, {{"taskId", "x"}}, Json::object())["error"]["code"], -32021) << method;
        EXPECT_EQ(call(method, {{"taskId", "nope"}})["error"]["code"], -32602) << method;
    }
    EXPECT_EQ(call("tasks/update", {{"taskId", "x"}, {"inputResponses", Json::object()}}, Json::object())["error"]["code"],
              -32021);
    // The v1 methods are not part of the extension.
    EXPECT_EQ(call("tasks/result", {{"taskId", "x"}})["error"]["code"], -32601);
    EXPECT_EQ(call("tasks/list", Json::object())["error"]["code"], -32601);
}

TEST_F(TasksTest, ToolErrorsCompleteAndProtocolErrorsFail) {
    add_tool("tool_error", "optional", [](RequestContext&, const Json&) -> Task<ToolResult> {
        throw ToolError(ToolErrorCode::upstream_error, "it broke");
        co_return ToolResult::text("x");
    });
    add_tool("protocol_error", "optional", [](RequestContext&, const Json&) -> Task<ToolResult> {
        throw RpcError(-32603, "Internal error: broke down", Json{{"why", "test"}});
        co_return ToolResult::text("x");
    });
    Json completed = get(start("tool_error")["taskId"])["result"];
    EXPECT_EQ(completed["status"], "completed");
    EXPECT_EQ(completed["result"]["isError"], true);

    Json failed = get(start("protocol_error")["taskId"])["result"];
    EXPECT_EQ(failed["status"], "failed");
    EXPECT_EQ(failed["error"]["code"], -32603);
    EXPECT_EQ(failed["error"]["data"]["why"], "test");
    EXPECT_FALSE(failed.contains("result"));
}

TEST_F(TasksTest, CancelStopsTheRunningCallAndIsIdempotent) {
    bool finished = false;
    add_tool("slow", "optional", [&finished](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(60s);
        finished = true;
        co_return ToolResult::text("done");
    });
    const std::string id = start("slow")["taskId"];
    Json ack = call("tasks/cancel", {{"taskId", id}})["result"];
    EXPECT_EQ(ack["resultType"], "complete");
    EXPECT_FALSE(ack.contains("taskId"));
    EXPECT_FALSE(ack.contains("status"));
    exec.run();
    EXPECT_EQ(get(id)["result"]["status"], "cancelled");
    EXPECT_FALSE(finished);
    EXPECT_EQ(engine->running(), 0u);
    // Again, on a terminal task: the same acknowledgement.
    EXPECT_EQ(call("tasks/cancel", {{"taskId", id}})["result"]["resultType"], "complete");
    exec.advance(30s);  // (within the 60 s TTL)
    EXPECT_EQ(get(id)["result"]["status"], "cancelled");
    exec.advance(31s);  // past it: gone
    EXPECT_EQ(get(id)["error"]["code"], -32602);
}

TEST_F(TasksTest, QuestionsParkTheTaskUntilEveryAnswerArrives) {
    int runs = 0;
    add_tool("ask_two", "optional", [&runs](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        ++runs;
        std::vector<ClientRequest> qs;
        qs.push_back({"elicitation/create", Json{{"message", "a?"}}, "a"});
        qs.push_back({"elicitation/create", Json{{"message", "b?"}}, "b"});
        auto answers = co_await ctx.ask_client_all(std::move(qs));
        co_return ToolResult::text(answers[0]["content"].value("v", "") + answers[1]["content"].value("v", ""));
    });
    Json caps = with_tasks();
    caps["elicitation"] = Json::object();
    auto r = call("tools/call", {{"name", "ask_two"}, {"arguments", Json::object()}}, caps);
    const std::string id = r["result"]["taskId"];
    Json parked = call("tasks/get", {{"taskId", id}}, caps)["result"];
    EXPECT_EQ(parked["status"], "input_required");
    ASSERT_TRUE(parked["inputRequests"].contains("a"));
    EXPECT_EQ(parked["inputRequests"]["b"]["method"], "elicitation/create");

    auto answer = [](const char* v) { return Json{{"action", "accept"}, {"content", {{"v", v}}}}; };
    Json ack = call("tasks/update", {{"taskId", id}, {"inputResponses", {{"a", answer("1")}, {"zzz", answer("?")}}}},
                    caps)["result"];
    EXPECT_EQ(ack["resultType"], "complete");
    EXPECT_FALSE(ack.contains("status"));
    EXPECT_FALSE(ack.contains("inputRequests"));
    Json partial = call("tasks/get", {{"taskId", id}}, caps)["result"];
    EXPECT_EQ(partial["status"], "input_required");
    EXPECT_FALSE(partial["inputRequests"].contains("a"));
    EXPECT_TRUE(partial["inputRequests"].contains("b"));
    EXPECT_EQ(runs, 1);

    call("tasks/update", {{"taskId", id}, {"inputResponses", {{"b", answer("2")}}}}, caps);
    Json done = call("tasks/get", {{"taskId", id}}, caps)["result"];
    EXPECT_EQ(done["status"], "completed") << done.dump();
    EXPECT_EQ(done["result"]["content"][0]["text"], "12");
    EXPECT_EQ(runs, 2);  // replayed once, with both answers
}

TEST_F(TasksTest, AnUnansweredTaskIsForgottenWhenItExpires) {
    add_tool("ask", "optional", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.ask_client({"elicitation/create", Json{{"message", "?"}}, "q"});
        co_return ToolResult::text("answered");
    });
    Json caps = with_tasks();
    caps["elicitation"] = Json::object();
    const std::string id = call("tools/call", {{"name", "ask"}, {"arguments", Json::object()}}, caps)["result"]["taskId"];
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, caps)["result"]["status"], "input_required");
    EXPECT_EQ(engine->running(), 1u);
    exec.advance(60s);
    EXPECT_EQ(engine->running(), 0u);
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, caps)["error"]["code"], -32602);
}

TEST_F(TasksTest, ATaskIsVisibleOnlyToItsOwner) {
    add_tool("slow", "optional", sleep_then_answer);
    auto alice = open(CallerIdentity{.principal = "alice-token"});
    auto bob = open(CallerIdentity{.principal = "bob-token"});
    Json created = call("tools/call", {{"name", "slow"}, {"arguments", Json::object()}}, with_tasks(), alice.get());
    const std::string id = created["result"]["taskId"];
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, with_tasks(), alice.get())["result"]["status"], "working");
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, with_tasks(), bob.get())["error"]["code"], -32602);
    EXPECT_EQ(call("tasks/cancel", {{"taskId", id}}, with_tasks(), bob.get())["error"]["code"], -32602);
    // Nor to an unauthenticated caller.
    EXPECT_EQ(call("tasks/get", {{"taskId", id}})["error"]["code"], -32602);
    exec.advance(5s);
    EXPECT_EQ(engine->running(), 0u);
}

TEST_F(TasksTest, AToolThatAsksFirstBecomesATaskOnceAnswered) {
    add_tool(
        "ask_first", "required",
        [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
            Json a = co_await ctx.ask_client({"elicitation/create", Json{{"message", "name?"}}, "user_name"});
            co_return ToolResult::text("Hello, " + a["content"].value("name", "") + "!");
        },
        Json{{kInputBeforeTaskMeta, true}});
    Json caps = with_tasks();
    caps["elicitation"] = Json::object();
    Json round1 = call("tools/call", {{"name", "ask_first"}, {"arguments", Json::object()}}, caps)["result"];
    EXPECT_EQ(round1["resultType"], "input_required");
    EXPECT_FALSE(round1.contains("taskId"));
    Json round2 = call("tools/call",
                       {{"name", "ask_first"},
                        {"arguments", Json::object()},
                        {"inputResponses", {{"user_name", {{"action", "accept"}, {"content", {{"name", "Alice"}}}}}}},
                        {"requestState", round1["requestState"]}},
                       caps)["result"];
    EXPECT_EQ(round2["resultType"], "task");
    EXPECT_FALSE(round2.contains("requestState"));
    Json done = call("tasks/get", {{"taskId", round2["taskId"]}}, caps)["result"];
    EXPECT_EQ(done["result"]["content"][0]["text"], "Hello, Alice!");
}

}  // namespace
