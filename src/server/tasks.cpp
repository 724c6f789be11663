#include "server/tasks.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "observability/iso_time.hpp"
#include "server/input_required.hpp"
#include "server/session.hpp"
#include "protocol/revision_shapes.hpp"
#include "server/stateless.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using stores::TaskRecord;
using stores::TaskStatus;
using stores::TaskUpdate;

// A task whose call is running, or waiting for the client's answers. The record in the
// store is the truth clients see; this is what it takes to run the call again.
struct TaskEngine::Running {
    std::string id;
    std::string owner;
    std::shared_ptr<ServerSession> session;  // the creating request's (it may have closed)
    std::shared_ptr<const ToolSpec> tool;
    Json params;     // the tools/call params every run of the call sees
    Json arguments;
    protocol::Revision revision;
    Json answers = Json::object();  // every answer gathered so far, by input key
    Json pending = Json::object();  // questions not answered yet: key -> {method, params}
    std::unique_ptr<RequestContext> ctx;  // the run in progress; null between runs
    bool active = false;                   // a run is in progress or starting
    bool v1 = false;                       // created in the 2025-11-25 model
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

namespace {

Json missing_extension_data() {
    return Json{{"requiredCapabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}};
}

// A tool's own threshold (kTaskThresholdMeta), when it declares one.
std::optional<std::chrono::milliseconds> tool_task_threshold(const ToolSpec& tool) {
    if (!tool.meta.is_object()) return std::nullopt;
    auto it = tool.meta.find(kTaskThresholdMeta);
    if (it == tool.meta.end() || !it->is_number_integer() || it->get<std::int64_t>() < 0) return std::nullopt;
    return std::chrono::milliseconds(it->get<std::int64_t>());
}

bool is_input_before_task(const ToolSpec& tool) {
    return tool.meta.is_object() && tool.meta.value(kInputBeforeTaskMeta, false);
}

RpcError missing_extension(std::string_view what) {
    return RpcError(protocol::error_code::kMissingRequiredClientCapability,
                    fmt::format("Missing required client capability: {} needs the {} extension", what,
                                kTasksExtension),
                    missing_extension_data());
}

std::string task_id_param(const RequestContext& ctx) {
    auto it = ctx.params().find("taskId");
    if (it == ctx.params().end() || !it->is_string() || it->get<std::string>().empty()) {
        throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: \"taskId\" must be a non-empty string");
    }
    return it->get<std::string>();
}

RpcError unknown_task(const std::string& id) {
    return RpcError(protocol::error_code::kInvalidParams,
                    fmt::format("Invalid params: unknown task \"{}\" (it never existed, expired, or belongs to "
                                "another client)",
                                util::sanitize_for_message(id, 80)));
}

RpcError v1_only(std::string_view method) {
    return RpcError(protocol::error_code::kMethodNotFound,
                    fmt::format("Method not found: {} belongs to the task model of protocol 2025-11-25 (on a session "
                                "that did not declare the {} extension); with the extension, tasks/get carries "
                                "the outcome",
                                method, kTasksExtension));
}

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

std::string iso(std::int64_t epoch_ms) {
    return observability::iso8601_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(epoch_ms)),
                                      true);
}

}  // namespace

TaskEngine::TaskEngine(McpServer& server, stores::TaskStore& store) : server_(server), store_(store) {}

TaskEngine::~TaskEngine() = default;

void TaskEngine::install() {
    // The methods hold the engine weakly: it belongs to the server, which holds them.
    std::weak_ptr<TaskEngine> weak = weak_from_this();
    auto method = [weak](Task<Json> (TaskEngine::*handler)(RequestContext&)) {
        return ExtensionMethod{.handler = [weak, handler](RequestContext& ctx) -> Task<Json> {
            auto self = weak.lock();
            if (!self) throw RpcError(protocol::error_code::kInternalError, "Internal error: the server is stopping");
            co_return co_await ((*self).*handler)(ctx);
        }};
    };
    server_.add_extension(kTasksExtension, Json::object(),
                          {{"tasks/get", method(&TaskEngine::get)},
                           {"tasks/update", method(&TaskEngine::update)},
                           {"tasks/cancel", method(&TaskEngine::cancel)},
                           // v1 only (the extension answers them -32601):
                           {"tasks/result", method(&TaskEngine::result)},
                           {"tasks/list", method(&TaskEngine::list)}});
}

void TaskEngine::shutdown() {
    for (auto& [id, run] : running_) {
        if (run->ctx) run->ctx->cancel_token().cancel("server stopping");
    }
}

bool TaskEngine::negotiated(const RequestContext& ctx) {
    // Declared for the session (initialize) or, in any revision, for this request alone.
    for (const Json* caps : {&ctx.client_capabilities(), &stateless_client_capabilities(ctx.params())}) {
        auto ext = caps->find("extensions");
        if (ext != caps->end() && ext->is_object() && ext->contains(kTasksExtension)) return true;
    }
    return false;
}

bool TaskEngine::v1(const RequestContext& ctx) {
    return ctx.revision() == protocol::Revision::v2025_11_25 && !negotiated(ctx);
}

Json TaskEngine::capability(protocol::Revision revision) {
    if (revision != protocol::Revision::v2025_11_25) return nullptr;
    return Json{{"list", Json::object()},
                {"cancel", Json::object()},
                {"requests", {{"tools", {{"call", Json::object()}}}}}};
}

std::string TaskEngine::task_support(const ToolSpec& tool) {
    if (!tool.execution.is_object()) return {};
    auto it = tool.execution.find("taskSupport");
    if (it == tool.execution.end() || !it->is_string()) return {};
    auto support = it->get<std::string>();
    return support == "optional" || support == "required" ? support : std::string();
}

std::string TaskEngine::owner_of(const RequestContext& ctx) {
    const auto& caller = ctx.caller();
    if (!caller.principal.empty()) return util::named_digest("token:", caller.principal);
    if (!caller.session_id.empty()) return util::named_digest("session:", caller.session_id);
    // Stateless and unauthenticated: there is no identity to tell callers apart, so they
    // share one owner and the task id (128 random bits, never listed to anyone) is the
    // only key to a task. Turn bearer tokens on to isolate callers.
    return "anonymous";
}

std::int64_t TaskEngine::now_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

TaskRecord TaskEngine::new_record(const RequestContext& ctx, const std::string& tool_name) const {
    TaskRecord r;
    r.id = util::random_hex(16);
    r.owner = owner_of(ctx);
    r.status = TaskStatus::working;
    r.created_at_ms = r.last_updated_at_ms = now_ms();
    r.ttl_ms = server_.options().task_ttl.count();
    r.poll_interval_ms = server_.options().task_poll_interval.count();
    r.method = "tools/call";
    r.params = Json{{"name", tool_name}, {"arguments", ctx.params().value("arguments", Json::object())}};
    r.runner = store_.runner_id();
    return r;
}

Json TaskEngine::create_result(const TaskRecord& r) const {
    Json out = {{"resultType", "task"},
                {"taskId", r.id},
                {"status", std::string(stores::to_string(r.status))},
                {"createdAt", iso(r.created_at_ms)},
                {"lastUpdatedAt", iso(r.last_updated_at_ms)},
                {"ttlMs", r.ttl_ms}};
    if (r.poll_interval_ms > 0) out["pollIntervalMs"] = r.poll_interval_ms;
    if (!r.status_message.empty()) out["statusMessage"] = r.status_message;
    return out;
}

Json TaskEngine::detailed(const TaskRecord& r) const {
    Json out = create_result(r);
    out["resultType"] = "complete";
    if (r.status == TaskStatus::completed && !r.result.is_null()) out["result"] = r.result;
    if (r.status == TaskStatus::failed && !r.error.is_null()) out["error"] = r.error;
    if (r.status == TaskStatus::input_required && r.input_requests.is_object()) out["inputRequests"] = r.input_requests;
    return out;
}

Json TaskEngine::v1_task(const TaskRecord& r) {
    Json out = {{"taskId", r.id},
                {"status", std::string(stores::to_string(r.status))},
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

Task<std::optional<Json>> TaskEngine::call_tool(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool,
                                                Json arguments) {
    const auto support = task_support(*tool);
    const bool v1_model = v1(ctx);
    std::optional<std::int64_t> ttl;
    if (v1_model) {
        // 2025-11-25: the client asks for a task with params.task; the tool's taskSupport
        // says whether it may (absent or "forbidden": never; "required": always).
        auto task = ctx.params().find("task");
        const bool augmented = task != ctx.params().end() && !task->is_null();
        if (augmented && !task->is_object()) {
            throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: \"task\" must be an object");
        }
        if (support.empty()) {
            if (!augmented) co_return std::nullopt;
            throw RpcError(protocol::error_code::kMethodNotFound,
                           fmt::format("Method not found: tool \"{}\" cannot be called as a task (it declares no "
                                       "execution.taskSupport); call it without params.task",
                                       tool->name));
        }
        if (!augmented) {
            if (support == "optional") co_return std::nullopt;  // runs in its request
            throw RpcError(protocol::error_code::kMethodNotFound,
                           fmt::format("Method not found: tool \"{}\" must be called as a task (its "
                                       "execution.taskSupport is \"required\"): add params.task, e.g. {{\"ttl\": {}}}",
                                       tool->name, server_.options().task_ttl.count()));
        }
        ttl = v1_ttl(*task, server_.options().task_ttl.count());
    } else {
        if (support.empty()) co_return std::nullopt;
        if (!negotiated(ctx)) {
            if (support == "required") throw missing_extension(fmt::format("tool \"{}\"", tool->name));
            co_return std::nullopt;  // an optional task runs in its request
        }
    }
    // A client that merely supports the extension gets a task only for a call that outlives
    // the threshold: most calls of an "optional" tool take well under a second, and many
    // clients that declare the extension handle a CreateTaskResult poorly. A task is made at
    // once when the tool requires one or the client asks (params.task), and in the
    // 2025-11-25 model, where a task is only ever made when asked.
    auto threshold = server_.options().task_threshold;
    if (auto own = tool_task_threshold(*tool)) threshold = *own;
    const auto task_param = ctx.params().find("task");
    const bool explicit_ask = task_param != ctx.params().end() && !task_param->is_null();
    const bool inline_first = !v1_model && support == "optional" && !explicit_ask;
    if (inline_first && threshold.count() > 0 && !is_input_before_task(*tool)) {
        co_return co_await call_inline_first(ctx, std::move(tool), std::move(arguments), threshold);
    }
    TaskRecord record = new_record(ctx, tool->name);
    if (v1_model) {
        record.model = kTaskModelV1;
        record.ttl_ms = *ttl;
    }
    auto created = [v1_model](const TaskRecord& r, const TaskEngine& self) {
        return v1_model ? Json{{"task", v1_task(r)}} : self.create_result(r);
    };
    // At the store's caps the call is refused as a tool result the model can read.
    auto refused = [&tool, &ctx](const stores::TaskLimitReached& e) {
        ToolError error(ToolErrorCode::rate_limited, fmt::format("Too many tasks: {}", e.what()));
        error.transient(true).suggest("Wait for running tasks to finish or expire, then call again");
        Json reply = tool->error_result(error).to_json();
        protocol::shape_tool_result(ctx.revision(), reply);
        return reply;
    };
    if (is_input_before_task(*tool)) {
        // The tool asks first: its questions go back in this request (InputRequired
        // propagates as an InputRequiredResult), and once every answer is in, its outcome is
        // the task's. The MRTR requestState stays out of the task: the record holds none.
        Json reply = co_await tool_call_reply(server_, ctx, tool, arguments);
        // It ran in the request: a client that did not ask for a task has its answer.
        if (inline_first && threshold.count() > 0) co_return reply;
        record.status = TaskStatus::completed;
        record.result = std::move(reply);
        record.last_updated_at_ms = now_ms();
        if (v1_model) apply_v1_status_rule(record);
    }
    // Stored before it is announced: a tasks/get right after the CreateTaskResult finds it.
    try {
        co_await store_.create(record);
    } catch (const stores::TaskLimitReached& e) {
        co_return refused(e);
    }
    if (stores::is_terminal(record.status)) co_return created(record, *this);  // asked first, ran here

    auto run = prepare_run(ctx, record, std::move(tool), std::move(arguments), v1_model);
    running_[run->id] = run;
    forget_at_expiry(run->id, std::chrono::milliseconds(record.ttl_ms));
    start(run);
    co_return created(record, *this);
}

std::shared_ptr<TaskEngine::Running> TaskEngine::prepare_run(RequestContext& ctx, const TaskRecord& record,
                                                             std::shared_ptr<const ToolSpec> tool, Json arguments,
                                                             bool v1_model) {
    auto run = std::make_shared<Running>();
    run->id = record.id;
    run->owner = record.owner;
    run->session = ctx.session().shared_from_this();
    run->tool = std::move(tool);
    run->arguments = std::move(arguments);
    run->params = ctx.params();
    run->params.erase("requestState");
    run->params.erase("inputResponses");
    // In the extension the request's progress token ends with its response (the
    // CreateTaskResult); in the 2025-11-25 model it stays valid for the task's lifetime, its
    // notifications going to the session's stream for messages of no request (GET).
    if (auto meta = run->params.find("_meta"); !v1_model && meta != run->params.end() && meta->is_object()) {
        meta->erase("progressToken");
    }
    run->v1 = v1_model;
    run->params.erase("task");
    run->created_at_ms = record.created_at_ms;
    run->ttl_ms = record.ttl_ms;
    run->poll_interval_ms = record.poll_interval_ms;
    run->revision = ctx.revision();
    if (!protocol::is_stateless(run->revision)) {
        // Questions travel through the task (inputRequests / tasks/update), the multi
        // round-trip way, also for a session's client: the request that would have carried
        // them over the session is answered already. The run sees the session's
        // capabilities per request, as a stateless request carries them.
        Json& meta = run->params["_meta"];
        if (!meta.is_object()) meta = Json::object();
        meta[meta_key::kProtocolVersion] = std::string(protocol::name(protocol::kLatest));
        meta[meta_key::kClientCapabilities] = ctx.client_capabilities();
        run->revision = protocol::kLatest;
    }
    return run;
}

Task<std::optional<Json>> TaskEngine::call_inline_first(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool,
                                                        Json arguments, std::chrono::milliseconds threshold) {
    auto self = shared_from_this();
    TaskRecord record = new_record(ctx, tool->name);
    auto run = prepare_run(ctx, record, std::move(tool), std::move(arguments), false);
    run->holding = true;
    start(run);
    // The call runs as the task's would; the request waits for it up to the threshold (a
    // cancelled request cancels it).
    try {
        const auto deadline = server_.executor().now() + threshold;
        while (!run->held && server_.executor().now() < deadline) {
            co_await wait_change(ctx, run->id,
                                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline - server_.executor().now()));
        }
    } catch (const OperationCancelled&) {
        if (run->ctx) run->ctx->cancel_token().cancel("the request was cancelled");
        throw;
    }
    if (run->held && run->held->status == TaskStatus::completed) {
        // Answered in time: the CallToolResult, shaped for this request, and no task at all.
        Json reply = std::move(run->held->result);
        protocol::shape_tool_result(ctx.revision(), reply);
        co_return reply;
    }
    if (run->held && run->held->status == TaskStatus::failed && run->held->error.is_object()) {
        const Json& error = run->held->error;
        const auto code = error.value("code", Json());
        throw RpcError(code.is_number_integer() ? code.get<int>() : protocol::error_code::kInternalError,
                       error.value("message", std::string("Internal error")), error.value("data", Json()));
    }
    // Still running, or waiting for the client's answers: from now on it is a task. Its
    // record is stored before the CreateTaskResult announces it; an outcome that arrives
    // meanwhile is held and stored after.
    try {
        co_await store_.create(record);
    } catch (const stores::TaskLimitReached& e) {
        if (run->ctx) run->ctx->cancel_token().cancel("too many tasks");
        ToolError error(ToolErrorCode::rate_limited, fmt::format("Too many tasks: {}", e.what()));
        error.transient(true).suggest("Wait for running tasks to finish or expire, then call again");
        Json reply = run->tool->error_result(error).to_json();
        protocol::shape_tool_result(ctx.revision(), reply);
        co_return reply;
    }
    run->holding = false;
    running_[run->id] = run;
    forget_at_expiry(run->id, std::chrono::milliseconds(record.ttl_ms));
    if (run->held) {
        TaskRecord outcome = std::move(*run->held);
        run->held.reset();
        // The record as settle() leaves it, for the CreateTaskResult.
        record.status = outcome.status;
        record.last_updated_at_ms = now_ms();
        co_await settle(*run, std::move(outcome));
    }
    co_return create_result(record);
}

void TaskEngine::forget_at_expiry(const std::string& id, std::chrono::milliseconds ttl) {
    // Once the record has expired nobody can see or answer the task: a call still running
    // is cancelled (its outcome could not be stored), one waiting for answers is dropped.
    std::weak_ptr<TaskEngine> weak = weak_from_this();
    server_.executor().schedule_after(ttl, [weak, id]() {
        auto self = weak.lock();
        if (!self) return;
        auto it = self->running_.find(id);
        if (it == self->running_.end()) return;
        if (it->second->ctx) it->second->ctx->cancel_token().cancel("the task expired");
        else if (!it->second->active) self->running_.erase(it);
        self->changed(id);
    });
}

void TaskEngine::start(std::shared_ptr<Running> run) {
    run->active = true;
    spawn(execute(std::move(run)), [](std::exception_ptr) {});
}

Task<void> TaskEngine::execute(std::shared_ptr<Running> run) {
    auto self = shared_from_this();  // outlives the run
    Json params = run->params;
    params["inputResponses"] = run->answers;
    run->ctx = std::make_unique<RequestContext>(run->session, protocol::RequestId("task:" + run->id), "tools/call",
                                                std::move(params), run->revision);
    if (run->v1) run->ctx->relate_to_task(run->id);
    TaskRecord change;
    try {
        change.result = co_await tool_call_reply(server_, *run->ctx, run->tool, run->arguments);
        change.status = TaskStatus::completed;
    } catch (const InputRequired& e) {
        change.status = TaskStatus::input_required;
        change.input_requests = e.requests;
        run->answers = e.answered;
        run->pending = e.requests;
    } catch (const OperationCancelled& e) {
        change.status = TaskStatus::cancelled;
        change.status_message = e.what();
    } catch (const RpcError& e) {
        change.status = TaskStatus::failed;
        change.error = Json{{"code", e.code}, {"message", util::sanitize_for_message(e.what(), 2000)}};
        if (!e.data.is_null()) change.error["data"] = e.data;
    } catch (const std::exception& e) {
        change.status = TaskStatus::failed;
        change.error = Json{{"code", protocol::error_code::kInternalError},
                            {"message", "Internal error: " + util::sanitize_for_message(e.what(), 2000)}};
    }
    run->ctx.reset();
    run->active = false;
    co_await settle(*run, std::move(change));
}

Task<void> TaskEngine::settle(Running& run, TaskRecord change) {
    auto self = shared_from_this();
    const std::string id = run.id;
    if (run.holding) {
        // No record yet (call_inline_first): the request that waits for the call takes it.
        run.held = std::move(change);
        changed(id);
        co_return;
    }
    change.id = run.id;
    change.owner = run.owner;
    change.last_updated_at_ms = now_ms();
    if (run.v1) apply_v1_status_rule(change);
    const bool waiting = change.status == TaskStatus::input_required;
    // The record as it will read (v1 status notification).
    const TaskRecord now = run.after(change);
    TaskUpdate outcome = TaskUpdate::not_found;
    try {
        outcome = co_await store_.update(std::move(change));
    } catch (const std::exception& e) {
        spdlog::warn("task {}…: its outcome could not be stored: {}", id.substr(0, 8), e.what());
    }
    if (outcome == TaskUpdate::applied) tell_status(run, now);
    // A terminal record (cancelled first, or expired) ends the run whatever it produced.
    if (!waiting || outcome != TaskUpdate::applied) running_.erase(id);
    changed(id);
}

void TaskEngine::tell_status(const Running& run, const TaskRecord& record) {
    if (!run.v1 || !run.session || run.session->closed()) return;
    if (run.session->revision() != protocol::Revision::v2025_11_25) return;
    run.session->notify("notifications/tasks/status", v1_task(record));
}

void TaskEngine::changed(const std::string& id) {
    auto it = watchers_.find(id);
    if (it == watchers_.end()) return;
    auto waiting = std::move(it->second);
    watchers_.erase(it);
    // Each waiter resumes from the loop, not from inside whoever changed the task.
    for (auto& entry : waiting) {
        server_.executor().post([woke = entry.second]() mutable { woke.set_value(true); });
    }
}

Task<void> TaskEngine::wait_change(RequestContext& ctx, std::string id, std::chrono::milliseconds fallback) {
    auto self = shared_from_this();
    Completion<bool> woke;
    const auto key = ++next_watcher_;
    watchers_[id].emplace(key, woke);
    auto& executor = server_.executor();
    auto cancel_timer = executor.schedule_after(fallback, [woke]() mutable { woke.set_value(true); });
    auto registration = ctx.cancel_token().on_cancel([woke, &executor]() mutable {
        executor.post([woke]() mutable { woke.set_error(std::make_exception_ptr(OperationCancelled())); });
    });
    // Nothing stays behind on any way out: timer, cancellation callback, watcher entry.
    auto forget = [&]() {
        cancel_timer();
        ctx.cancel_token().remove(registration);
        if (auto it = watchers_.find(id); it != watchers_.end()) {
            it->second.erase(key);
            if (it->second.empty()) watchers_.erase(it);
        }
    };
    try {
        co_await woke;
    } catch (...) {
        forget();
        throw;
    }
    forget();
}

Task<TaskRecord> TaskEngine::find(RequestContext& ctx, const std::string& id) {
    auto self = shared_from_this();
    auto record = co_await store_.get(id, owner_of(ctx));
    if (!record) throw unknown_task(id);
    // A task whose replica died (a shared store) would stay working until it expires:
    // whoever looks at it next ends it as failed, so its client can call again.
    if (!stores::is_terminal(record->status) && record->runner != store_.runner_id() && !running_.count(id) &&
        !(co_await store_.runner_alive(record->runner))) {
        TaskRecord change;
        change.id = id;
        change.owner = record->owner;
        change.status = TaskStatus::failed;
        change.status_message = "The replica running this task stopped before the task ended";
        change.error = Json{{"code", protocol::error_code::kInternalError},
                            {"message", "Internal error: the replica running this task stopped before the task ended; "
                                        "call the tool again"}};
        change.last_updated_at_ms = now_ms();
        co_await store_.update(std::move(change));
        spdlog::warn("task {}…: its replica stopped; marked failed", id.substr(0, 8));
        record = co_await store_.get(id, owner_of(ctx));
        if (!record) throw unknown_task(id);
    }
    co_return std::move(*record);
}

Task<Json> TaskEngine::get(RequestContext& ctx) {
    if (v1(ctx)) {
        auto record = co_await find(ctx, task_id_param(ctx));
        co_return v1_task(record);
    }
    if (!negotiated(ctx)) throw missing_extension("tasks/get");
    auto record = co_await find(ctx, task_id_param(ctx));
    co_return detailed(record);
}

Task<Json> TaskEngine::update(RequestContext& ctx) {
    if (!negotiated(ctx)) throw missing_extension("tasks/update");
    const auto id = task_id_param(ctx);
    auto responses = ctx.params().find("inputResponses");
    if (responses == ctx.params().end() || !responses->is_object()) {
        throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: \"inputResponses\" must be an object");
    }
    auto record = co_await find(ctx, id);
    if (record.status == TaskStatus::input_required) {
        Json answers = *responses;
        co_await deliver(id, std::move(answers));
    }
    co_return Json{{"resultType", "complete"}};
}

void TaskEngine::answers_from_elsewhere(std::string task_id, Json responses) {
    if (!running_.count(task_id) || !responses.is_object()) return;  // not run here
    spawn(deliver(std::move(task_id), std::move(responses)), [](std::exception_ptr) {});
}

Task<void> TaskEngine::deliver(std::string id, Json responses) {
    auto self = shared_from_this();
    auto it = running_.find(id);
    if (it == running_.end() && relay_) {
        // Another replica runs it (the store is shared): the answers go there.
        relay_(id, responses);
        co_return;
    }
    if (it == running_.end() || it->second->active) co_return;
    auto run = it->second;
    bool answered = false;
    for (const auto& [key, answer] : responses.items()) {
        // Answers to questions the task did not ask are ignored.
        if (!run->pending.contains(key)) continue;
        run->answers[key] = answer;
        run->pending.erase(key);
        answered = true;
    }
    if (!answered) co_return;
    TaskRecord change;
    change.id = id;
    change.owner = run->owner;
    change.last_updated_at_ms = now_ms();
    const bool complete = run->pending.empty();
    change.status = complete ? TaskStatus::working : TaskStatus::input_required;
    if (!complete) change.input_requests = run->pending;
    const TaskRecord now = run->after(change);
    if (complete) run->active = true;  // no second update starts it twice meanwhile
    auto outcome = co_await store_.update(std::move(change));
    if (complete) {
        run->active = false;
        if (outcome == TaskUpdate::applied) {
            tell_status(*run, now);  // back to working
            start(run);
        } else {
            running_.erase(id);
        }
    }
    changed(id);
}

Task<TaskUpdate> TaskEngine::cancel_record(const TaskRecord& record) {
    auto self = shared_from_this();
    const std::string id = record.id;
    TaskRecord change;
    change.id = id;
    change.owner = record.owner;
    change.status = TaskStatus::cancelled;
    change.status_message = "Cancelled by the client";
    change.last_updated_at_ms = now_ms();
    TaskRecord now = record;
    now.status = change.status;
    now.status_message = change.status_message;
    now.last_updated_at_ms = change.last_updated_at_ms;
    // The store decides a race with the call's own outcome: whichever lands first stays.
    auto outcome = co_await store_.update(std::move(change));
    if (outcome == TaskUpdate::applied) {
        if (auto it = running_.find(id); it != running_.end()) {
            auto run = it->second;
            if (run->ctx) run->ctx->cancel_token().cancel("task cancelled by the client");
            else if (!run->active) running_.erase(it);  // was waiting for answers
            tell_status(*run, now);
        }
        changed(id);
    }
    co_return outcome;
}

Task<Json> TaskEngine::cancel(RequestContext& ctx) {
    if (v1(ctx)) {
        // v1: the Task, now cancelled; a task that had ended already is refused.
        const auto id = task_id_param(ctx);
        auto record = co_await find(ctx, id);
        auto refuse_terminal = [&id](TaskStatus status) {
            return RpcError(protocol::error_code::kInvalidParams,
                            fmt::format("Invalid params: task \"{}\" is {} already; only a working or input_required "
                                        "task can be cancelled",
                                        util::sanitize_for_message(id, 80), stores::to_string(status)));
        };
        if (stores::is_terminal(record.status)) throw refuse_terminal(record.status);
        auto outcome = co_await cancel_record(record);
        if (outcome == TaskUpdate::not_found) throw unknown_task(id);
        auto now = co_await find(ctx, id);
        if (outcome == TaskUpdate::terminal) throw refuse_terminal(now.status);  // its outcome came first
        co_return v1_task(now);
    }
    if (!negotiated(ctx)) throw missing_extension("tasks/cancel");
    const auto id = task_id_param(ctx);
    auto record = co_await find(ctx, id);
    if (!stores::is_terminal(record.status)) co_await cancel_record(record);
    // The same empty acknowledgement for a task that had ended already (idempotent).
    co_return Json{{"resultType", "complete"}};
}

Task<Json> TaskEngine::list(RequestContext& ctx) {
    if (!v1(ctx)) throw v1_only("tasks/list");
    std::string cursor;
    if (auto c = ctx.params().find("cursor"); c != ctx.params().end() && !c->is_null()) {
        if (!c->is_string()) throw RpcError(protocol::error_code::kInvalidParams, "Invalid params: \"cursor\" must be a string");
        cursor = c->get<std::string>();
    }
    stores::TaskPage page;
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
        if (stores::is_terminal(record.status)) co_return v1_outcome(record);
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

Task<bool> TaskEngine::ask_for_remote_input(RequestContext& ctx, const TaskRecord& record,
                                             std::set<std::string>& asked) {
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

}  // namespace toolport
