// Upstream: a tool call run upstream as a task (upstream.hpp, call_tool): created with
// the tasks extension or the 2025-11-25 model's params.task, polled to its end, its
// questions relayed to our client and answered back, cancelled when the call is given up.
#include "providers/gateway/upstream.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "client/mcp_client.hpp"
#include "providers/gateway/upstream_internal.hpp"
#include "providers/secret_redaction.hpp"
#include "server/input_required.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "server/tasks.hpp"
#include "server/tool_error.hpp"
#include "async/asio_executor.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

using client::McpClient;

using upstream_detail::relay_input_requests;

namespace upstream_detail {

// The id of our task a call runs in (server/tasks.cpp runs it as request "task:<id>").
std::string local_task_of(const RequestContext& ctx) {
    const auto& id = ctx.request_id();
    if (!id.is_string()) return {};
    const auto& text = id.get_ref<const std::string&>();
    return text.rfind("task:", 0) == 0 ? text.substr(5) : std::string();
}

}  // namespace upstream_detail

namespace {

constexpr std::int64_t kMinPollMs = 50;
constexpr std::int64_t kMaxPollMs = 5000;
constexpr std::int64_t kDefaultPollMs = 500;

std::int64_t poll_interval_of(const Json& task, std::int64_t fallback) {
    auto it = task.find("pollIntervalMs");
    if (it == task.end() || !it->is_number()) return fallback;
    return std::clamp<std::int64_t>(it->get<std::int64_t>(), kMinPollMs, kMaxPollMs);
}

Task<void> send_and_forget(std::shared_ptr<McpClient> client, std::string method, Json params,
                           client::RequestOptions options) {
    co_await client->request(std::move(method), std::move(params), std::move(options));
}

}  // namespace

bool Upstream::runs_tasks() const {
    if (!client_) return false;
    const Json& caps = client_->server_capabilities();
    auto ext = caps.find("extensions");
    return ext != caps.end() && ext->is_object() && ext->contains(kTasksExtension);
}

bool Upstream::runs_v1_tasks() const {
    if (!client_ || client_->is_stateless() || runs_tasks()) return false;
    const Json& caps = client_->server_capabilities();
    auto tasks = caps.find("tasks");
    if (tasks == caps.end() || !tasks->is_object()) return false;
    auto requests = tasks->find("requests");
    if (requests == tasks->end() || !requests->is_object()) return false;
    auto tools = requests->find("tools");
    return tools != requests->end() && tools->is_object() && tools->contains("call");
}

void Upstream::index_tools() {
    tool_index_.clear();
    for (std::size_t i = 0; i < catalog_.tools.size(); ++i) {
        auto name = catalog_.tools[i].find("name");
        if (name != catalog_.tools[i].end() && name->is_string()) tool_index_.emplace(name->get<std::string>(), i);
    }
}

const Json* Upstream::listed_tool(const std::string& name) const {
    auto it = tool_index_.find(name);
    return it == tool_index_.end() ? nullptr : &catalog_.tools[it->second];
}

Json Upstream::output_schema_of(const std::string& name) const {
    const Json* tool = listed_tool(name);
    return tool ? tool->value("outputSchema", Json()) : Json(nullptr);
}

Upstream::TaskSupport Upstream::task_support_of(const std::string& name) const {
    const Json* tool = listed_tool(name);
    if (!tool || !tool->is_object()) return TaskSupport::none;
    auto execution = tool->find(std::string_view("execution"));
    if (execution == tool->end() || !execution->is_object()) return TaskSupport::none;
    auto support = execution->find(std::string_view("taskSupport"));
    if (support == execution->end() || !support->is_string()) return TaskSupport::none;
    const auto& text = support->get_ref<const std::string&>();
    if (text == "optional") return TaskSupport::optional;
    if (text == "required") return TaskSupport::required;
    return TaskSupport::none;
}

Json Upstream::with_tasks_declared(Json params) {
    if (!params.is_object()) params = Json::object();
    Json& meta = params["_meta"];
    if (!meta.is_object()) meta = Json::object();
    Json& caps = meta[meta_key::kClientCapabilities];
    if (!caps.is_object()) caps = Json::object();
    caps["extensions"][kTasksExtension] = Json::object();
    return params;
}

void Upstream::cancel_upstream_task(const std::shared_ptr<McpClient>& client, const std::string& id, bool v1) {
    if (!client || !client->is_open()) return;
    client::RequestOptions options;
    options.timeout = settings_.request_timeout;
    Json params = {{"taskId", id}};
    if (v1) {
        // the revision's own method, no extension to declare
    } else if (client->is_stateless()) {
        options.client_capabilities = Json{{"extensions", {{kTasksExtension, Json::object()}}}};
    } else {
        params = with_tasks_declared(std::move(params));
    }
    spawn(send_and_forget(client, "tasks/cancel", std::move(params), std::move(options)),
          [name = name(), id](std::exception_ptr error) {
              if (!error) return;
              try {
                  std::rethrow_exception(error);
              } catch (const std::exception& e) {
                  spdlog::info("upstream {}: cancelling its task {}… failed: {}", name, id.substr(0, 8), e.what());
              } catch (...) {}
          });
}

Task<Json> Upstream::call_as_v1_task(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string tool,
                                     Json arguments, std::function<void(const Json&)> on_progress) {
    const auto ttl = ctx.session().server().options().task_ttl;
    Json created = co_await send_for(
        ctx, client, "tools/call",
        {{"name", tool}, {"arguments", std::move(arguments)}, {"task", {{"ttl", ttl.count()}}}}, std::move(on_progress));
    // Answered in the request after all: that is the call's result.
    if (!created.is_object() || !created.contains("task") || !created["task"].is_object()) co_return created;
    Json task = std::move(created["task"]);
    auto id_of = task.find("taskId");
    if (id_of == task.end() || !id_of->is_string() || id_of->get_ref<const std::string&>().empty()) {
        throw client::ClientError("it answered with a task without a taskId");
    }
    const std::string id = id_of->get<std::string>();
    auto interval = [](const Json& t) {
        auto it = t.find("pollInterval");
        if (it == t.end() || !it->is_number()) return kDefaultPollMs;
        return std::clamp<std::int64_t>(it->get<std::int64_t>(), kMinPollMs, kMaxPollMs);
    };
    try {
        for (;;) {
            const std::string status = task.value("status", std::string());
            if (status == "working") {
                co_await ctx.sleep(std::chrono::milliseconds(interval(task)));
                task = co_await send_for(ctx, client, "tasks/get", {{"taskId", id}});
                if (!task.is_object()) throw client::ClientError("tasks/get answered something that is not a Task");
                continue;
            }
            if (status == "cancelled") {
                throw OperationCancelled(fmt::format("upstream {} cancelled the task", name()));
            }
            if (status != "input_required" && status != "completed" && status != "failed") {
                throw client::ClientError(
                    fmt::format("tasks/get answered status \"{}\"", util::sanitize_for_message(status, 40)));
            }
            // tasks/result waits for the end, asking its questions on the way (relayed to our
            // client as any request of the upstream's during a call), and answers what the
            // call would have: the CallToolResult, or its JSON-RPC error.
            Json result;
            try {
                result = co_await send_for(ctx, client, "tasks/result", {{"taskId", id}});
            } catch (const RpcError& e) {
                if (!e.from_peer) throw;
                // The task's protocol error, as the upstream said it: our task fails with it.
                throw RpcError(e.code, providers::redact_text(e.message, secrets_), e.data);
            }
            if (result.is_object()) {
                if (auto meta = result.find("_meta"); meta != result.end() && meta->is_object()) {
                    meta->erase("io.modelcontextprotocol/related-task");
                    if (meta->empty()) result.erase("_meta");
                }
            }
            co_return result;
        }
    } catch (const InputRequired&) {
        // Our client answers in our task's next run, which calls the upstream anew; the
        // task that asked is given up.
        cancel_upstream_task(client, id, true);
        throw;
    } catch (...) {
        cancel_upstream_task(client, id, true);
        throw;
    }
}

Task<Json> Upstream::call_as_task(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string tool,
                                  Json arguments, std::string local, std::function<void(const Json&)> on_progress) {
    if (!runs_tasks()) {
        co_return co_await call_as_v1_task(ctx, std::move(client), std::move(tool), std::move(arguments),
                                           std::move(on_progress));
    }
    const std::string owner = TaskEngine::owner_of(ctx);
    if (auto it = forwarded_.find(local); it != forwarded_.end()) {
        if (it->second.owner != owner) {
            // Not the caller of our task that has this id: it runs its own call, apart.
            local.clear();
        } else if (it->second.via.lock() == client) {
            // Our task runs its call again, now with our client's answers: they go to the
            // upstream task that asked, which goes on.
            const std::string id = it->second.upstream_id;
            if (!it->second.pending.empty()) {
                Json responses = co_await relay_input_requests(ctx, it->second.pending);
                try {
                    co_await send_for(ctx, client, "tasks/update", {{"taskId", id}, {"inputResponses", responses}}, {},
                                      true);
                } catch (const InputRequired&) {
                    throw;
                } catch (const RpcError& e) {
                    if (!e.from_peer) throw;
                    forwarded_.erase(local);
                    cancel_upstream_task(client, id);
                    throw ToolError(ToolErrorCode::upstream_error,
                                    fmt::format("upstream {} refused the answers to its task {}…: error {}: {}", name(),
                                                id.substr(0, 8), e.code, providers::redact_text(e.message, secrets_)));
                } catch (...) {
                    forwarded_.erase(local);
                    cancel_upstream_task(client, id);
                    throw;
                }
                if (auto again = forwarded_.find(local); again != forwarded_.end())
                    again->second.pending = Json::object();
            }
            co_return co_await follow_task(ctx, std::move(client), id, std::move(local), kMinPollMs);
        } else {
            forwarded_.erase(it);  // made on a connection that has been lost: it cannot be reached
        }
    }
    Json created = co_await send_for(ctx, client, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}},
                                     std::move(on_progress), true);
    // The upstream may answer in the request (a tool that asks first, or one it runs at once).
    if (!created.is_object() || created.value("resultType", Json()) != "task") co_return created;
    auto id = created.find("taskId");
    if (id == created.end() || !id->is_string() || id->get_ref<const std::string&>().empty()) {
        throw client::ClientError("it answered with a task without a taskId");
    }
    const std::string upstream_id = id->get<std::string>();
    if (!local.empty()) {
        forwarded_[local] = ForwardedTask{upstream_id, client, owner, Json::object()};
        // Our task's record expires after task_ttl: by then nobody can run its call again.
        std::weak_ptr<Upstream> weak = weak_from_this();
        std::weak_ptr<McpClient> weak_client = client;
        executor_.schedule_after(ctx.session().server().options().task_ttl, [weak, weak_client, local, upstream_id]() {
            auto self = weak.lock();
            if (!self) return;
            auto it = self->forwarded_.find(local);
            if (it == self->forwarded_.end() || it->second.upstream_id != upstream_id) return;
            self->forwarded_.erase(it);
            self->cancel_upstream_task(weak_client.lock(), upstream_id);
        });
    }
    const std::string status = created.value("status", std::string());
    co_return co_await follow_task(ctx, std::move(client), upstream_id, std::move(local),
                                   status == "working" ? poll_interval_of(created, kDefaultPollMs) : 0);
}

Task<Json> Upstream::follow_task(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string id,
                                 std::string local, std::int64_t interval_ms) {
    std::int64_t wait = interval_ms;
    try {
        for (;;) {
            if (wait > 0) co_await ctx.sleep(std::chrono::milliseconds(wait));
            Json task = co_await send_for(ctx, client, "tasks/get", {{"taskId", id}}, {}, true);
            const std::string status = task.is_object() ? task.value("status", std::string()) : std::string();
            wait = poll_interval_of(task, kDefaultPollMs);
            if (status == "working") continue;
            if (status == "completed") {
                forwarded_.erase(local);
                auto result = task.find("result");
                if (result == task.end() || !result->is_object()) {
                    throw client::ClientError("its completed task " + id.substr(0, 8) + "… carries no result");
                }
                co_return std::move(*result);
            }
            if (status == "failed") {
                forwarded_.erase(local);
                const Json error = task.value("error", Json::object());
                const int code = error.is_object() && error.contains("code") && error["code"].is_number_integer()
                                     ? error["code"].get<int>()
                                     : protocol::error_code::kInternalError;
                std::string message = error.is_object() ? error.value("message", std::string()) : std::string();
                if (message.empty()) message = fmt::format("upstream {}'s task failed", name());
                // The upstream's protocol error, as it said it: our task fails with it.
                throw RpcError(code, providers::redact_text(std::move(message), secrets_),
                               error.is_object() ? error.value("data", Json()) : Json());
            }
            if (status == "cancelled") {
                forwarded_.erase(local);
                throw OperationCancelled(fmt::format("upstream {} cancelled the task{}", name(),
                                                     task.contains("statusMessage") && task["statusMessage"].is_string()
                                                         ? ": " + task["statusMessage"].get<std::string>()
                                                         : std::string()));
            }
            if (status == "input_required") {
                Json requests = task.value("inputRequests", Json::object());
                if (!requests.is_object() || requests.empty()) continue;  // asked and answered meanwhile
                if (auto it = forwarded_.find(local); it != forwarded_.end()) it->second.pending = requests;
                // Our client is asked under the same keys: over its session it answers now;
                // inside our task (or for a stateless client) this throws InputRequired,
                // and the answers come back when the call runs again (call_as_task).
                Json responses = co_await relay_input_requests(ctx, requests);
                co_await send_for(ctx, client, "tasks/update", {{"taskId", id}, {"inputResponses", responses}}, {},
                                  true);
                if (auto it = forwarded_.find(local); it != forwarded_.end()) it->second.pending = Json::object();
                wait = 0;
                continue;
            }
            throw client::ClientError(
                fmt::format("tasks/get answered status \"{}\"", util::sanitize_for_message(status, 40)));
        }
    } catch (const InputRequired&) {
        // Our task waits for answers, the upstream one for the same. Outside a task of ours
        // (a stateless client's call, which it retries with the answers) nothing resumes
        // the upstream task: the retry starts another.
        if (local.empty()) cancel_upstream_task(client, id);
        throw;
    } catch (const RpcError& e) {
        if (!e.from_peer) throw;  // the task's own error (failed), or ours about the client's answers
        // tasks/get or tasks/update refused (the task expired upstream, or was lost with
        // a session): the call failed upstream, not because of its arguments.
        forwarded_.erase(local);
        cancel_upstream_task(client, id);
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} refused to go on with its task {}…: error {}: {}", name(),
                                    id.substr(0, 8), e.code, providers::redact_text(e.message, secrets_)))
            .transient(true);
    } catch (const OperationCancelled&) {
        // Our call was cancelled (tasks/cancel, its deadline, the server stopping), or the
        // upstream's task was: cancelling a task that ended is acknowledged all the same.
        forwarded_.erase(local);
        cancel_upstream_task(client, id);
        throw;
    } catch (...) {
        forwarded_.erase(local);
        cancel_upstream_task(client, id);
        throw;
    }
}

}  // namespace toolport::gateway
