#include "server/tasks.hpp"

#include <chrono>

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
};

namespace {

Json missing_extension_data() {
    return Json{{"requiredCapabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}};
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
                           {"tasks/cancel", method(&TaskEngine::cancel)}});
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

Task<std::optional<Json>> TaskEngine::call_tool(RequestContext& ctx, std::shared_ptr<const ToolSpec> tool,
                                                Json arguments) {
    const auto support = task_support(*tool);
    if (support.empty()) co_return std::nullopt;
    if (!negotiated(ctx)) {
        if (support == "required") throw missing_extension(fmt::format("tool \"{}\"", tool->name));
        co_return std::nullopt;  // an optional task runs in its request
    }
    TaskRecord record = new_record(ctx, tool->name);
    // At the store's caps the call is refused as a tool result the model can read.
    auto refused = [&tool, &ctx](const stores::TaskLimitReached& e) {
        ToolError error(ToolErrorCode::rate_limited, fmt::format("Too many tasks: {}", e.what()));
        error.transient(true).suggest("Wait for running tasks to finish or expire, then call again");
        Json reply = tool->error_result(error).to_json();
        protocol::shape_tool_result(ctx.revision(), reply);
        return reply;
    };
    if (tool->meta.is_object() && tool->meta.value(kInputBeforeTaskMeta, false)) {
        // The tool asks first: its questions go back in this request (InputRequired
        // propagates as an InputRequiredResult), and once every answer is in, its outcome is
        // the task's. The MRTR requestState stays out of the task: the record holds none.
        Json reply = co_await tool_call_reply(server_, ctx, tool, arguments);
        record.status = TaskStatus::completed;
        record.result = std::move(reply);
        record.last_updated_at_ms = now_ms();
    }
    // Stored before it is announced: a tasks/get right after the CreateTaskResult finds it.
    try {
        co_await store_.create(record);
    } catch (const stores::TaskLimitReached& e) {
        co_return refused(e);
    }
    if (record.status == TaskStatus::completed) co_return create_result(record);  // asked first, ran here

    auto run = std::make_shared<Running>();
    run->id = record.id;
    run->owner = record.owner;
    run->session = ctx.session().shared_from_this();
    run->tool = std::move(tool);
    run->arguments = std::move(arguments);
    run->params = ctx.params();
    run->params.erase("requestState");
    run->params.erase("inputResponses");
    // The request's progress token ends with its response (the CreateTaskResult).
    if (auto meta = run->params.find("_meta"); meta != run->params.end() && meta->is_object()) {
        meta->erase("progressToken");
    }
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
    running_[run->id] = run;
    forget_at_expiry(run->id, std::chrono::milliseconds(record.ttl_ms));
    start(run);
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
    const std::string id = run.id;
    change.id = run.id;
    change.owner = run.owner;
    change.last_updated_at_ms = now_ms();
    const bool waiting = change.status == TaskStatus::input_required;
    TaskUpdate outcome = TaskUpdate::not_found;
    try {
        outcome = co_await store_.update(std::move(change));
    } catch (const std::exception& e) {
        spdlog::warn("task {}…: its outcome could not be stored: {}", id.substr(0, 8), e.what());
    }
    // A terminal record (cancelled first, or expired) ends the run whatever it produced.
    if (!waiting || outcome != TaskUpdate::applied) running_.erase(id);
}

Task<TaskRecord> TaskEngine::find(RequestContext& ctx, const std::string& id) {
    auto record = co_await store_.get(id, owner_of(ctx));
    if (!record) {
        throw RpcError(protocol::error_code::kInvalidParams,
                       fmt::format("Invalid params: unknown task \"{}\" (it never existed, expired, or belongs to "
                                   "another client)",
                                   util::sanitize_for_message(id, 80)));
    }
    co_return std::move(*record);
}

Task<Json> TaskEngine::get(RequestContext& ctx) {
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
    auto it = running_.find(id);
    if (record.status == TaskStatus::input_required && it != running_.end() && !it->second->active) {
        auto run = it->second;
        bool answered = false;
        for (const auto& [key, answer] : responses->items()) {
            // Answers to questions the task did not ask are ignored.
            if (!run->pending.contains(key)) continue;
            run->answers[key] = answer;
            run->pending.erase(key);
            answered = true;
        }
        if (answered) {
            TaskRecord change;
            change.id = id;
            change.owner = run->owner;
            change.last_updated_at_ms = now_ms();
            const bool complete = run->pending.empty();
            change.status = complete ? TaskStatus::working : TaskStatus::input_required;
            if (!complete) change.input_requests = run->pending;
            if (complete) run->active = true;  // no second update starts it twice meanwhile
            auto outcome = co_await store_.update(std::move(change));
            if (complete) {
                run->active = false;
                if (outcome == TaskUpdate::applied) start(run);
                else running_.erase(id);
            }
        }
    }
    co_return Json{{"resultType", "complete"}};
}

Task<Json> TaskEngine::cancel(RequestContext& ctx) {
    if (!negotiated(ctx)) throw missing_extension("tasks/cancel");
    const auto id = task_id_param(ctx);
    auto record = co_await find(ctx, id);
    if (!stores::is_terminal(record.status)) {
        TaskRecord change;
        change.id = id;
        change.owner = record.owner;
        change.status = TaskStatus::cancelled;
        change.status_message = "Cancelled by the client";
        change.last_updated_at_ms = now_ms();
        // The store decides a race with the call's own outcome: whichever lands first stays.
        if (co_await store_.update(std::move(change)) == TaskUpdate::applied) {
            if (auto it = running_.find(id); it != running_.end()) {
                if (it->second->ctx) it->second->ctx->cancel_token().cancel("task cancelled by the client");
                else if (!it->second->active) running_.erase(it);  // was waiting for answers
            }
        }
    }
    // The same empty acknowledgement for a task that had already ended (idempotent).
    co_return Json{{"resultType", "complete"}};
}

}  // namespace toolport
