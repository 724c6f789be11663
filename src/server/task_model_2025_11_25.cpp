// The task model of revision 2025-11-25 (SEP-1686, "v1"), as its clients see it: the
// `tasks` capability, the Task object, tasks/get and tasks/cancel on a session without the
// extension, tasks/list, tasks/result (which asks the client a waiting task's questions)
// and notifications/tasks/status. The engine that runs the tasks is in tasks.cpp; the
// extension's answers in task_extension_model.cpp.
#include "server/tasks.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "server/input_required.hpp"
#include "server/session.hpp"
#include "protocol/revision_shapes.hpp"
#include "server/tasks_internal.hpp"
#include "server/tool_error.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using tasks_detail::iso;
using tasks_detail::task_id_param;
using tasks_detail::unknown_task;

namespace {

RpcError v1_only(std::string_view method) {
    return RpcError(protocol::error_code::kMethodNotFound,
                    fmt::format("Method not found: {} belongs to the task model of protocol 2025-11-25 (on a session "
                                "that did not declare the {} extension); with the extension, tasks/get carries "
                                "the outcome",
                                method, kTasksExtension));
}

}  // namespace

namespace tasks_detail {

// v1: a tool result with isError: true fails the task (the extension keeps it completed),
// and a failed task says why in its statusMessage.
void apply_v1_status_rule(TaskRecord& change) {
    // A protocol error says what it was in the Task's statusMessage too.
    if (change.status == TaskStatus::failed && change.status_message.empty() && change.error.is_object()) {
        change.status_message = change.error.value("message", std::string());
    }
    if (change.status != TaskStatus::completed || !change.result.is_object() ||
        change.result.value("isError", false) != true) {
        return;
    }
    change.status = TaskStatus::failed;
    std::string detail;
    if (auto content = change.result.find("content"); content != change.result.end() && content->is_array()) {
        for (const auto& block : *content) {
            if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
                block["text"].is_string()) {
                detail = block["text"].get<std::string>();
                break;
            }
        }
    }
    change.status_message = detail.empty() ? std::string("The tool reported an error")
                                           : "The tool reported an error: " + util::sanitize_for_message(detail, 300);
}

// v1: the ttl the client asked for in params.task, within what the server keeps.
std::int64_t v1_ttl(const Json& task, std::int64_t server_ttl) {
    auto ttl = task.find("ttl");
    if (ttl == task.end() || ttl->is_null()) return server_ttl;
    if (!ttl->is_number() || ttl->get<double>() < 0 || !std::isfinite(ttl->get<double>())) {
        throw RpcError(protocol::error_code::kInvalidParams,
                       "Invalid params: \"task.ttl\" must be a non-negative number of milliseconds");
    }
    // The server may override the ttl: at most its own, and at least a second so that the
    // client can still read the task it just created.
    const double asked = std::round(ttl->get<double>());
    const std::int64_t floor = std::min<std::int64_t>(1000, server_ttl);
    if (asked >= static_cast<double>(server_ttl)) return server_ttl;
    return std::max(floor, static_cast<std::int64_t>(asked));
}

}  // namespace tasks_detail

bool TaskEngine::v1(const RequestContext& ctx) {
    return ctx.revision() == protocol::Revision::v2025_11_25 && !negotiated(ctx);
}

Json TaskEngine::capability(protocol::Revision revision) {
    if (revision != protocol::Revision::v2025_11_25) return nullptr;
    return Json{{"list", Json::object()},
                {"cancel", Json::object()},
                {"requests", {{"tools", {{"call", Json::object()}}}}}};
}

Json TaskEngine::v1_task(const TaskRecord& r) {
    Json out = {{"taskId", r.id},
                {"status", std::string(to_string(r.status))},
                {"createdAt", iso(r.created_at_ms)},
                {"lastUpdatedAt", iso(r.last_updated_at_ms)},
                {"ttl", r.ttl_ms}};
    if (r.poll_interval_ms > 0) out["pollInterval"] = r.poll_interval_ms;
    if (!r.status_message.empty()) out["statusMessage"] = r.status_message;
    return out;
}

Json TaskEngine::v1_outcome(const TaskRecord& r) {
    if ((r.status == TaskStatus::completed || r.status == TaskStatus::failed) && r.result.is_object()) {
        // What the tools/call would have answered (a failed v1 task's isError result too).
        Json out = r.result;
        protocol::shape_tool_result(protocol::Revision::v2025_11_25, out);
        if (!out["_meta"].is_object()) out["_meta"] = Json::object();
        out["_meta"][kRelatedTaskMeta] = Json{{"taskId", r.id}};
        return out;
    }
    if (r.status == TaskStatus::failed && r.error.is_object()) {
        const auto code = r.error.value("code", Json());
        throw RpcError(code.is_number_integer() ? code.get<int>() : protocol::error_code::kInternalError,
                       r.error.value("message", std::string("Internal error: the task failed")),
                       r.error.value("data", Json()));
    }
    if (r.status == TaskStatus::cancelled) {
        // A cancelled request has no answer of its own: the cancellation error stands for it.
        throw RpcError(protocol::error_code::kRequestCancelled,
                       "Request cancelled: the task was cancelled" +
                           (r.status_message.empty() ? std::string() : " (" + r.status_message + ")"));
    }
    throw RpcError(protocol::error_code::kInternalError, "Internal error: the task ended without an outcome");
}

Task<Json> TaskEngine::v1_get(RequestContext& ctx) {
    auto record = co_await find(ctx, task_id_param(ctx));
    co_return v1_task(record);
}

Task<Json> TaskEngine::v1_cancel(RequestContext& ctx) {
    // The Task, now cancelled; a task that had ended already is refused.
    const auto id = task_id_param(ctx);
    auto record = co_await find(ctx, id);
    auto refuse_terminal = [&id](TaskStatus status) {
        return RpcError(protocol::error_code::kInvalidParams,
                        fmt::format("Invalid params: task \"{}\" is {} already; only a working or input_required "
                                    "task can be cancelled",
                                    util::sanitize_for_message(id, 80), to_string(status)));
    };
    if (is_terminal(record.status)) throw refuse_terminal(record.status);
    auto outcome = co_await cancel_record(record);
    if (outcome == TaskUpdate::not_found) throw unknown_task(id);
    auto now = co_await find(ctx, id);
    if (outcome == TaskUpdate::terminal) throw refuse_terminal(now.status);  // its outcome came first
    co_return v1_task(now);
}

Task<Json> TaskEngine::list(RequestContext& ctx) {
    if (!v1(ctx)) throw v1_only("tasks/list");
    std::string cursor;
    if (auto c = ctx.params().find("cursor"); c != ctx.params().end() && !c->is_null()) {
        if (!c->is_string())
            throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: \"cursor\" must be a string");
        cursor = c->get<std::string>();
    }
    TaskPage page;
    bool bad_cursor = false;
    try {
        page = co_await store_.list(owner_of(ctx), cursor, server_.options().page_size);
    } catch (const std::invalid_argument&) {
        bad_cursor = true;
    }
    if (bad_cursor) {
        throw RpcError(protocol::error_code::kInvalidParams,
                       "Invalid params: unknown cursor (use the nextCursor of a tasks/list answer, or start again "
                       "without one)");
    }
    Json tasks = Json::array();
    for (const auto& record : page.tasks) tasks.push_back(v1_task(record));
    Json out = {{"tasks", std::move(tasks)}};
    if (!page.next_cursor.empty()) out["nextCursor"] = page.next_cursor;
    co_return out;
}

Task<Json> TaskEngine::result(RequestContext& ctx) {
    if (!v1(ctx)) throw v1_only("tasks/result");
    auto self = shared_from_this();
    const auto id = task_id_param(ctx);
    std::set<std::string> asked_remotely;  // questions of another replica's task asked here
    for (;;) {
        auto record = co_await find(ctx, id);
        if (is_terminal(record.status)) co_return v1_outcome(record);
        auto it = running_.find(id);
        std::shared_ptr<Running> run = it == running_.end() ? nullptr : it->second;
        if (record.status == TaskStatus::input_required && run && !run->active) {
            if (co_await ask_for_input(ctx, run)) continue;
        }
        if (record.status == TaskStatus::input_required && !run && relay_) {
            if (co_await ask_for_remote_input(ctx, record, asked_remotely)) continue;
        }
        // Woken when the task changes here. A task this process does not run (another
        // replica's, through a shared store) can only be watched by reading its record
        // again, every pollInterval; one run here is read again at the latest when it expires.
        const auto poll = std::chrono::milliseconds(std::max<std::int64_t>(record.poll_interval_ms, 100));
        auto fallback = poll;
        if (run && store_.backend() == "memory") {
            fallback = std::max(poll, std::chrono::milliseconds(record.created_at_ms + record.ttl_ms - now_ms()));
        }
        co_await wait_change(ctx, id, fallback);
    }
}

Task<bool> TaskEngine::ask_for_input(RequestContext& ctx, std::shared_ptr<Running> run) {
    auto self = shared_from_this();
    const std::string id = run->id;
    std::vector<std::pair<std::string, Json>> questions;
    for (const auto& [key, question] : run->pending.items()) {
        if (run->asking.count(key)) continue;  // another tasks/result is asking it
        // Never ask what this client cannot answer; another client of the owner may.
        const char* capability = client_capability_for(question.value("method", ""));
        if (capability && !ctx.client_capabilities().contains(capability)) continue;
        questions.emplace_back(key, question);
    }
    if (questions.empty()) co_return false;
    for (const auto& [key, question] : questions) run->asking.insert(key);
    // Released on every way out, and whoever waits on the task looks again.
    struct Asking {
        TaskEngine& engine;
        std::shared_ptr<Running> run;
        std::vector<std::string> keys;
        ~Asking() {
            for (const auto& k : keys) run->asking.erase(k);
            engine.changed(run->id);
        }
    } asking{*this, run, {}};
    for (const auto& [key, question] : questions) asking.keys.push_back(key);

    for (auto& [key, question] : questions) {
        // Asked and answered elsewhere meanwhile, or the task moved on (cancelled, expired).
        if (!run->pending.contains(key) || run->active || !running_.count(id)) break;
        Json params = question.value("params", Json::object());
        if (!params.is_object()) params = Json::object();
        if (!params["_meta"].is_object()) params["_meta"] = Json::object();
        params["_meta"][kRelatedTaskMeta] = Json{{"taskId", id}};
        Json answer;
        std::string refused;
        try {
            answer = co_await ctx.session().request_client(question.value("method", ""), std::move(params),
                                                           ctx.request_id(), ctx.cancel_token(), ctx.revision());
        } catch (const std::exception& e) {
            // The client refused (an error answer) or did not answer in time: as in a
            // request, the tool sees its question fail, and its call ends as a tool error.
            refused = e.what();
            if (refused.empty()) refused = "the client did not answer";
        }
        if (!refused.empty()) {
            co_await refuse(run, refused);
            break;
        }
        Json answered = Json{{key, std::move(answer)}};
        co_await deliver(id, std::move(answered));
    }
    co_return true;
}

Task<bool> TaskEngine::ask_for_remote_input(RequestContext& ctx, const TaskRecord& record, std::set<std::string>& asked) {
    auto self = shared_from_this();
    if (!record.input_requests.is_object()) co_return false;
    bool any = false;
    for (const auto& [key, question] : record.input_requests.items()) {
        if (asked.count(key)) continue;
        const char* capability = client_capability_for(question.value("method", ""));
        if (capability && !ctx.client_capabilities().contains(capability)) continue;
        asked.insert(key);
        any = true;
        Json params = question.value("params", Json::object());
        if (!params.is_object()) params = Json::object();
        if (!params["_meta"].is_object()) params["_meta"] = Json::object();
        params["_meta"][kRelatedTaskMeta] = Json{{"taskId", record.id}};
        Json answer;
        bool refused = false;
        try {
            answer = co_await ctx.session().request_client(question.value("method", ""), std::move(params),
                                                           ctx.request_id(), ctx.cancel_token(), ctx.revision());
        } catch (const OperationCancelled&) {
            throw;
        } catch (const std::exception&) {
            // The replica that runs the task decides what a question never answered means
            // (its expiry); here the question is simply not answered.
            refused = true;
        }
        if (!refused) relay_(record.id, Json{{key, std::move(answer)}});
    }
    co_return any;
}

Task<void> TaskEngine::refuse(std::shared_ptr<Running> run, const std::string& why) {
    auto self = shared_from_this();
    if (!running_.count(run->id) || run->active) co_return;
    TaskRecord change;
    change.status = TaskStatus::completed;
    change.result = run->tool->error_result(ToolError(ToolErrorCode::internal_error, why)).to_json();
    protocol::shape_tool_result(run->revision, change.result);
    co_await settle(*run, std::move(change));
}

void TaskEngine::tell_status(const Running& run, const TaskRecord& record) {
    if (!run.v1 || !run.session || run.session->closed()) return;
    if (run.session->revision() != protocol::Revision::v2025_11_25) return;
    run.session->notify("notifications/tasks/status", v1_task(record));
}

}  // namespace toolport
