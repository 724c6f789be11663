// Internal to the task engine's three files (not for other folders): the state of a task
// whose call runs here, and the helpers more than one of them uses.
//   tasks.cpp                  the engine: creating tasks, running their calls, recording outcomes;
//   task_extension_model.cpp   what the tasks extension (io.modelcontextprotocol/tasks) answers;
//   task_model_2025_11_25.cpp  what the task model of revision 2025-11-25 answers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "server/request_context.hpp"
#include "server/tasks.hpp"

namespace toolport {

class ServerSession;

// A task whose call is running, or waiting for the client's answers. The record in the
// store is the truth clients see; this is what it takes to run the call again.
struct TaskEngine::Running {
    std::string id;
    std::string owner;
    std::shared_ptr<ServerSession> session;  // the creating request's (it may have closed)
    std::shared_ptr<const ToolSpec> tool;
    Json params;  // the tools/call params every run of the call sees
    Json arguments;
    protocol::Revision revision;
    Json answers = Json::object();        // every answer gathered so far, by input key
    Json pending = Json::object();        // questions not answered yet: key -> {method, params}
    std::unique_ptr<RequestContext> ctx;  // the run in progress; null between runs
    bool active = false;                  // a run is in progress or starting
    bool v1 = false;                      // created in the 2025-11-25 model
    // What the record's Task object needs beside a change (v1 status notifications).
    std::int64_t created_at_ms = 0;
    std::int64_t ttl_ms = 0;
    std::int64_t poll_interval_ms = 0;
    std::set<std::string> asking;  // v1: questions a tasks/result is asking the client now
    // A call that becomes a task only if it outlives ServerOptions::task_threshold: until its
    // record is stored, settle() keeps the outcome here instead of storing it, for the
    // request to answer inline (or, once the record exists, to store).
    bool holding = false;
    std::optional<TaskRecord> held;

    // The record as `change` leaves it, for the status notification (what the store
    // holds without reading it back).
    TaskRecord after(const TaskRecord& change) const {
        TaskRecord r;
        r.id = id;
        r.status = change.status;
        r.status_message = change.status_message;
        r.created_at_ms = created_at_ms;
        r.last_updated_at_ms = change.last_updated_at_ms;
        r.ttl_ms = ttl_ms;
        r.poll_interval_ms = poll_interval_ms;
        return r;
    }
};

namespace tasks_detail {

// params.taskId of a tasks/* request (RpcError -32602 when it is not a non-empty string).
std::string task_id_param(const RequestContext& ctx);
// -32602 for a task id the caller does not own (or that never existed, or expired).
RpcError unknown_task(const std::string& id);
// A record's time as the protocol writes it (ISO 8601, UTC, milliseconds).
std::string iso(std::int64_t epoch_ms);

// task_extension_model.cpp: -32021 for `what` asked by a client without the extension.
RpcError missing_extension(std::string_view what);

// task_model_2025_11_25.cpp:
// v1: a tool result with isError: true fails the task (the extension keeps it completed),
// and a failed task says why in its statusMessage.
void apply_v1_status_rule(TaskRecord& change);
// v1: the ttl the client asked for in params.task, within what the server keeps.
std::int64_t v1_ttl(const Json& task, std::int64_t server_ttl);

}  // namespace tasks_detail

}  // namespace toolport
