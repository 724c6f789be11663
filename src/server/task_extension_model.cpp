// The tasks extension of revision 2026-07-28 (io.modelcontextprotocol/tasks, SEP-2663), as
// its clients see it: whether a request declared it, the CreateTaskResult and the detailed
// record, tasks/get, tasks/update and tasks/cancel. The engine that runs the tasks is in
// tasks.cpp; the 2025-11-25 model's answers to the same methods in task_model_2025_11_25.cpp.
#include "server/tasks.hpp"

#include <fmt/format.h>

#include "server/stateless.hpp"
#include "server/tasks_internal.hpp"

namespace toolport {

using tasks_detail::iso;
using tasks_detail::task_id_param;

namespace {

Json missing_extension_data() {
    return Json{{"requiredCapabilities", {{"extensions", {{kTasksExtension, Json::object()}}}}}};
}

}  // namespace

namespace tasks_detail {

RpcError missing_extension(std::string_view what) {
    return RpcError(protocol::error_code::kMissingRequiredClientCapability,
                    fmt::format("Missing required client capability: {} needs the {} extension", what, kTasksExtension),
                    missing_extension_data());
}

}  // namespace tasks_detail

using tasks_detail::missing_extension;

bool TaskEngine::negotiated(const RequestContext& ctx) {
    // Declared for the session (initialize) or, in any revision, for this request alone.
    for (const Json* caps : {&ctx.client_capabilities(), &stateless_client_capabilities(ctx.params())}) {
        auto ext = caps->find("extensions");
        if (ext != caps->end() && ext->is_object() && ext->contains(kTasksExtension)) return true;
    }
    return false;
}

Json TaskEngine::create_result(const TaskRecord& r) const {
    Json out = {{"resultType", "task"},
                {"taskId", r.id},
                {"status", std::string(to_string(r.status))},
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

Task<Json> TaskEngine::get(RequestContext& ctx) {
    if (v1(ctx)) co_return co_await v1_get(ctx);
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

Task<Json> TaskEngine::cancel(RequestContext& ctx) {
    if (v1(ctx)) co_return co_await v1_cancel(ctx);
    if (!negotiated(ctx)) throw missing_extension("tasks/cancel");
    const auto id = task_id_param(ctx);
    auto record = co_await find(ctx, id);
    if (!is_terminal(record.status)) co_await cancel_record(record);
    // The same empty acknowledgement for a task that had ended already (idempotent).
    co_return Json{{"resultType", "complete"}};
}

}  // namespace toolport
