// Tool calls as tasks (server/tasks.hpp): a session fed parsed messages in the stateless
// revision (the 2026-07-28 extension) or over a 2025-11-25 session (the v1 task model),
// tasks recorded in the in-memory store, time controlled by ManualExecutor.
#include <gtest/gtest.h>

#include <set>

#include "manual_executor.hpp"
#include "server/session.hpp"
#include "server/tasks.hpp"
#include "server/tool_error.hpp"
#include "stores/memory_task_store.hpp"
#include "util/json.hpp"

using namespace toolport;
using namespace std::chrono_literals;
using test_support::ManualExecutor;

namespace {

class TasksTest : public ::testing::Test {
protected:
    // The machinery's tests make every call of a task tool a task at once (threshold 0);
    // TasksThresholdTest below has the default's answer-inline-first behaviour.
    TasksTest() { build(0ms); }

    void build(std::chrono::milliseconds threshold) {
        out.clear();
        related_to.clear();
        session.reset();
        if (engine) engine->shutdown();
        engine.reset();
        server.reset();
        ServerOptions options;
        options.task_ttl = 60s;
        options.task_poll_interval = 250ms;
        options.task_threshold = threshold;
        options.page_size = 2;  // (tasks/list pages)
        server = std::make_unique<McpServer>(exec, options);
        engine = std::make_shared<TaskEngine>(*server, store);
        engine->install();
        server->set_tasks(engine);
        session = open();
    }

    std::shared_ptr<ServerSession> open(CallerIdentity caller = {}) {
        return server->open_session(
            [this](const Json& m, const protocol::RequestId* related) {
                out.push_back(m);
                related_to.push_back(related ? Json(*related) : Json());
            },
            std::move(caller));
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
    // A session of revision `version` (2025-11-25: the v1 task model), initialized with `caps`.
    std::shared_ptr<ServerSession> session_of(const std::string& version, Json caps = Json::object(),
                                              CallerIdentity caller = {}) {
        auto s = open(std::move(caller));
        Json r = on(*s, "initialize",
                    {{"protocolVersion", version},
                     {"capabilities", std::move(caps)},
                     {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
        EXPECT_TRUE(r.contains("result")) << r.dump();
        s->receive(protocol::Notification{"notifications/initialized", nullptr});
        exec.run();
        return s;
    }

    // A request over `s` in its session's revision (no stateless _meta); its reply, or null
    // while it has none (reply_to() finds it later).
    Json on(ServerSession& s, const std::string& method, Json params) {
        last_id = next_id++;
        s.receive(protocol::Request{last_id, method, std::move(params)});
        exec.run();
        return reply_to(last_id);
    }

    Json reply_to(const Json& id) const {
        for (const auto& m : out) {
            if (!m.contains("method") && m.contains("id") && m["id"] == id) return m;
        }
        return nullptr;
    }

    // The notifications/tasks/status sent so far, for task `id`.
    std::vector<Json> statuses(const std::string& id) const {
        std::vector<Json> found;
        for (const auto& m : out) {
            if (m.value("method", "") == "notifications/tasks/status" && m["params"].value("taskId", "") == id) {
                found.push_back(m["params"]);
            }
        }
        return found;
    }

    // The requests the server sent to the client, with the id of the request each belongs to.
    std::vector<std::pair<Json, Json>> server_requests() const {
        std::vector<std::pair<Json, Json>> found;
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (out[i].contains("method") && out[i].contains("id")) found.emplace_back(out[i], related_to[i]);
        }
        return found;
    }

    // Another server with its own engine on `on` (the same store, or a view of it): a replica.
    struct Replica {
        std::unique_ptr<McpServer> server;
        std::shared_ptr<TaskEngine> engine;
    };
    Replica replica_on(TaskStore& on) {
        ServerOptions options;
        options.task_ttl = 60s;
        options.task_poll_interval = 250ms;
        options.task_threshold = 0ms;
        Replica r{std::make_unique<McpServer>(exec, options), nullptr};
        r.engine = std::make_shared<TaskEngine>(*r.server, on);
        r.engine->install();
        r.server->set_tasks(r.engine);
        return r;
    }
    // A session on `server` whose messages land in `out`, as the test's own do.
    std::shared_ptr<ServerSession> open_on(McpServer& server, CallerIdentity caller) {
        return server.open_session(
            [this](const Json& m, const protocol::RequestId* related) {
                out.push_back(m);
                related_to.push_back(related ? Json(*related) : Json());
            },
            std::move(caller));
    }

    std::vector<Json> out;
    std::vector<Json> related_to;  // per message in `out`: the request it belongs to, or null
    int next_id = 1;
    Json last_id;
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
    EXPECT_EQ(call("tasks/update", {{"taskId", "x"}, {"inputResponses", Json::object()}},
                   Json::object())["error"]["code"],
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
    // The audit log hears of the protocol error (the tool error is the pipeline's to record).
    std::vector<std::string> served;
    server->set_served_listener([&served](const RequestContext& ctx, auto, auto, std::exception_ptr error) {
        try {
            if (error) std::rethrow_exception(error);
            served.push_back(ctx.method() + " ok");
        } catch (const RpcError& e) {
            served.push_back(ctx.method() + " " + std::to_string(e.code));
        } catch (...) {
            served.push_back(ctx.method() + " other");
        }
    });
    Json completed = get(start("tool_error")["taskId"])["result"];
    EXPECT_EQ(completed["status"], "completed");
    EXPECT_EQ(completed["result"]["isError"], true);

    Json failed = get(start("protocol_error")["taskId"])["result"];
    EXPECT_EQ(failed["status"], "failed");
    EXPECT_EQ(failed["error"]["code"], -32603);
    EXPECT_EQ(failed["error"]["data"]["why"], "test");
    EXPECT_FALSE(failed.contains("result"));
    EXPECT_EQ(served, (std::vector<std::string>{"tools/call -32603"}));
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

// A tool that asks two questions at once and answers with both answers; counts its runs.
ToolHandler asks_two(int& runs) {
    return [&runs](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        ++runs;
        std::vector<ClientRequest> qs;
        qs.push_back({"elicitation/create", Json{{"message", "a?"}}, "a"});
        qs.push_back({"elicitation/create", Json{{"message", "b?"}}, "b"});
        auto answers = co_await ctx.ask_client_all(std::move(qs));
        co_return ToolResult::text(answers[0]["content"].value("v", "") + answers[1]["content"].value("v", ""));
    };
}

TEST_F(TasksTest, QuestionsParkTheTaskUntilEveryAnswerArrives) {
    int runs = 0;
    add_tool("ask_two", "optional", asks_two(runs));
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
    const std::string id = call("tools/call", {{"name", "ask"}, {"arguments", Json::object()}},
                                caps)["result"]["taskId"];
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

// ---- The task model of 2025-11-25 (v1) ----

Json v1_call(const std::string& tool, Json task = Json::object(), Json arguments = Json::object()) {
    Json params = {{"name", tool}, {"arguments", std::move(arguments)}};
    if (!task.is_null()) params["task"] = std::move(task);
    return params;
}

TEST_F(TasksTest, V1InitializeAdvertisesTasksOnlyTo20251125Sessions) {
    add_tool("slow", "optional", sleep_then_answer);
    Json hello = on(*open(), "initialize",
                    {{"protocolVersion", "2025-11-25"},
                     {"capabilities", Json::object()},
                     {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    EXPECT_EQ(hello["result"]["capabilities"]["tasks"], (Json{{"list", Json::object()},
                                                              {"cancel", Json::object()},
                                                              {"requests", {{"tools", {{"call", Json::object()}}}}}}))
        << hello.dump();
    // The extension stays advertised beside it.
    EXPECT_TRUE(hello["result"]["capabilities"]["extensions"].contains(kTasksExtension));

    for (const char* older : {"2024-11-05", "2025-03-26", "2025-06-18"}) {
        Json old_hello = on(*open(), "initialize",
                            {{"protocolVersion", older},
                             {"capabilities", Json::object()},
                             {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
        EXPECT_EQ(old_hello["result"]["protocolVersion"], older);
        EXPECT_FALSE(old_hello["result"]["capabilities"].contains("tasks")) << older;
    }
    // tools/list: execution.taskSupport from 2025-11-25 on, absent before.
    auto v1 = session_of("2025-11-25");
    EXPECT_EQ(on(*v1, "tools/list", Json::object())["result"]["tools"][0]["execution"]["taskSupport"], "optional");
    auto old = session_of("2025-06-18");
    EXPECT_FALSE(on(*old, "tools/list", Json::object())["result"]["tools"][0].contains("execution"));

    // Without a task engine there is no tasks capability.
    ServerOptions options;
    McpServer bare(exec, options);
    auto plain = bare.open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); }, {});
    Json bare_hello = on(*plain, "initialize",
                         {{"protocolVersion", "2025-11-25"},
                          {"capabilities", Json::object()},
                          {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    EXPECT_FALSE(bare_hello["result"]["capabilities"].contains("tasks")) << bare_hello.dump();
    plain->close();
}

TEST_F(TasksTest, V1TaskAugmentedCallAnswersTheTaskAndTasksResultWaitsForTheOutcome) {
    add_tool("slow", "optional", sleep_then_answer);
    auto s = session_of("2025-11-25");
    Json created = on(*s, "tools/call", v1_call("slow", {{"ttl", 30000}}))["result"];
    ASSERT_TRUE(created.contains("task")) << created.dump();
    EXPECT_FALSE(created.contains("resultType"));
    EXPECT_FALSE(created.contains("taskId"));
    const Json task = created["task"];
    const std::string id = task["taskId"];
    EXPECT_EQ(id.size(), 32u);
    EXPECT_EQ(task["status"], "working");
    EXPECT_EQ(task["ttl"], 30000);
    EXPECT_EQ(task["pollInterval"], 250);
    EXPECT_FALSE(task.contains("ttlMs"));
    EXPECT_FALSE(task.contains("pollIntervalMs"));
    ASSERT_TRUE(task["createdAt"].is_string());
    EXPECT_TRUE(task["createdAt"].get<std::string>().ends_with("Z"));
    EXPECT_TRUE(task["lastUpdatedAt"].is_string());

    // tasks/get: the Task, flat.
    Json got = on(*s, "tasks/get", {{"taskId", id}})["result"];
    EXPECT_EQ(got["taskId"], id);
    EXPECT_EQ(got["status"], "working");
    EXPECT_EQ(got["ttl"], 30000);
    EXPECT_FALSE(got.contains("task"));
    EXPECT_FALSE(got.contains("resultType"));
    EXPECT_FALSE(got.contains("result"));

    // tasks/result blocks while the task works...
    Json early = on(*s, "tasks/result", {{"taskId", id}});
    const Json result_id = last_id;
    EXPECT_TRUE(early.is_null()) << early.dump();
    EXPECT_EQ(engine->waiting(), 1u);
    exec.advance(4s);
    EXPECT_TRUE(reply_to(result_id).is_null());
    // ...and answers as the call completes (woken by it, not by a timer: its fallback
    // re-read is at the record's expiry, 30 s away).
    exec.advance(1s);
    Json answered = reply_to(result_id);
    ASSERT_TRUE(answered.contains("result")) << answered.dump();
    EXPECT_EQ(answered["result"]["content"][0]["text"], "done");
    EXPECT_EQ(answered["result"]["_meta"][kRelatedTaskMeta], (Json{{"taskId", id}}));
    EXPECT_EQ(engine->waiting(), 0u);
    EXPECT_EQ(engine->running(), 0u);

    // Terminal: answered at once, the same again.
    EXPECT_EQ(on(*s, "tasks/result", {{"taskId", id}})["result"], answered["result"]);
    // tasks/get carries no related-task meta, the status notification is the full Task.
    EXPECT_FALSE(on(*s, "tasks/get", {{"taskId", id}})["result"].contains("_meta"));
    auto told = statuses(id);
    ASSERT_EQ(told.size(), 1u);
    EXPECT_EQ(told[0]["status"], "completed");
    EXPECT_EQ(told[0]["ttl"], 30000);
    EXPECT_EQ(told[0]["createdAt"], task["createdAt"]);
    EXPECT_FALSE(told[0].contains("_meta"));

    // The ttl: the server's at most (60 s here), its own when none is asked for, a second at least.
    EXPECT_EQ(on(*s, "tools/call", v1_call("slow", {{"ttl", 10000000}}))["result"]["task"]["ttl"], 60000);
    EXPECT_EQ(on(*s, "tools/call", v1_call("slow"))["result"]["task"]["ttl"], 60000);
    EXPECT_EQ(on(*s, "tools/call", v1_call("slow", {{"ttl", 5}}))["result"]["task"]["ttl"], 1000);
    EXPECT_EQ(on(*s, "tools/call", v1_call("slow", {{"ttl", "soon"}}))["error"]["code"], -32602);
    EXPECT_EQ(on(*s, "tools/call", v1_call("slow", "now"))["error"]["code"], -32602);
    exec.advance(5s);
    s->close();
}

TEST_F(TasksTest, V1TaskSupportDecidesWhichCallsMayOrMustBeTasks) {
    add_tool("slow", "optional", sleep_then_answer);
    add_tool("must", "required", sleep_then_answer);
    add_tool("plain", nullptr, sleep_then_answer);
    add_tool("never", "forbidden", sleep_then_answer);
    auto s = session_of("2025-11-25");
    for (const char* tool : {"plain", "never"}) {
        Json refused = on(*s, "tools/call", v1_call(tool));
        EXPECT_EQ(refused["error"]["code"], -32601) << tool << refused.dump();
    }
    Json required = on(*s, "tools/call", v1_call("must", nullptr));
    EXPECT_EQ(required["error"]["code"], -32601);
    EXPECT_NE(required["error"]["message"].get<std::string>().find("must be called as a task"), std::string::npos)
        << required.dump();
    EXPECT_EQ(engine->running(), 0u);

    // Without params.task an optional tool runs in its request; with it, a required one is a task.
    on(*s, "tools/call", v1_call("slow", nullptr));
    const Json sync_id = last_id;
    EXPECT_EQ(engine->running(), 0u);
    exec.advance(5s);
    EXPECT_EQ(reply_to(sync_id)["result"]["content"][0]["text"], "done");
    EXPECT_EQ(on(*s, "tools/call", v1_call("must"))["result"]["task"]["status"], "working");

    // Before 2025-11-25 there are no tasks: params.task is ignored and the call runs.
    auto old = session_of("2025-06-18");
    on(*old, "tools/call", v1_call("slow"));
    const Json old_id = last_id;
    on(*old, "tools/call", v1_call("plain"));
    const Json old_plain = last_id;
    exec.advance(5s);
    EXPECT_EQ(reply_to(old_id)["result"]["content"][0]["text"], "done") << reply_to(old_id).dump();
    EXPECT_FALSE(reply_to(old_id)["result"].contains("task"));
    EXPECT_EQ(reply_to(old_plain)["result"]["content"][0]["text"], "done");
    // There, as in 2026-07-28 without the extension, the task methods are not served.
    EXPECT_EQ(on(*old, "tasks/list", Json::object())["error"]["code"], -32601);
    EXPECT_EQ(on(*old, "tasks/result", {{"taskId", "x"}})["error"]["code"], -32601);
    EXPECT_EQ(on(*old, "tasks/get", {{"taskId", "x"}})["error"]["code"], -32021);
}

TEST_F(TasksTest, V1IsErrorFailsTheTaskWhereTheExtensionCompletesIt) {
    add_tool("tool_error", "optional", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(1s);
        throw ToolError(ToolErrorCode::upstream_error, "it broke");
    });
    add_tool("protocol_error", "optional", [](RequestContext&, const Json&) -> Task<ToolResult> {
        throw RpcError(-32603, "Internal error: broke down", Json{{"why", "test"}});
        co_return ToolResult::text("x");
    });
    auto s = session_of("2025-11-25");
    const std::string v1_id = on(*s, "tools/call", v1_call("tool_error"))["result"]["task"]["taskId"];
    const std::string ext_id = start("tool_error")["taskId"];
    exec.advance(1s);
    Json failed = on(*s, "tasks/get", {{"taskId", v1_id}})["result"];
    EXPECT_EQ(failed["status"], "failed");
    EXPECT_NE(failed["statusMessage"].get<std::string>().find("it broke"), std::string::npos) << failed.dump();
    Json outcome = on(*s, "tasks/result", {{"taskId", v1_id}})["result"];
    EXPECT_EQ(outcome["isError"], true);  // what the tools/call would have answered
    EXPECT_EQ(outcome["_meta"][kRelatedTaskMeta]["taskId"], v1_id);
    EXPECT_EQ(statuses(v1_id).back()["status"], "failed");
    // The extension's task of the same tool: completed, isError inside.
    Json completed = get(ext_id)["result"];
    EXPECT_EQ(completed["status"], "completed");
    EXPECT_EQ(completed["result"]["isError"], true);
    EXPECT_TRUE(statuses(ext_id).empty());  // no v1 notifications for the extension

    // A protocol error: tasks/result answers that JSON-RPC error.
    const std::string broken = on(*s, "tools/call", v1_call("protocol_error"))["result"]["task"]["taskId"];
    Json error = on(*s, "tasks/result", {{"taskId", broken}});
    EXPECT_EQ(error["error"]["code"], -32603) << error.dump();
    EXPECT_EQ(error["error"]["message"], "Internal error: broke down");
    EXPECT_EQ(error["error"]["data"]["why"], "test");
    Json broken_task = on(*s, "tasks/get", {{"taskId", broken}})["result"];
    EXPECT_EQ(broken_task["status"], "failed");
    EXPECT_EQ(broken_task["statusMessage"], "Internal error: broke down");
}

TEST_F(TasksTest, V1ListGivesTheOwnersTasksPageByPage) {
    add_tool("slow", "optional", sleep_then_answer);
    auto a = session_of("2025-11-25", Json::object(), CallerIdentity{.session_id = "a"});
    auto b = session_of("2025-11-25", Json::object(), CallerIdentity{.session_id = "b"});
    std::set<std::string> mine;
    for (int i = 0; i < 3; ++i)
        mine.insert(on(*a, "tools/call", v1_call("slow"))["result"]["task"]["taskId"].get<std::string>());
    const std::string theirs = on(*b, "tools/call", v1_call("slow"))["result"]["task"]["taskId"];

    Json first = on(*a, "tasks/list", Json::object())["result"];
    ASSERT_EQ(first["tasks"].size(), 2u) << first.dump();  // page_size 2
    ASSERT_TRUE(first["nextCursor"].is_string());
    Json second = on(*a, "tasks/list", {{"cursor", first["nextCursor"]}})["result"];
    ASSERT_EQ(second["tasks"].size(), 1u) << second.dump();
    EXPECT_FALSE(second.contains("nextCursor"));
    std::set<std::string> listed;
    for (const auto& page : {first, second}) {
        for (const auto& t : page["tasks"]) {
            listed.insert(t["taskId"].get<std::string>());
            EXPECT_EQ(t["status"], "working");
            EXPECT_TRUE(t.contains("createdAt") && t.contains("lastUpdatedAt") && t.contains("ttl")) << t.dump();
        }
    }
    EXPECT_EQ(listed, mine);
    Json other = on(*b, "tasks/list", Json::object())["result"];
    ASSERT_EQ(other["tasks"].size(), 1u);
    EXPECT_EQ(other["tasks"][0]["taskId"], theirs);

    // Statuses are current; cursors no list handed out are refused.
    exec.advance(5s);
    EXPECT_EQ(on(*b, "tasks/list", Json::object())["result"]["tasks"][0]["status"], "completed");
    EXPECT_EQ(on(*a, "tasks/list", {{"cursor", "not-a-cursor"}})["error"]["code"], -32602);
    EXPECT_EQ(on(*a, "tasks/list", {{"cursor", 7}})["error"]["code"], -32602);
    // Another owner's task is not there for tasks/get or tasks/result either.
    EXPECT_EQ(on(*a, "tasks/get", {{"taskId", theirs}})["error"]["code"], -32602);
    EXPECT_EQ(on(*a, "tasks/result", {{"taskId", theirs}})["error"]["code"], -32602);
}

TEST_F(TasksTest, V1CancelAnswersTheCancelledTaskAndRefusesTerminalOnes) {
    bool finished = false;
    add_tool("slow", "optional", [&finished](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(60s);
        finished = true;
        co_return ToolResult::text("done");
    });
    add_tool("quick", "optional",
             [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("quick"); });
    auto s = session_of("2025-11-25");
    const std::string id = on(*s, "tools/call", v1_call("slow"))["result"]["task"]["taskId"];
    on(*s, "tasks/result", {{"taskId", id}});
    const Json waiting_result = last_id;
    Json cancelled = on(*s, "tasks/cancel", {{"taskId", id}});
    ASSERT_TRUE(cancelled.contains("result")) << cancelled.dump();
    EXPECT_EQ(cancelled["result"]["taskId"], id);
    EXPECT_EQ(cancelled["result"]["status"], "cancelled");
    EXPECT_TRUE(cancelled["result"]["statusMessage"].is_string());
    EXPECT_FALSE(cancelled["result"].contains("resultType"));
    exec.run();
    EXPECT_FALSE(finished);
    EXPECT_EQ(engine->running(), 0u);
    EXPECT_EQ(on(*s, "tasks/get", {{"taskId", id}})["result"]["status"], "cancelled");
    EXPECT_EQ(statuses(id).back()["status"], "cancelled");
    // The waiting tasks/result ends with the cancellation, as the request would have.
    EXPECT_EQ(reply_to(waiting_result)["error"]["code"], -32800) << reply_to(waiting_result).dump();

    // Again: refused, the task being terminal; so is a completed one, and an unknown id.
    EXPECT_EQ(on(*s, "tasks/cancel", {{"taskId", id}})["error"]["code"], -32602);
    const std::string done = on(*s, "tools/call", v1_call("quick"))["result"]["task"]["taskId"];
    EXPECT_EQ(on(*s, "tasks/get", {{"taskId", done}})["result"]["status"], "completed");
    Json refused = on(*s, "tasks/cancel", {{"taskId", done}});
    EXPECT_EQ(refused["error"]["code"], -32602);
    EXPECT_NE(refused["error"]["message"].get<std::string>().find("completed"), std::string::npos);
    EXPECT_EQ(on(*s, "tasks/cancel", {{"taskId", "nope"}})["error"]["code"], -32602);
    EXPECT_EQ(on(*s, "tasks/get", {{"taskId", "nope"}})["error"]["code"], -32602);
    EXPECT_EQ(on(*s, "tasks/result", {{"taskId", "nope"}})["error"]["code"], -32602);
    EXPECT_EQ(on(*s, "tasks/result", Json::object())["error"]["code"], -32602);
}

TEST_F(TasksTest, V1TasksResultAsksTheClientOnItsOwnStreamAndFeedsTheAnswersIn) {
    int runs = 0;
    add_tool("ask_two", "optional", asks_two(runs));
    auto s = session_of("2025-11-25", Json{{"elicitation", Json::object()}});
    const std::string id = on(*s, "tools/call", v1_call("ask_two"))["result"]["task"]["taskId"];
    exec.run();
    Json parked = on(*s, "tasks/get", {{"taskId", id}})["result"];
    EXPECT_EQ(parked["status"], "input_required");
    EXPECT_FALSE(parked.contains("inputRequests"));  // (the extension's field)
    EXPECT_EQ(statuses(id).back()["status"], "input_required");
    EXPECT_TRUE(server_requests().empty());  // nothing is asked before a tasks/result

    on(*s, "tasks/result", {{"taskId", id}});
    const Json result_id = last_id;
    auto asked = server_requests();
    ASSERT_EQ(asked.size(), 1u);  // one question at a time
    EXPECT_EQ(asked[0].first["method"], "elicitation/create");
    EXPECT_EQ(asked[0].first["params"]["message"], "a?");
    EXPECT_EQ(asked[0].first["params"]["_meta"][kRelatedTaskMeta], (Json{{"taskId", id}}));
    EXPECT_EQ(asked[0].second, result_id);  // on the tasks/result request's stream
    auto answer = [](const char* v) { return Json{{"action", "accept"}, {"content", {{"v", v}}}}; };
    s->receive(protocol::Response{asked[0].first["id"], answer("1")});
    exec.run();
    asked = server_requests();
    ASSERT_EQ(asked.size(), 2u);
    EXPECT_EQ(asked[1].first["params"]["message"], "b?");
    EXPECT_EQ(asked[1].second, result_id);
    EXPECT_TRUE(reply_to(result_id).is_null());
    EXPECT_EQ(runs, 1);
    s->receive(protocol::Response{asked[1].first["id"], answer("2")});
    exec.run();

    Json answered = reply_to(result_id);
    ASSERT_TRUE(answered.contains("result")) << answered.dump();
    EXPECT_EQ(answered["result"]["content"][0]["text"], "12");
    EXPECT_EQ(answered["result"]["_meta"][kRelatedTaskMeta]["taskId"], id);
    EXPECT_EQ(runs, 2);  // replayed once, with both answers
    std::vector<std::string> seen;
    for (const auto& t : statuses(id)) seen.push_back(t["status"]);
    EXPECT_EQ(seen, (std::vector<std::string>{"input_required", "working", "completed"}));
    EXPECT_EQ(engine->running(), 0u);
    EXPECT_EQ(engine->waiting(), 0u);
}

TEST_F(TasksTest, V1AQuestionTheClientRefusesFailsTheTaskAsTheToolWould) {
    add_tool("ask", "optional", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        auto a = co_await ctx.ask_client({"elicitation/create", Json{{"message", "?"}}, "q"});
        co_return ToolResult::text(a.value("action", ""));
    });
    auto s = session_of("2025-11-25", Json{{"elicitation", Json::object()}});
    const std::string id = on(*s, "tools/call", v1_call("ask"))["result"]["task"]["taskId"];
    on(*s, "tasks/result", {{"taskId", id}});
    const Json result_id = last_id;
    auto asked = server_requests();
    ASSERT_EQ(asked.size(), 1u);
    s->receive(protocol::ErrorResponse{asked[0].first["id"], -32601, "Method not found", nullptr});
    exec.run();
    Json answered = reply_to(result_id);
    ASSERT_TRUE(answered.contains("result")) << answered.dump();
    EXPECT_EQ(answered["result"]["isError"], true);
    EXPECT_EQ(on(*s, "tasks/get", {{"taskId", id}})["result"]["status"], "failed");
    EXPECT_EQ(engine->running(), 0u);

    // A client that cannot answer (no elicitation capability) is not asked: its tasks/result waits.
    auto mute = session_of("2025-11-25");  // the same (anonymous) owner
    const std::string other = on(*s, "tools/call", v1_call("ask"))["result"]["task"]["taskId"];
    on(*mute, "tasks/result", {{"taskId", other}});
    EXPECT_EQ(server_requests().size(), 1u);
    EXPECT_EQ(engine->waiting(), 1u);
    mute->close();  // ends its request
    exec.run();
    EXPECT_EQ(engine->waiting(), 0u);
}

TEST_F(TasksTest, V1TasksResultHoldsNothingOnceTheClientCancelsIt) {
    add_tool("slow", "optional", sleep_then_answer);
    auto s = session_of("2025-11-25");
    const std::string id = on(*s, "tools/call", v1_call("slow"))["result"]["task"]["taskId"];
    on(*s, "tasks/result", {{"taskId", id}});
    const Json result_id = last_id;
    EXPECT_EQ(engine->waiting(), 1u);
    const auto timers = exec.pending_timers();
    s->receive(protocol::Notification{"notifications/cancelled", {{"requestId", result_id}}});
    exec.run();
    EXPECT_EQ(engine->waiting(), 0u);
    EXPECT_EQ(exec.pending_timers(), timers - 1);  // its fallback timer went with it
    EXPECT_EQ(s->in_flight(), 0u);
    exec.advance(5s);
    EXPECT_TRUE(reply_to(result_id).is_null());  // a cancelled request gets no answer
    EXPECT_EQ(on(*s, "tasks/get", {{"taskId", id}})["result"]["status"], "completed");
}

TEST_F(TasksTest, V1AndTheExtensionShareTheMethodNamesBySession) {
    add_tool("slow", "optional", sleep_then_answer);
    // A 2025-11-25 session that declared the extension gets the extension's shapes.
    auto ext = session_of("2025-11-25", with_tasks());
    Json created = on(*ext, "tools/call", v1_call("slow", nullptr))["result"];
    EXPECT_EQ(created["resultType"], "task") << created.dump();
    const std::string id = created["taskId"];
    Json got = on(*ext, "tasks/get", {{"taskId", id}})["result"];
    EXPECT_EQ(got["resultType"], "complete");
    EXPECT_EQ(got["ttlMs"], 60000);
    EXPECT_EQ(on(*ext, "tasks/result", {{"taskId", id}})["error"]["code"], -32601);
    EXPECT_EQ(on(*ext, "tasks/list", Json::object())["error"]["code"], -32601);

    // One that did not: the v1 shapes, for its tasks and the extension's task of the same
    // (anonymous) owner alike; tasks/update stays the extension's.
    auto v1 = session_of("2025-11-25");
    Json flat = on(*v1, "tasks/get", {{"taskId", id}})["result"];
    EXPECT_EQ(flat["taskId"], id);
    EXPECT_EQ(flat["ttl"], 60000);
    EXPECT_FALSE(flat.contains("resultType"));
    EXPECT_EQ(on(*v1, "tasks/update", {{"taskId", id}, {"inputResponses", Json::object()}})["error"]["code"], -32021);
    exec.advance(5s);
    EXPECT_EQ(on(*v1, "tasks/result", {{"taskId", id}})["result"]["content"][0]["text"], "done");
    // A 2026-07-28 request without the extension: -32021 as before, and no v1 methods.
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, Json::object())["error"]["code"], -32021);
    EXPECT_EQ(call("tasks/list", Json::object(), Json::object())["error"]["code"], -32601);
}

TEST_F(TasksTest, V1TasksResultForATaskAnotherReplicaRunsReadsItsRecordEveryPollInterval) {
    add_tool("slow", "optional", sleep_then_answer);
    // A second server (replica) on the same store, the same owner (a bearer token) on both.
    auto replica = replica_on(store);
    auto& replica_engine = replica.engine;
    auto here = session_of("2025-11-25", Json::object(), CallerIdentity{.principal = "alice-token"});
    auto there = open_on(*replica.server, CallerIdentity{.principal = "alice-token"});
    Json hello = on(*there, "initialize",
                    {{"protocolVersion", "2025-11-25"},
                     {"capabilities", Json::object()},
                     {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    ASSERT_TRUE(hello["result"]["capabilities"].contains("tasks"));
    there->receive(protocol::Notification{"notifications/initialized", nullptr});

    const std::string id = on(*here, "tools/call", v1_call("slow"))["result"]["task"]["taskId"];
    exec.advance(100ms);  // (the replica reads the record at 100 ms, 350 ms, ..., 4850 ms, 5100 ms)
    on(*there, "tasks/result", {{"taskId", id}});
    const Json waiting = last_id;
    EXPECT_EQ(replica_engine->waiting(), 1u);
    EXPECT_EQ(replica_engine->running(), 0u);  // not run there
    exec.advance(4900ms);                      // the call completes on the first server at 5 s...
    EXPECT_EQ(on(*here, "tasks/get", {{"taskId", id}})["result"]["status"], "completed");
    EXPECT_TRUE(reply_to(waiting).is_null());  // ...which does not wake the replica's waiter
    exec.advance(100ms);                       // its next read of the record does
    Json answered = reply_to(waiting);
    ASSERT_TRUE(answered.contains("result")) << answered.dump();
    EXPECT_EQ(answered["result"]["content"][0]["text"], "done");
    EXPECT_EQ(answered["result"]["_meta"][kRelatedTaskMeta]["taskId"], id);
    EXPECT_EQ(replica_engine->waiting(), 0u);
    there->close();
}

Task<ToolResult> ask_sure(RequestContext& ctx, const Json&) {
    Json a = co_await ctx.ask_client({"elicitation/create", Json{{"message", "sure?"}}, "sure"});
    co_return ToolResult::text("answer: " + a["content"].value("v", ""));
}

TEST_F(TasksTest, AnswersGivenOnAnotherReplicaAreRelayedToTheOneThatRunsTheTask) {
    add_tool("confirm", "optional", ask_sure);
    // A second server on the same store; what it relays arrives here as the bus would bring it.
    auto replica = replica_on(store);
    auto& replica_engine = replica.engine;
    std::vector<std::pair<std::string, Json>> relayed;
    replica_engine->set_relay([this, &relayed](const std::string& id, const Json& responses) {
        relayed.emplace_back(id, responses);
        engine->answers_from_elsewhere(id, responses);
    });
    Json caps = with_tasks();
    caps["elicitation"] = Json::object();
    auto here = open(CallerIdentity{.principal = "bob-token"});
    auto there = open_on(*replica.server, CallerIdentity{.principal = "bob-token"});

    // The extension: tasks/update on the replica.
    const std::string id = call("tools/call", {{"name", "confirm"}, {"arguments", Json::object()}}, caps,
                                here.get())["result"]["taskId"];
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, caps, there.get())["result"]["status"], "input_required");
    call("tasks/update",
         {{"taskId", id}, {"inputResponses", {{"sure", {{"action", "accept"}, {"content", {{"v", "yes"}}}}}}}}, caps,
         there.get());
    ASSERT_EQ(relayed.size(), 1u);
    EXPECT_EQ(relayed[0].first, id);
    Json done = call("tasks/get", {{"taskId", id}}, caps, there.get())["result"];
    EXPECT_EQ(done["status"], "completed") << done.dump();
    EXPECT_EQ(done["result"]["content"][0]["text"], "answer: yes");
    EXPECT_EQ(replica_engine->running(), 0u);

    // Answers for a task nobody runs here or there are dropped, not replayed anywhere.
    engine->answers_from_elsewhere("no-such-task", Json{{"sure", Json::object()}});
    exec.run();
    there->close();
    here->close();
}

TEST_F(TasksTest, V1TasksResultOnAnotherReplicaAsksTheRecordsQuestionsAndRelaysTheAnswers) {
    add_tool("confirm", "optional", ask_sure);
    auto replica = replica_on(store);
    replica.engine->set_relay(
        [this](const std::string& id, const Json& responses) { engine->answers_from_elsewhere(id, responses); });
    Json caps = {{"elicitation", Json::object()}};
    auto here = session_of("2025-11-25", caps, CallerIdentity{.principal = "carol-token"});
    auto there = open_on(*replica.server, CallerIdentity{.principal = "carol-token"});
    on(*there, "initialize",
       {{"protocolVersion", "2025-11-25"}, {"capabilities", caps}, {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
    there->receive(protocol::Notification{"notifications/initialized", nullptr});
    exec.run();

    const std::string id = on(*here, "tools/call", v1_call("confirm"))["result"]["task"]["taskId"];
    EXPECT_EQ(on(*there, "tasks/get", {{"taskId", id}})["result"]["status"], "input_required");
    on(*there, "tasks/result", {{"taskId", id}});
    const Json waiting = last_id;
    // The replica asks its client the question the record holds, tied to the task.
    auto asked = server_requests();
    ASSERT_FALSE(asked.empty());
    const Json question = asked.back().first;
    EXPECT_EQ(question["method"], "elicitation/create");
    EXPECT_EQ(question["params"]["_meta"][kRelatedTaskMeta]["taskId"], id);
    there->receive(protocol::Response{question["id"], Json{{"action", "accept"}, {"content", {{"v", "sure"}}}}});
    exec.run();
    exec.advance(300ms);  // the replica reads the record again
    Json answered = reply_to(waiting);
    ASSERT_TRUE(answered.contains("result")) << answered.dump();
    EXPECT_EQ(answered["result"]["content"][0]["text"], "answer: sure");
    there->close();
    here->close();
}

// The same records under another process's name, whose liveness the test decides: what a
// replica sees of the records of a shared store.
class ReplicaView final : public TaskStore {
public:
    ReplicaView(TaskStore& shared, std::string name) : shared_(shared), name_(std::move(name)) {}
    std::string_view backend() const override { return "redis"; }
    Task<void> create(TaskRecord r) override { return shared_.create(std::move(r)); }
    Task<std::optional<TaskRecord>> get(std::string id, std::string owner) override {
        return shared_.get(std::move(id), std::move(owner));
    }
    Task<TaskPage> list(std::string owner, std::string cursor, std::size_t limit) override {
        return shared_.list(std::move(owner), std::move(cursor), limit);
    }
    Task<TaskUpdate> update(TaskRecord change) override { return shared_.update(std::move(change)); }
    Task<std::vector<TaskRecord>> unfinished(std::size_t limit) override { return shared_.unfinished(limit); }
    const std::string& runner_id() const override { return name_; }
    Task<bool> runner_alive(std::string runner) override {
        ++asked;
        co_return runner == name_ || !dead.count(runner);
    }
    std::set<std::string> dead;
    int asked = 0;

private:
    TaskStore& shared_;
    std::string name_;
};

TEST_F(TasksTest, ATaskWhoseReplicaDiedIsEndedAsFailedByTheNextReplicaThatLooks) {
    add_tool("slow", "optional", sleep_then_answer);
    ReplicaView view_a(store, "replica-a"), view_b(store, "replica-b");
    auto a = replica_on(view_a), b = replica_on(view_b);
    for (auto* r : {&a, &b}) {
        ToolSpec t;
        t.name = "slow";
        t.description = "slow";
        t.handler = sleep_then_answer;
        t.execution = Json{{"taskSupport", "optional"}};
        r->server->registry().add_tool(std::move(t));
    }
    auto& engine_a = a.engine;
    auto on_a = open_on(*a.server, CallerIdentity{.principal = "dana-token"});
    auto on_b = open_on(*b.server, CallerIdentity{.principal = "dana-token"});
    const std::string id = call("tools/call", {{"name", "slow"}, {"arguments", Json::object()}}, with_tasks(),
                                on_a.get())["result"]["taskId"];
    // A alive: B sees the task working (and asked whether A is alive).
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, with_tasks(), on_b.get())["result"]["status"], "working");
    EXPECT_EQ(view_b.asked, 1);
    // A looking at its own task asks nobody.
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, with_tasks(), on_a.get())["result"]["status"], "working");
    EXPECT_EQ(view_a.asked, 0);
    // A dies (its heartbeat lapsed): the next look from B ends the task as failed.
    view_b.dead.insert("replica-a");
    Json failed = call("tasks/get", {{"taskId", id}}, with_tasks(), on_b.get())["result"];
    EXPECT_EQ(failed["status"], "failed") << failed.dump();
    EXPECT_EQ(failed["error"]["code"], protocol::error_code::kInternalError);
    EXPECT_NE(failed["error"]["message"].get<std::string>().find("replica running this task stopped"),
              std::string::npos);
    // Terminal now: nobody asks again, and A's late outcome cannot change it.
    EXPECT_EQ(view_b.asked, 2);
    exec.advance(5s);
    EXPECT_EQ(call("tasks/get", {{"taskId", id}}, with_tasks(), on_b.get())["result"]["status"], "failed");
    EXPECT_EQ(view_b.asked, 2);
    on_a->close();
    on_b->close();
    engine_a->shutdown();
    exec.run();
}

TEST_F(TasksTest, V1ProgressTokenStaysValidForTheTaskAndItsNotificationsNameTheTask) {
    add_tool("steps", "optional", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        ctx.progress(1, 2, "half");
        co_await ctx.sleep(1s);
        ctx.progress(2, 2, "done");
        co_return ToolResult::text("ok");
    });
    auto s = session_of("2025-11-25");
    Json params = v1_call("steps");
    params["_meta"] = Json{{"progressToken", "pt-1"}};
    const std::string id = on(*s, "tools/call", params)["result"]["task"]["taskId"];
    exec.advance(1s);
    std::vector<Json> progress;
    for (const auto& m : out) {
        if (m.value("method", "") == "notifications/progress") progress.push_back(m["params"]);
    }
    ASSERT_EQ(progress.size(), 2u);
    for (const auto& p : progress) {
        EXPECT_EQ(p["progressToken"], "pt-1");
        EXPECT_EQ(p["_meta"][kRelatedTaskMeta]["taskId"], id);
    }
    EXPECT_EQ(progress[1]["message"], "done");
    // The extension's task does not keep it: its request was answered.
    out.clear();
    Json ext = {{"name", "steps"},
                {"arguments", Json::object()},
                {"_meta",
                 {{"progressToken", "pt-2"},
                  {"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                  {"io.modelcontextprotocol/clientCapabilities", with_tasks()}}}};
    session->receive(protocol::Request{Json("ext-1"), "tools/call", ext});
    exec.run();
    ASSERT_EQ(reply_to(Json("ext-1"))["result"].value("resultType", ""), "task") << reply_to(Json("ext-1")).dump();
    exec.advance(1s);
    for (const auto& m : out) EXPECT_NE(m.value("method", ""), "notifications/progress") << m.dump();
    s->close();
}

// The default: a client that merely supports the extension gets its answer in the request
// unless the call outlives the threshold (1 s here, as by default).
class TasksThresholdTest : public TasksTest {
protected:
    TasksThresholdTest() { build(1s); }
    // A tools/call whose reply may come later (after exec.advance): its id.
    Json send(const std::string& tool, Json params = Json::object()) {
        params["name"] = tool;
        params["arguments"] = Json::object();
        Json caps = with_tasks();
        caps["elicitation"] = Json::object();
        params["_meta"] = Json{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                               {"io.modelcontextprotocol/clientCapabilities", std::move(caps)}};
        const Json id = next_id++;
        session->receive(protocol::Request{id, "tools/call", std::move(params)});
        exec.run();
        return id;
    }
};

Task<ToolResult> sleep_ms(RequestContext& ctx, std::chrono::milliseconds how_long) {
    co_await ctx.sleep(how_long);
    co_return ToolResult::text("slept");
}

TEST_F(TasksThresholdTest, AQuickCallIsAnsweredInItsRequestAndLeavesNoTask) {
    add_tool("quick", "optional", [](RequestContext& ctx, const Json&) { return sleep_ms(ctx, 200ms); });
    const Json id = send("quick");
    EXPECT_TRUE(reply_to(id).is_null()) << "answered before the call ended";
    exec.advance(200ms);
    Json reply = reply_to(id);
    ASSERT_TRUE(reply.contains("result")) << reply.dump();
    EXPECT_EQ(reply["result"]["content"][0]["text"], "slept");
    EXPECT_NE(reply["result"].value("resultType", ""), "task");
    EXPECT_FALSE(reply["result"].contains("taskId"));
    EXPECT_EQ(engine->running(), 0u);
    // No record was made: nothing to find, nothing that counts against the store's caps.
    EXPECT_EQ(store.records(), 0u);
}

TEST_F(TasksThresholdTest, ACallThatOutlivesTheThresholdBecomesATaskAndCompletes) {
    add_tool("slow", "optional", sleep_then_answer);  // 5 s
    const Json id = send("slow");
    exec.advance(999ms);
    EXPECT_TRUE(reply_to(id).is_null());
    exec.advance(1ms);
    Json created = reply_to(id);
    ASSERT_TRUE(created.contains("result")) << created.dump();
    EXPECT_EQ(created["result"]["resultType"], "task");
    EXPECT_EQ(created["result"]["status"], "working");
    const std::string task_id = created["result"]["taskId"];
    EXPECT_EQ(get(task_id)["result"]["status"], "working");
    exec.advance(4s);
    Json done = get(task_id)["result"];
    EXPECT_EQ(done["status"], "completed");
    EXPECT_EQ(done["result"]["content"][0]["text"], "done");
}

TEST_F(TasksThresholdTest, AProtocolErrorWithinTheThresholdIsTheRequestsError) {
    add_tool("broken", "optional", [](RequestContext&, const Json&) -> Task<ToolResult> {
        throw RpcError(protocol::error_code::kInternalError, "Internal error: broke");
        co_return ToolResult::text("never");
    });
    Json reply = call("tools/call", {{"name", "broken"}, {"arguments", Json::object()}});
    ASSERT_TRUE(reply.contains("error")) << reply.dump();
    EXPECT_EQ(reply["error"]["code"], protocol::error_code::kInternalError);
    EXPECT_EQ(reply["error"]["message"], "Internal error: broke");
}

TEST_F(TasksThresholdTest, ATaskAtOnceWhenTheClientAsksTheToolRequiresOrTheToolSaysSo) {
    add_tool("slow", "optional", sleep_then_answer);
    add_tool("must", "required", sleep_then_answer);
    add_tool("own", "optional", sleep_then_answer, Json{{kTaskThresholdMeta, 0}});
    EXPECT_EQ(call("tools/call", {{"name", "slow"}, {"arguments", Json::object()}, {"task", Json::object()}})["result"]
                  .value("resultType", ""),
              "task");
    EXPECT_EQ(call("tools/call", {{"name", "must"}, {"arguments", Json::object()}})["result"].value("resultType", ""),
              "task");
    EXPECT_EQ(call("tools/call", {{"name", "own"}, {"arguments", Json::object()}})["result"].value("resultType", ""),
              "task");
    // The three tasks run to their end (a call left suspended in a sleep would leak its frame).
    exec.advance(5s);
    EXPECT_EQ(engine->running(), 0u);
}

TEST_F(TasksThresholdTest, AQuestionWithinTheThresholdMakesATaskThatWaitsForTheAnswer) {
    add_tool("asks", "optional", [](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        Json a = co_await ctx.ask_client({"elicitation/create", Json{{"message", "name?"}}, "user_name"});
        co_return ToolResult::text("hello " + a["content"].value("name", std::string()));
    });
    const Json id = send("asks");
    Json created = reply_to(id);
    ASSERT_TRUE(created.contains("result")) << created.dump();
    EXPECT_EQ(created["result"]["resultType"], "task");
    EXPECT_EQ(created["result"]["status"], "input_required");
    const std::string task_id = created["result"]["taskId"];
    Json parked = get(task_id)["result"];
    EXPECT_EQ(parked["status"], "input_required");
    EXPECT_TRUE(parked["inputRequests"].contains("user_name")) << parked.dump();
    Json caps = with_tasks();
    caps["elicitation"] = Json::object();
    call("tasks/update",
         {{"taskId", task_id},
          {"inputResponses", {{"user_name", {{"action", "accept"}, {"content", {{"name", "Ada"}}}}}}}},
         caps);
    Json done = call("tasks/get", {{"taskId", task_id}}, caps)["result"];
    EXPECT_EQ(done["status"], "completed") << done.dump();
    EXPECT_EQ(done["result"]["content"][0]["text"], "hello Ada");
}

TEST_F(TasksThresholdTest, CancellingTheRequestWithinTheThresholdStopsTheCall) {
    bool finished = false;
    add_tool("slow", "optional", [&finished](RequestContext& ctx, const Json&) -> Task<ToolResult> {
        co_await ctx.sleep(500ms);
        finished = true;
        co_return ToolResult::text("late");
    });
    const Json id = send("slow");
    session->receive(protocol::Notification{"notifications/cancelled", Json{{"requestId", id}}});
    exec.run();
    exec.advance(2s);
    EXPECT_FALSE(finished);
    EXPECT_EQ(engine->running(), 0u);
    Json reply = reply_to(id);
    EXPECT_FALSE(reply.contains("result") && reply["result"].value("resultType", "") == "task") << reply.dump();
}

}  // namespace
