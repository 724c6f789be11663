// The task engine (tasks.hpp): a task-supporting tools/call made a task, its call run
// detached from the request (and replayed with the answers to its questions), its outcome
// recorded in the TaskStore, and whoever waits for it woken. What each task model answers
// to its clients is in task_extension_model.cpp and task_model_2025_11_25.cpp.
#include "server/tasks.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "observability/iso_time.hpp"
#include "observability/trace_propagation.hpp"
#include "server/input_required.hpp"
#include "server/request_span.hpp"
#include "server/session.hpp"
#include "protocol/revision_shapes.hpp"
#include "server/stateless.hpp"
#include "server/tasks_internal.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using tasks_detail::apply_v1_status_rule;
using tasks_detail::missing_extension;
using tasks_detail::unknown_task;
using tasks_detail::v1_ttl;

namespace {

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

}  // namespace

namespace tasks_detail {

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

std::string iso(std::int64_t epoch_ms) {
    return observability::iso8601_utc(std::chrono::system_clock::time_point(std::chrono::milliseconds(epoch_ms)), true);
}

}  // namespace tasks_detail

TaskEngine::TaskEngine(McpServer& server, TaskStore& store) : server_(server), store_(store) {}

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
    auto refused = [&tool, &ctx](const TaskLimitReached& e) {
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
    } catch (const TaskLimitReached& e) {
        co_return refused(e);
    }
    if (is_terminal(record.status)) co_return created(record, *this);  // asked first, ran here

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
    // The task's run continues the trace of the request that created it (tracing on).
    observability::write_trace_meta(run->params, ctx.trace_context(), ctx.baggage());
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
                                 std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                                       server_.executor().now()));
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
    } catch (const TaskLimitReached& e) {
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

observability::Span TaskEngine::task_span(const Running& run) const {
    const Json* meta = run.ctx->meta();
    auto propagated = meta ? observability::read_trace_meta_members(*meta) : observability::PropagatedTrace{};
    const std::string& tool = run.tool->name;
    auto span = observability::tracer().start_span("tools/call " + tool, observability::SpanKind::internal,
                                                   propagated.parent ? &*propagated.parent : nullptr);
    span.set_attribute("mcp.method.name", "tools/call");
    span.set_attribute("gen_ai.tool.name", tool);
    span.set_attribute("gen_ai.operation.name", "execute_tool");
    span.set_attribute("toolport.task.id", run.id);
    return span;
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
    if (observability::tracer().enabled()) run->ctx->set_trace(task_span(*run), {});
    const auto started = std::chrono::system_clock::now();
    const auto started_steady = std::chrono::steady_clock::now();
    TaskRecord change;
    try {
        change.result = co_await tool_call_reply(server_, *run->ctx, run->tool, run->arguments);
        change.status = TaskStatus::completed;
        if (is_tool_error_result(change.result))
            run->ctx->span().set_error("tool_error", "the tool answered with isError");
    } catch (const InputRequired& e) {
        change.status = TaskStatus::input_required;
        change.input_requests = e.requests;
        run->answers = e.answered;
        run->pending = e.requests;
    } catch (const OperationCancelled& e) {
        change.status = TaskStatus::cancelled;
        change.status_message = e.what();
    } catch (const RpcError& e) {
        run->ctx->span().set_error(std::to_string(e.code), e.what());
        // A protocol error is not the pipeline's to record (a peer's refusal is, as a tool
        // error): the audit log hears of it here, as ServerSession::call_tool tells it of a
        // request's.
        if (const auto& served = server_.served_listener(); served && !e.from_peer) {
            served(*run->ctx, started, started_steady, std::current_exception());
        }
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
    if (!is_terminal(record->status) && record->runner != store_.runner_id() && !running_.count(id) &&
        !(co_await store_.runner_alive(record->runner))) {
        TaskRecord change;
        change.id = id;
        change.owner = record->owner;
        change.status = TaskStatus::failed;
        change.status_message = "The replica running this task stopped before the task ended";
        change.error = Json{{"code", protocol::error_code::kInternalError},
                            {"message",
                             "Internal error: the replica running this task stopped before the task ended; "
                             "call the tool again"}};
        change.last_updated_at_ms = now_ms();
        co_await store_.update(std::move(change));
        spdlog::warn("task {}…: its replica stopped; marked failed", id.substr(0, 8));
        record = co_await store_.get(id, owner_of(ctx));
        if (!record) throw unknown_task(id);
    }
    co_return std::move(*record);
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

Task<TaskUpdate> TaskEngine::cancel_record(const TaskRecord& record, bool by_operator) {
    auto self = shared_from_this();
    const std::string id = record.id;
    TaskRecord change;
    change.id = id;
    change.owner = record.owner;
    change.status = TaskStatus::cancelled;
    change.status_message = by_operator ? "Cancelled by an operator" : "Cancelled by the client";
    change.last_updated_at_ms = now_ms();
    TaskRecord now = record;
    now.status = change.status;
    now.status_message = change.status_message;
    now.last_updated_at_ms = change.last_updated_at_ms;
    // The store decides a race with the call's own outcome: whichever lands first stays.
    auto outcome = co_await store_.update(std::move(change));
    if (outcome == TaskUpdate::applied) {
        const char* why = by_operator ? "task cancelled by an operator" : "task cancelled by the client";
        if (running_.count(id)) {
            stop_cancelled(id, now, why);
        } else if (cancel_relay_ && record.runner != store_.runner_id()) {
            cancel_relay_(id, why);  // another replica runs the call: it stops it
        }
        changed(id);
    }
    co_return outcome;
}

void TaskEngine::stop_cancelled(const std::string& id, const TaskRecord& now, const char* why) {
    auto it = running_.find(id);
    if (it == running_.end()) return;
    auto run = it->second;
    if (run->ctx) {
        run->ctx->cancel_token().cancel(why);
    } else if (!run->active) {
        running_.erase(it);  // was waiting for answers
    }
    tell_status(*run, now);
}

void TaskEngine::cancelled_elsewhere(std::string task_id, std::string why) {
    auto it = running_.find(task_id);
    if (it == running_.end()) return;  // not run here
    const std::string owner = it->second->owner;
    // The record says what the client is told; only a cancelled one stops the call (the
    // message is a hint, not a command).
    spawn(
        [](std::shared_ptr<TaskEngine> self, std::string id, std::string owner, std::string why) -> Task<void> {
            auto record = co_await self->store_.get(id, owner);
            if (!record || record->status != TaskStatus::cancelled) co_return;
            self->stop_cancelled(id, *record, why.c_str());
            self->changed(id);
        }(shared_from_this(), std::move(task_id), owner, std::move(why)),
        [](std::exception_ptr) {});
}

}  // namespace toolport

namespace toolport {

namespace {
// The most unfinished tasks the console lists (and looks through for one to cancel).
constexpr std::size_t kMostListed = 500;
}  // namespace

Task<std::vector<TaskEngine::Live>> TaskEngine::live() {
    auto self = shared_from_this();
    // Copied first: the map may change while the store is asked.
    std::vector<std::shared_ptr<Running>> runs;
    for (const auto& [id, run] : running_) runs.push_back(run);
    std::vector<Live> out;
    std::set<std::string> listed;
    for (const auto& run : runs) {
        // (A cancelled one whose call is still stopping too: it is listed until it has.)
        auto record = co_await store_.get(run->id, run->owner);
        if (!record) continue;
        listed.insert(record->id);
        out.push_back({std::move(*record), run->tool ? run->tool->name : std::string(),
                       run->session ? run->session->caller().session_id : std::string()});
    }
    // Then those of the other replicas sharing the store (in memory: none but these).
    for (auto& record : co_await store_.unfinished(kMostListed)) {
        if (listed.count(record.id) || running_.count(record.id)) continue;
        std::string tool;
        if (record.params.is_object()) {
            if (auto name = record.params.find("name"); name != record.params.end() && name->is_string()) tool = *name;
        }
        out.push_back({std::move(record), std::move(tool), std::string(), false});
    }
    co_return out;
}

Task<bool> TaskEngine::cancel_as_operator(std::string id) {
    auto self = shared_from_this();
    std::optional<TaskRecord> record;
    if (auto it = running_.find(id); it != running_.end()) {
        record = co_await store_.get(id, it->second->owner);
    } else {
        // Another replica's (a shared store): found among the unfinished, owner and all.
        for (auto& r : co_await store_.unfinished(kMostListed)) {
            if (r.id == id) {
                record = std::move(r);
                break;
            }
        }
    }
    if (!record || is_terminal(record->status)) co_return false;
    co_return co_await cancel_record(*record, true) == TaskUpdate::applied;
}

}  // namespace toolport
