// Long-running tool calls as tasks: the tasks extension of revision 2026-07-28
// (io.modelcontextprotocol/tasks, SEP-2663).
//
// A tool declares task support in `execution.taskSupport` ("optional" or "required"). When
// the client declared the extension (at initialize, or in the request's
// _meta clientCapabilities), a tools/call of such a tool is answered at once with a
// CreateTaskResult {resultType:"task", taskId, status, createdAt, lastUpdatedAt, ttlMs,
// pollIntervalMs}; the call itself runs on, detached from the request, through the same
// invoker (the call pipeline) as any tools/call. Its record (stores::TaskStore) says what
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
// Questions run the multi round-trip way (input_required.hpp) in every revision: the task's
// call is replayed from the start with every answer gathered so far, so nothing but the
// record and the answers is kept between rounds.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "server/request_context.hpp"
#include "stores/task_store.hpp"

namespace toolport {

class McpServer;
struct ToolSpec;

inline constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";

// The Tool _meta key of a task-supporting tool whose questions come before its task: it
// asks in the request (MRTR rounds) and becomes a task once the client has answered.
inline constexpr const char* kInputBeforeTaskMeta = "io.toolport/inputBeforeTask";

// The reply of one tools/call of `tool` run through the server's invoker: a CallToolResult
// (a failing tool is a result with isError), shaped for the request's revision. Throws
// RpcError for protocol errors, InputRequired and OperationCancelled (server_methods.cpp).
Task<Json> tool_call_reply(McpServer& server, RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                           const Json& arguments);

class TaskEngine : public std::enable_shared_from_this<TaskEngine> {
public:
    TaskEngine(McpServer& server, stores::TaskStore& store);
    ~TaskEngine();
    TaskEngine(const TaskEngine&) = delete;
    TaskEngine& operator=(const TaskEngine&) = delete;

    // Advertises the extension and serves tasks/get, tasks/update and tasks/cancel.
    void install();
    // Cancels every running call (the server is stopping).
    void shutdown();

    // Whether the request's client declared the extension.
    static bool negotiated(const RequestContext& ctx);
    // "optional", "required", or empty when the tool does not support tasks.
    static std::string task_support(const ToolSpec& tool);

    // A tools/call of a task-supporting tool: the CreateTaskResult, or nullopt when the
    // call is to run in its request (the client did not declare the extension). Throws
    // RpcError -32021 for a tool that requires tasks from such a client.
    Task<std::optional<Json>> call_tool(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool, Json arguments);

    // The owner of the tasks `ctx` creates and sees (exposed for tests).
    static std::string owner_of(const RequestContext& ctx);
    // Calls running now (exposed for tests).
    std::size_t running() const { return running_.size(); }

private:
    struct Running;

    Task<Json> get(RequestContext& ctx);
    Task<Json> update(RequestContext& ctx);
    Task<Json> cancel(RequestContext& ctx);
    Task<stores::TaskRecord> find(RequestContext& ctx, const std::string& id);

    Json create_result(const stores::TaskRecord& record) const;
    Json detailed(const stores::TaskRecord& record) const;
    stores::TaskRecord new_record(const RequestContext& ctx, const std::string& tool_name) const;
    std::int64_t now_ms() const;

    // Runs (or replays, with the answers so far) the task's call and records its outcome.
    void start(std::shared_ptr<Running> run);
    void forget_at_expiry(const std::string& id, std::chrono::milliseconds ttl);
    Task<void> execute(std::shared_ptr<Running> run);
    Task<void> settle(Running& run, stores::TaskRecord change);

    McpServer& server_;
    stores::TaskStore& store_;
    std::unordered_map<std::string, std::shared_ptr<Running>> running_;
};

}  // namespace toolport
