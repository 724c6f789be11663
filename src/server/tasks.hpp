// Long-running tool calls as tasks, in both task models MCP has had:
//   - the tasks extension of revision 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663);
//   - the task model of revision 2025-11-25 (SEP-1686, "v1" below).
//
// A tool declares task support in `execution.taskSupport` ("optional" or "required").
//
// The extension. When the client declared the extension (at initialize, or in the
// request's _meta clientCapabilities), a tools/call of such a tool is answered at once with
// a CreateTaskResult {resultType:"task", taskId, status, createdAt, lastUpdatedAt, ttlMs,
// pollIntervalMs}; the call itself runs on, detached from the request, through the same
// invoker (the call pipeline) as any tools/call. Its record (TaskStore) says what
// became of it:
//   completed  the call answered a CallToolResult (tool errors, isError: true, included);
//   failed     the call ended in a protocol error (JSON-RPC error shape {code, message, data?});
//   cancelled  tasks/cancel arrived first (the store's atomic update decides the race);
//   input_required  the call asks the client (elicitation, sampling, roots): the questions
//              are the record's inputRequests, answered through tasks/update.
// tasks/get returns the record (result, error or inputRequests inlined), tasks/update
// delivers inputResponses, tasks/cancel cancels; each answers -32021 to a client that did
// not declare the extension and -32602 for a task id it does not own.
//
// v1, on a 2025-11-25 session that did not declare the extension: initialize advertises
// capabilities.tasks {list, cancel, requests.tools.call}, and the client asks for a task
// with params.task {ttl?} on tools/call (a tool without task support then answers -32601,
// as does a "required" tool called without it). The answer is {task: Task}, Task being
// {taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttl, pollInterval}; the call
// runs the same way and in the same record (model "2025-11-25"), except that a tool result
// with isError: true fails the task. tasks/get and tasks/cancel answer the Task (cancelling
// a terminal task is -32602), tasks/list the owner's tasks a page at a time, and
// tasks/result waits until the task is terminal and answers what the tools/call would
// have: the CallToolResult with _meta["io.modelcontextprotocol/related-task"], or the
// JSON-RPC error. While the task waits for input, tasks/result asks the client itself, as
// requests on its own response stream, and feeds the answers in as tasks/update would.
// The creating session is sent notifications/tasks/status (the Task) on each status change.
// Older revisions have no tasks: params.task is ignored there.
//
// Questions run the multi round-trip way (input_required.hpp) in every revision: the task's
// call is replayed from the start with every answer gathered so far, so nothing but the
// record and the answers is kept between rounds.
//
// Where things are: tasks.cpp (the engine: creating, running, recording, waking),
// task_extension_model.cpp (what the extension answers), task_model_2025_11_25.cpp (what
// the 2025-11-25 model answers), tasks_internal.hpp (what they share).
#pragma once

#include <chrono>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "async/completion.hpp"
#include "async/task.hpp"
#include "server/request_context.hpp"
#include "server/task_store.hpp"

namespace toolport {

class McpServer;
struct ToolSpec;

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

// The task model of revision 2025-11-25 (TaskRecord::model), and its _meta key that ties
// a message to a task.
inline constexpr const char* kTaskModelV1 = "2025-11-25";
inline constexpr const char* kRelatedTaskMeta = "io.modelcontextprotocol/related-task";

// The Tool _meta key of a task-supporting tool whose questions come before its task: it
// asks in the request (MRTR rounds) and becomes a task once the client has answered.
inline constexpr const char* kInputBeforeTaskMeta = "io.toolport/inputBeforeTask";

// The Tool _meta key of a task-supporting tool with a threshold of its own (an integer of
// milliseconds; 0: a task at once), instead of ServerOptions::task_threshold.
inline constexpr const char* kTaskThresholdMeta = "io.toolport/taskThresholdMs";

// The reply of one tools/call of `tool` run through the server's invoker: a CallToolResult
// (a failing tool is a result with isError), shaped for the request's revision. Throws
// RpcError for protocol errors, InputRequired and OperationCancelled (server_methods.cpp).
// `raw_ok`: the reply goes straight to the wire, so content a gateway passes on unread may
// stay raw JSON (protocol/raw_json.hpp); otherwise (a task's stored result) it is expanded.
Task<Json> tool_call_reply(McpServer& server, RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                           const Json& arguments, bool raw_ok = false);

class TaskEngine : public std::enable_shared_from_this<TaskEngine> {
public:
    TaskEngine(McpServer& server, TaskStore& store);
    ~TaskEngine();
    TaskEngine(const TaskEngine&) = delete;
    TaskEngine& operator=(const TaskEngine&) = delete;

    // Advertises the extension and serves tasks/get, tasks/update and tasks/cancel (both
    // models) and tasks/result and tasks/list (v1).
    void install();
    // Cancels every running call (the server is stopping).
    void shutdown();

    // Whether the request's client declared the extension.
    static bool negotiated(const RequestContext& ctx);
    // Whether the request is served in the 2025-11-25 model: a request of a 2025-11-25
    // session whose client did not declare the extension.
    static bool v1(const RequestContext& ctx);
    // The `tasks` server capability a session of `revision` is offered at initialize (v1:
    // only 2025-11-25), or null.
    static Json capability(protocol::Revision revision);
    // "optional", "required", or empty when the tool does not support tasks.
    static std::string task_support(const ToolSpec& tool);

    // A tools/call of a task-supporting tool, or (v1) one with params.task: the
    // CreateTaskResult of either model, or nullopt when the call is to run in its request
    // (the client did not declare the extension; v1: it sent no params.task). Throws
    // RpcError -32021 for a tool that requires tasks from a client without the extension,
    // and (v1) -32601 for params.task on a tool without task support, or for a tool that
    // requires tasks called without it.
    Task<std::optional<Json>> call_tool(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool, Json arguments);

    // Replicas sharing one store (`sessions: shared`): answers for a task that runs on
    // another replica are handed to `relay` (which sends them there); that replica hands
    // them to answers_from_elsewhere(). The owner was checked where they arrived.
    using Relay = std::function<void(const std::string& task_id, const Json& responses)>;
    void set_relay(Relay relay) { relay_ = std::move(relay); }
    void answers_from_elsewhere(std::string task_id, Json responses);
    // Likewise a cancellation (by its client or an operator) that reached another replica:
    // the record is cancelled already, and `relay` tells the replica that runs the call to
    // stop it, which hands it to cancelled_elsewhere().
    using CancelRelay = std::function<void(const std::string& task_id, const std::string& why)>;
    void set_cancel_relay(CancelRelay relay) { cancel_relay_ = std::move(relay); }
    void cancelled_elsewhere(std::string task_id, std::string why);

    // The owner of the tasks `ctx` creates and sees (exposed for tests).
    static std::string owner_of(const RequestContext& ctx);
    // Calls running now (exposed for tests).
    std::size_t running() const { return running_.size(); }

    // For the operator console: the records of the unfinished tasks (working or waiting
    // for input), whoever owns them, with the tool of each and, for those this process
    // runs, the session; with a shared store, those other replicas run too (`here` false);
    // and cancelling one of them as its operator (any owner, any replica).
    // cancel_as_operator's false: no such task is unfinished, or it ended meanwhile.
    struct Live {
        TaskRecord record;
        std::string tool;
        std::string session;
        bool here = true;  // this process runs it
    };
    Task<std::vector<Live>> live();
    Task<bool> cancel_as_operator(std::string id);
    // tasks/result requests waiting for their task now (exposed for tests).
    std::size_t waiting() const {
        std::size_t n = 0;
        for (const auto& [id, waiters] : watchers_) n += waiters.size();
        return n;
    }

private:
    struct Running;

    Task<Json> get(RequestContext& ctx);
    Task<Json> update(RequestContext& ctx);
    Task<Json> cancel(RequestContext& ctx);
    Task<Json> v1_get(RequestContext& ctx);     // get() in the 2025-11-25 model
    Task<Json> v1_cancel(RequestContext& ctx);  // cancel() in the 2025-11-25 model
    Task<Json> list(RequestContext& ctx);       // v1
    Task<Json> result(RequestContext& ctx);     // v1
    Task<TaskRecord> find(RequestContext& ctx, const std::string& id);

    Json create_result(const TaskRecord& record) const;
    Json detailed(const TaskRecord& record) const;
    // v1: the Task object (tasks/get, tasks/cancel, tasks/list, notifications/tasks/status).
    static Json v1_task(const TaskRecord& record);
    // v1: what tasks/result answers for a terminal record (throws RpcError for an error).
    static Json v1_outcome(const TaskRecord& record);
    TaskRecord new_record(const RequestContext& ctx, const std::string& tool_name) const;
    // The run of a task's call, as `ctx` asked for it, not started.
    std::shared_ptr<Running> prepare_run(RequestContext& ctx, const TaskRecord& record,
                                         std::shared_ptr<const ToolSpec> tool, Json arguments, bool v1_model);
    // An "optional" tool called by a client that did not ask for a task: the call's answer
    // if it comes within `threshold`, else a CreateTaskResult for the call running on.
    Task<std::optional<Json>> call_inline_first(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool,
                                                Json arguments, std::chrono::milliseconds threshold);
    std::int64_t now_ms() const;
    // The span of a task's run (tracing on): under the span of the request that created it.
    observability::Span task_span(const Running& run) const;

    // Runs (or replays, with the answers so far) the task's call and records its outcome.
    void start(std::shared_ptr<Running> run);
    void forget_at_expiry(const std::string& id, std::chrono::milliseconds ttl);
    Task<void> execute(std::shared_ptr<Running> run);
    Task<void> settle(Running& run, TaskRecord change);
    // Marks the record cancelled and stops its call; what the store said.
    Task<TaskUpdate> cancel_record(const TaskRecord& record, bool by_operator = false);
    // Feeds answers to the task `id` when it waits for them here (tasks/update, and v1's
    // tasks/result); answers to questions it did not ask are ignored.
    Task<void> deliver(std::string id, Json responses);
    // v1's tasks/result for a task another replica runs: asks `ctx`'s client the record's
    // questions not in `asked` yet (adding them) and relays the answers. False when there
    // was nothing to ask.
    Task<bool> ask_for_remote_input(RequestContext& ctx, const TaskRecord& record, std::set<std::string>& asked);
    // v1's tasks/result for a task waiting for input: asks `ctx`'s client what the task
    // asks (what no other tasks/result is asking already) and delivers the answers. False
    // when there was nothing it could ask.
    Task<bool> ask_for_input(RequestContext& ctx, std::shared_ptr<Running> run);
    // The task's call ends as the tool's error result (the client refused a question).
    Task<void> refuse(std::shared_ptr<Running> run, const std::string& why);
    // Waits until the task `id` changes here, `fallback` passes, or `ctx` is cancelled
    // (OperationCancelled).
    Task<void> wait_change(RequestContext& ctx, std::string id, std::chrono::milliseconds fallback);
    // The record of `id` changed (or its run ended): wakes whoever waits for it.
    void changed(const std::string& id);
    // v1: notifications/tasks/status to the creating session, if still there.
    void tell_status(const Running& run, const TaskRecord& record);
    // Stops the call of the task `id` run here, whose record is now cancelled (`now`).
    void stop_cancelled(const std::string& id, const TaskRecord& now, const char* why);

    McpServer& server_;
    TaskStore& store_;
    std::unordered_map<std::string, std::shared_ptr<Running>> running_;
    Relay relay_;
    CancelRelay cancel_relay_;
    // tasks/result requests waiting for their task to change, by task id.
    std::unordered_map<std::string, std::map<std::uint64_t, Completion<bool>>> watchers_;
    std::uint64_t next_watcher_ = 0;
};

}  // namespace toolport
