// Upstream: forwarding a client's request (upstream.hpp): each one sent on behalf of its
// client request, which is the upstream's current caller while it runs; tool calls (run
// upstream as tasks when upstream_tasks.cpp says so), resources, prompts, completions and
// subscriptions, their failures as ToolErrors or RpcErrors, and what the upstream echoes of
// the operator's secrets redacted.
#include "providers/gateway/upstream.hpp"

#include "providers/gateway/upstream_tool_errors.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "async/executor.hpp"
#include "client/http_authorizer.hpp"
#include "client/mcp_client.hpp"
#include "providers/gateway/upstream_internal.hpp"
#include "providers/gateway/upstream_span.hpp"
#include "providers/secret_redaction.hpp"
#include "server/input_required.hpp"
#include "server/request_context.hpp"
#include "server/tasks.hpp"
#include "server/tool_error.hpp"
#include "util/json_release.hpp"

namespace toolport::gateway {

using client::McpClient;

namespace upstream_detail {

// A stateless upstream's questions (an InputRequiredResult's inputRequests) asked of our
// client under the same keys: over its session, or — a stateless client — through our own
// InputRequiredResult (ask_client_all throws InputRequired, which ends the call).
Task<Json> relay_input_requests(RequestContext& ctx, Json requests) {
    std::vector<ClientRequest> asks;
    std::vector<std::string> keys;
    if (requests.is_object()) {
        for (auto& [key, request] : requests.items()) {
            std::string method = request.is_object() ? request.value("method", std::string()) : std::string();
            if (const char* capability = client_capability_for(method)) ctx.require_client_capability(capability);
            Json params = request.is_object() && request.contains("params") ? request["params"] : Json::object();
            asks.push_back({std::move(method), std::move(params), key});
            keys.push_back(key);
        }
    }
    auto answers = co_await ctx.ask_client_all(std::move(asks));
    Json responses = Json::object();
    for (std::size_t i = 0; i < keys.size() && i < answers.size(); ++i) responses[keys[i]] = std::move(answers[i]);
    co_return responses;
}

}  // namespace upstream_detail

using upstream_detail::local_task_of;
using upstream_detail::relay_input_requests;

// While a forwarded request runs, it is the upstream's "current caller": the client its
// log messages and requests go to.
struct CallerScope {
    CallerScope(std::list<Upstream::Caller*>& list, RequestContext& ctx, std::uint64_t tag) : list(list) {
        caller.ctx = &ctx;
        caller.tag = tag;
        link = ctx.cancel_token().on_cancel([this, &ctx]() { caller.cancel.cancel(ctx.cancel_token().reason()); });
        list.push_back(&caller);
        it = std::prev(list.end());
    }
    ~CallerScope() {
        caller.ctx->cancel_token().remove(link);
        list.erase(it);
    }
    // The request failed: what was stashed for the client, if anything, replaces the failure.
    void rethrow_stashed() const {
        if (caller.stashed) std::rethrow_exception(caller.stashed);
    }
    std::list<Upstream::Caller*>& list;
    std::list<Upstream::Caller*>::iterator it;
    Upstream::Caller caller;
    CancelToken::CallbackId link = 0;
};

// Holds a client request's notification budget while any part of its forwarding runs.
class Upstream::BudgetHold {
public:
    BudgetHold(Upstream& upstream, const RequestContext& ctx) : upstream_(upstream), ctx_(&ctx) {
        auto& entry = upstream_.call_budgets_[ctx_];
        if (entry.holders++ == 0)
            entry.budget = CallNotificationBudget(upstream_.settings_.output_limits.call_notification_bytes);
    }
    ~BudgetHold() {
        auto it = upstream_.call_budgets_.find(ctx_);
        if (it != upstream_.call_budgets_.end() && --it->second.holders == 0) upstream_.call_budgets_.erase(it);
    }
    BudgetHold(const BudgetHold&) = delete;
    BudgetHold& operator=(const BudgetHold&) = delete;
    CallNotificationBudget* budget() {
        auto it = upstream_.call_budgets_.find(ctx_);
        return it == upstream_.call_budgets_.end() ? nullptr : &it->second.budget;
    }

private:
    Upstream& upstream_;
    const RequestContext* ctx_;
};

Task<Json> Upstream::send_for(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string method, Json params,
                              std::function<void(const Json&)> on_progress, bool tasks, bool raw_result) {
    BudgetHold budget(*this, ctx);
    CallerScope scope(in_flight_, ctx, ++next_tag_);
    scope.caller.budget = budget.budget();
    client::RequestOptions options;
    options.timeout = settings_.request_timeout;
    options.cancel = &scope.caller.cancel;
    options.tag = scope.caller.tag;
    options.raw_result = raw_result;
    // A task the client asked for runs here, at the gateway (server/tasks.hpp): a call
    // forwarded in the request must not be answered with a task of its own, which the
    // gateway would take for the tool's result. Only the requests of a call the gateway
    // runs upstream as a task (call_as_task) declare the extension: in the params' _meta
    // over a session, with the client's capabilities to a stateless upstream.
    if (!client->is_stateless()) {
        // What follows is read by the stateless revision only (RequestOptions): not built
        // for every call over a session.
        if (tasks) params = with_tasks_declared(std::move(params));
    } else {
        // A stateless upstream learns the calling client's capabilities with each request,
        // and asks its questions in the result (relayed to the client under the same keys).
        options.client_capabilities = ctx.client_capabilities();
        if (tasks) {
            if (!options.client_capabilities->is_object()) options.client_capabilities = Json::object();
            Json& ext = (*options.client_capabilities)["extensions"];
            if (!ext.is_object()) ext = Json::object();
            ext[kTasksExtension] = Json::object();
        } else if (auto ext = options.client_capabilities->find("extensions");
                   ext != options.client_capabilities->end() && ext->is_object()) {
            ext->erase(kTasksExtension);
            if (ext->empty()) options.client_capabilities->erase("extensions");
        }
        options.on_input_required = [&ctx](const Json& requests) { return relay_input_requests(ctx, requests); };
        // A stateless upstream logs only at the level a request asks for: ask for all, and
        // our own session filters by what the client chose.
        options.log_level = "debug";
    }
    if (on_progress) {
        // Progress counts against the call's budget too.
        options.on_progress = [this, caller = &scope.caller, on_progress = std::move(on_progress)](const Json& p) {
            if (within_budget(*caller, p.dump(-1, ' ', false, Json::error_handler_t::replace).size())) on_progress(p);
        };
    }
    UpstreamRequestTrace trace(settings_, method, params, ctx);
    Json result;
    std::exception_ptr failure;
    try {
        result = co_await client->request(std::move(method), std::move(params), std::move(options));
        trace.succeeded(result);
    } catch (...) {
        failure = std::current_exception();
        trace.failed(failure);
    }
    // What the upstream asked the client meanwhile and the client has not answered yet
    // (it may answer a call without waiting for that) is given up, and awaited: it waits
    // in ctx, which the caller frees once this returns.
    while (scope.caller.relays > 0) {
        scope.caller.ended = true;
        Completion<bool> done;
        scope.caller.relays_done = done;
        scope.caller.cancel.cancel("the upstream request it was relayed for has ended");
        co_await done;
    }
    // The upstream may answer (its request to the client refused) before the
    // cancellation reaches it: what was stashed still decides.
    if (!failure && scope.caller.stashed) trace.failed(scope.caller.stashed);
    scope.rethrow_stashed();
    if (failure) std::rethrow_exception(failure);
    co_return result;
}

Task<ToolResult> Upstream::call_tool(RequestContext& ctx, std::string tool, Json arguments) {
    // One budget for the whole call, however many upstream requests it takes (a task's polls).
    BudgetHold budget(*this, ctx);
    auto client = per_caller_connections() ? co_await client_for(ctx, "the call") : ready_client("the call");
    const std::string local = local_task_of(ctx);
    const TaskSupport support = task_support_of(tool);
    const bool as_task = support != TaskSupport::none && (!local.empty() || support == TaskSupport::required) &&
                         (runs_tasks() || runs_v1_tasks());
    auto progress = [&ctx](const Json& p) {
        if (!p.is_object() || !p.contains("progress") || !p["progress"].is_number()) return;
        std::optional<double> total;
        if (p.contains("total") && p["total"].is_number()) total = p["total"].get<double>();
        ctx.progress(p["progress"].get<double>(), total, p.value("message", std::string()));
    };
    Json result;
    try {
        if (as_task) {
            result = co_await call_as_task(ctx, std::move(client), tool, std::move(arguments), local, progress);
        } else {
            Json params = Json::object();
            params.emplace("name", tool);
            params.emplace("arguments", std::move(arguments));
            // Progress is asked of the upstream only for a client that asked for it: any other
            // would be dropped here (RequestContext::progress). Its content is passed on unread,
            // as the text it came in (protocol/raw_json.hpp).
            std::function<void(const Json&)> on_progress;
            if (ctx.wants_progress()) on_progress = progress;
            result = co_await send_for(ctx, std::move(client), "tools/call", std::move(params), std::move(on_progress),
                                       /*tasks=*/false, /*raw_result=*/true);
        }
    } catch (const protocol::RpcError& e) {
        // Ours, not the upstream's: the gateway refused what the client answered for it
        // (a tampered requestState while relaying a stateless upstream's questions).
        if (!e.from_peer) throw;
        const std::string message = providers::redact_text(e.message, secrets_);
        // About the client, not the tool (a stateless upstream that needs a capability the
        // client lacks): the client's call ends with it, as from a server of its own.
        if (e.code == -32021) throw RpcError(e.code, message, e.data);
        if (e.code == -32602) {
            throw ToolError(ToolErrorCode::invalid_argument,
                            fmt::format("upstream {} refused the call of {}: {}", name(), tool, message))
                .suggest("Check the arguments against the tool's inputSchema");
        }
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} answered the call of {} with error {}: {}", name(), tool, e.code,
                                    message))
            .transient(false);
    } catch (const client::ResponseTooLarge& e) {
        throw ToolError(ToolErrorCode::response_too_large,
                        fmt::format("upstream {}'s answer to {} passed {} bytes (max_response_bytes); it was not read "
                                    "further",
                                    name(), tool, e.limit))
            .suggest("Ask for less (narrow the query, fewer results), or raise upstreams." + name() +
                     ".max_response_bytes");
    } catch (const client::RequestTimeout& e) {
        throw ToolError(ToolErrorCode::timeout, fmt::format("upstream {} did not answer {} within {} ms (it was told "
                                                            "to stop)",
                                                            name(), tool, e.timeout.count()))
            .transient(true);
    } catch (const client::AuthorizationError& e) {
        ToolError error(ToolErrorCode::upstream_authorization_failed,
                        fmt::format("upstream {}: the call of {} could not be authorized: {}", name(), tool,
                                    providers::redact_text(e.what(), secrets_)));
        if (uses_login()) error.suggest(login_suggestion());
        throw error;
    } catch (const client::TransportError& e) {
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} went away during the call of {}: {}", name(), tool,
                                    providers::redact_text(e.what(), secrets_)))
            .transient(true)
            .suggest("Try again shortly; the gateway reconnects to the upstream by itself");
    } catch (const client::ClientError& e) {
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} answered the call of {} wrongly: {}", name(), tool,
                                    providers::redact_text(e.what(), secrets_)));
    }
    ToolResult answer;
    try {
        answer = ToolResult::from_json(std::move(result));
        // What is left of the reply's result (its envelope, the parts moved out) is freed
        // without nlohmann's heap stack (util/json_release.hpp).
        util::release_json(result);
    } catch (const std::invalid_argument& e) {
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} answered the call of {} with something that is not a tool result: {}",
                                    name(), tool, e.what()));
    }
    // An error result is read (its code and text labelled, its structuredContent checked):
    // its content is expanded from the raw JSON it came in as.
    if (answer.is_error) answer.expand_raw_parts();
    // An upstream that echoes what the gateway sent it (its headers, bearer token, client
    // secret, secret-named env values) does not hand the operator's credentials to clients.
    if (providers::redact_result(answer, secrets_)) {
        providers::check_redacted_output(answer, output_schema_of(tool), tool);
    }
    label_upstream_error(answer, name(), tool);
    co_return answer;
}

Task<Json> Upstream::request(RequestContext& ctx, std::string method, Json params) {
    std::shared_ptr<McpClient> client;
    try {
        client = co_await client_for(ctx, method.c_str());
    } catch (const ToolError& e) {
        throw RpcError(-32603, e.what());
    }
    try {
        // Resources, prompts and completions are answers too: the operator's credentials
        // an upstream echoes are redacted from them as from tool results.
        Json result = co_await send_for(ctx, std::move(client), method, std::move(params));
        providers::redact_json(result, secrets_);
        co_return result;
    } catch (const protocol::RpcError& e) {
        if (!e.from_peer) throw;  // ours (see call_tool)
        throw RpcError(e.code, providers::redact_text(e.message, secrets_), e.data);
    } catch (const client::ClientError& e) {
        throw RpcError(-32603, fmt::format("upstream {}: {}", name(), providers::redact_text(e.what(), secrets_)));
    } catch (const client::ResponseTooLarge& e) {  // not a ClientError
        throw RpcError(-32603, fmt::format("upstream {}: {}", name(), providers::redact_text(e.what(), secrets_)));
    }
}

Task<Json> Upstream::read_resource(RequestContext& ctx, std::string uri) {
    Json result = co_await request(ctx, "resources/read", {{"uri", std::move(uri)}});
    if (!result.is_object() || !result.contains("contents") || !result["contents"].is_array()) {
        throw RpcError(-32603, fmt::format("upstream {} answered resources/read without \"contents\"", name()));
    }
    co_return std::move(result["contents"]);
}

Task<Json> Upstream::get_prompt(RequestContext& ctx, std::string prompt, Json arguments) {
    Json params = {{"name", std::move(prompt)}};
    if (arguments.is_object() && !arguments.empty()) params["arguments"] = std::move(arguments);
    Json result = co_await request(ctx, "prompts/get", std::move(params));
    if (!result.is_object() || !result.contains("messages")) {
        throw RpcError(-32603, fmt::format("upstream {} answered prompts/get without \"messages\"", name()));
    }
    co_return result;
}

Task<Json> Upstream::complete(RequestContext& ctx, Json ref, std::string argument, std::string value, Json context) {
    Json params = {{"ref", std::move(ref)}, {"argument", {{"name", std::move(argument)}, {"value", std::move(value)}}}};
    if (context.is_object() && !context.empty()) params["context"] = {{"arguments", std::move(context)}};
    Json result = co_await request(ctx, "completion/complete", std::move(params));
    if (!result.is_object() || !result.contains("completion")) {
        throw RpcError(-32603, fmt::format("upstream {} answered completion/complete without \"completion\"", name()));
    }
    co_return std::move(result["completion"]);
}

Task<Json> Upstream::forward(RequestContext& ctx, std::string method, Json params) {
    Json result = co_await request(ctx, method, std::move(params));
    if (!result.is_object())
        throw RpcError(-32603, fmt::format("upstream {} answered {} with no object", name(), method));
    co_return result;
}

void Upstream::subscribe(const std::string& uri) {
    if (std::find(subscribed_.begin(), subscribed_.end(), uri) != subscribed_.end()) return;
    subscribed_.push_back(uri);
    if (state() == State::connected && client_ && catalog_.subscriptions) {
        spawn(client_->request("resources/subscribe", {{"uri", uri}}), [](std::optional<Json>, std::exception_ptr) {});
    }
}

void Upstream::unsubscribe(const std::string& uri) {
    auto it = std::find(subscribed_.begin(), subscribed_.end(), uri);
    if (it == subscribed_.end()) return;
    subscribed_.erase(it);
    if (state() == State::connected && client_ && catalog_.subscriptions) {
        spawn(client_->request("resources/unsubscribe", {{"uri", uri}}), [](std::optional<Json>, std::exception_ptr) {});
    }
}

}  // namespace toolport::gateway
