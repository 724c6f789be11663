// The MCP methods a server answers: lists with pagination, tool calls, resource reads,
// prompts, completion, logging level, discovery.
#include <fmt/format.h>

#include "async/executor.hpp"
#include "protocol/revision_shapes.hpp"
#include "server/error_result_guard.hpp"
#include "server/input_required.hpp"
#include "server/tool_error.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "server/tasks.hpp"
#include "util/base64.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using namespace protocol;

namespace {

const Json& param(const Json& params, const char* key) {
    static const Json null_json;
    if (!params.is_object()) return null_json;
    // Looked up by a view: a C-string key is measured at every comparison.
    const auto& members = params.get_ref<const Json::object_t&>();
    auto it = members.find(std::string_view(key));
    return it == members.end() ? null_json : it->second;
}

std::string required_string(const Json& params, const char* key) {
    const Json& v = param(params, key);
    if (!v.is_string()) {
        throw RpcError(error_code::kInvalidParams,
                       fmt::format("Invalid params: \"{}\" must be a string{}", key, v.is_null() ? " (missing)" : ""));
    }
    return v.get<std::string>();
}

// Cursors are opaque to clients: base64url of the last key of the previous page, so a
// page boundary survives entries being added or removed between calls.
std::optional<std::string> read_cursor(const Json& params) {
    const Json& c = param(params, "cursor");
    if (c.is_null()) return std::nullopt;
    if (!c.is_string()) throw RpcError(error_code::kInvalidParams, "Invalid params: \"cursor\" must be a string");
    auto decoded = util::base64url_decode(c.get<std::string>());
    if (!decoded || decoded->empty()) {
        throw RpcError(error_code::kInvalidParams, "Invalid params: unknown cursor; start again without one");
    }
    return decoded;
}

template <typename Map>
Json list_page(const Map& items, const Json& params, std::size_t page_size, const char* field, Revision revision,
               std::string_view kind) {
    auto cursor = read_cursor(params);
    auto it = cursor ? items.upper_bound(*cursor) : items.begin();
    Json page = Json::array();
    std::string last;
    for (; it != items.end() && page.size() < page_size; ++it) {
        Json definition = it->second->definition();
        shape_definition(revision, kind, definition);
        page.push_back(std::move(definition));
        last = it->first;
    }
    Json result = {{field, std::move(page)}};
    if (it != items.end()) result["nextCursor"] = util::base64url_encode(last);
    return result;
}

// `items` as `caller` sees them: every one, or (in a view, or with an OAuth token under a
// scope policy) those McpServer::visible accepts, in the same pages with the same cursors.
template <typename Map>
Json visible_page(const McpServer& server, const CallerIdentity& caller, const Map& items, const Json& params,
                  const char* field, Revision revision, std::string_view kind) {
    const std::size_t page_size = server.options().page_size;
    if (!server.filters(caller)) return list_page(items, params, page_size, field, revision, kind);
    Map seen;
    for (const auto& [key, entry] : items) {
        if (server.visible(caller, *entry)) seen.emplace(key, entry);
    }
    return list_page(seen, params, page_size, field, revision, kind);
}

[[noreturn]] void resource_not_found(Revision revision, const std::string& uri) {
    throw RpcError(resource_not_found_code(revision),
                   fmt::format("Resource not found: {}", util::sanitize_for_message(uri, 300)), Json{{"uri", uri}});
}

[[noreturn]] void unknown_prompt(const std::string& name) {
    throw RpcError(error_code::kInvalidParams, fmt::format("Unknown prompt: {}", util::sanitize_for_message(name, 128)));
}

void add_cacheable(Json& result, const RequestContext& ctx, const McpServer& server) {
    if (is_stateless(ctx.revision())) mark_cacheable(result, server);
}

// A call an access rule denies (McpServer::access): answered with the tool error, and
// recorded by the audit log as denied (ServerSession::call_tool).
struct ForbiddenCall {
    std::shared_ptr<const ToolSpec> tool;
    ToolError error;
};

ToolError forbidden(const CallerIdentity& caller, const ToolSpec& tool, const auth::AccessDecision& decision,
                    const auth::AccessPolicy& policy) {
    const auto who = auth::access_principal(caller.subject, caller.principal, caller.session_id == "stdio",
                                            policy.local_principal());
    const auto name = util::sanitize_for_message(tool.name, 128);
    auto message = decision.rule
                       ? fmt::format("Forbidden: the access rule \"{}\" denies {} the tool {}", decision.rule->name,
                                     util::sanitize_for_message(who, 128), name)
                       : fmt::format("Forbidden: no access rule allows {} the tool {}, and access.default is deny",
                                     util::sanitize_for_message(who, 128), name);
    ToolError error(ToolErrorCode::tool_forbidden, message);
    error.detail("rule", decision.rule ? Json(decision.rule->name) : Json("access.default"));
    error.detail("principal", std::string(who));
    return error;
}

}  // namespace

Task<Json> ServerSession::ping(RequestContext&) { co_return Json::object(); }

Task<Json> ServerSession::call_extension(RequestContext& ctx) {
    const ExtensionMethod* method = server_.extension_method(ctx.method());
    // An extension of a source the caller does not see does not exist for it.
    if (method && !server_.source_visible(caller(), method->source)) method = nullptr;
    if (!method) throw RpcError(error_code::kMethodNotFound, "Method not found: " + ctx.method());
    Json result = co_await method->handler(ctx);
    if (method->cacheable) add_cacheable(result, ctx, server_);
    co_return result;
}

Task<Json> ServerSession::set_log_level(RequestContext& ctx) {
    auto text = required_string(ctx.params(), "level");
    auto level = parse_log_level(text);
    if (!level) {
        throw RpcError(error_code::kInvalidParams,
                       fmt::format("Invalid params: unknown log level \"{}\"; use one of debug, info, notice, "
                                   "warning, error, critical, alert, emergency",
                                   util::sanitize_for_message(text, 40)));
    }
    min_log_level_ = *level;
    co_return Json::object();
}

Task<Json> ServerSession::list_tools(RequestContext& ctx) {
    co_await server_.wait_for_sources();
    Json result = visible_page(server_, caller(), server_.registry().tools(), ctx.params(), "tools", ctx.revision(),
                               "tool");
    add_cacheable(result, ctx, server_);
    co_return result;
}

Task<Json> tool_call_reply(McpServer& server, RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                           const Json& arguments, bool raw_ok) {
    Json reply;
    try {
        ToolResult result = co_await server.invoke_tool(ctx, tool, arguments);
        // An error result a source produced itself (an upstream's, passed through) gets the
        // same guarantee as the errors rendered by error_result.
        guard_error_result(*tool, result);
        if (!raw_ok) result.expand_raw_parts();
        reply = std::move(result).to_json();  // the result is spent: move its parts, no deep copy
    } catch (const RpcError& e) {
        if (!e.from_peer) throw;
        // The client refused what the tool asked of it (sampling, elicitation).
        reply = tool->error_result(ToolError(ToolErrorCode::internal_error, e.what())).to_json();
    } catch (const InputRequired&) {
        throw;
    } catch (const OperationCancelled&) {
        throw;
    } catch (const ToolError& e) {
        reply = tool->error_result(e).to_json();
    } catch (const std::exception& e) {
        // A failing tool is a tool result the model can read, never a dropped request.
        reply = tool->error_result(ToolError(ToolErrorCode::internal_error, e.what())).to_json();
    }
    shape_tool_result(ctx.revision(), reply);
    co_return reply;
}

Task<Json> ServerSession::call_tool_inner(RequestContext& ctx) {
    auto name = required_string(ctx.params(), "name");
    auto tool = server_.registry().tool_ptr(name);
    if (!tool) {
        // A host may call a tool it knows from an earlier run before its source has loaded.
        co_await server_.wait_for_sources();
        tool = server_.registry().tool_ptr(name);
    }
    // A quarantined tool: its stand-in answers with the reason (server.hpp, withhold_tool).
    if (!tool) tool = server_.withheld_tool(name);
    if (tool && !server_.in_view(caller().view, *tool)) tool = nullptr;  // not in this client's view
    if (!tool) {
        throw RpcError(error_code::kInvalidParams,
                       fmt::format("Unknown tool: {}", util::sanitize_for_message(name, 128)));
    }
    // The HTTP transport refuses such a call with 403 before it gets here (the step-up
    // challenge); this is the answer where there is no HTTP status to give (a token that
    // changed between requests of one batch, other transports).
    if (auto missing = server_.missing_scopes(caller(), *tool); !missing.empty()) {
        auto needed = auth::scope_union(*caller().scopes, server_.tool_scopes(*tool));
        throw RpcError(error_code::kInvalidRequest,
                       fmt::format("Forbidden: the access token lacks the scope(s) {} that the tool {} needs",
                                   auth::join_scopes(missing), util::sanitize_for_message(name, 128)),
                       Json{{"error", "insufficient_scope"}, {"scope", auth::join_scopes(needed)}});
    }
    // Hidden from this caller's tools/list, but called by name: a specific refusal (not
    // "Unknown tool"), so that whoever runs the server sees which rule to change.
    if (const auto* policy = server_.access_policy()) {
        if (auto decision = server_.access(caller(), *tool); !decision.allowed) {
            throw ForbiddenCall{tool, forbidden(caller(), *tool, decision, *policy)};
        }
    }
    const Json& args = param(ctx.params(), "arguments");
    if (!args.is_null() && !args.is_object()) {
        throw RpcError(error_code::kInvalidParams, "Invalid params: \"arguments\" must be an object");
    }
    static const Json empty = Json::object();
    if (auto* tasks = server_.tasks(); tasks && (!tool->execution.is_null() || ctx.params().contains("task"))) {
        // A task-supporting tool, for a client that declared the tasks extension, or one
        // asked for as a task (params.task, 2025-11-25): answered with a CreateTaskResult
        // while the call runs on (or refused when the tool and the request disagree).
        if (auto created = co_await tasks->call_tool(ctx, tool, args.is_null() ? empty : args)) co_return *created;
    }
    co_return co_await tool_call_reply(server_, ctx, tool, args.is_null() ? empty : args, /*raw_ok=*/true);
}

Task<Json> ServerSession::list_resources(RequestContext& ctx) {
    co_await server_.wait_for_sources();
    Json result = visible_page(server_, caller(), server_.registry().resources(), ctx.params(), "resources",
                               ctx.revision(), "resource");
    add_cacheable(result, ctx, server_);
    co_return result;
}

Task<Json> ServerSession::list_resource_templates(RequestContext& ctx) {
    co_await server_.wait_for_sources();
    // Templates keep registration order; index them by their pattern for the cursor.
    std::map<std::string, std::shared_ptr<const ResourceTemplateSpec>> by_pattern;
    for (const auto& t : server_.registry().resource_templates()) by_pattern.emplace(t->uri_template, t);
    Json result = visible_page(server_, caller(), by_pattern, ctx.params(), "resourceTemplates", ctx.revision(),
                               "resourceTemplate");
    add_cacheable(result, ctx, server_);
    co_return result;
}

Task<Json> ServerSession::read_resource_inner(RequestContext& ctx) {
    auto uri = required_string(ctx.params(), "uri");
    const auto& registry = server_.registry();
    // A resource or template the caller cannot see is passed over, as if it were not there.
    auto accept = [this](const ResourceTemplateSpec& t) { return server_.visible(caller(), t); };
    Json contents;
    if (auto it = registry.resources().find(uri);
        it != registry.resources().end() && server_.visible(caller(), *it->second)) {
        auto keep = it->second;  // survives removal during the read
        const Json no_variables = Json::object();
        contents = co_await keep->reader(ctx, uri, no_variables);
    } else if (auto match = registry.match_template(uri, accept)) {
        auto keep = match->first;  // survives removal during the read
        contents = co_await keep->reader(ctx, uri, match->second);
    } else if (auto withheld = server_.withheld_template_for(uri, accept)) {
        // Only a quarantined template matches: its stand-in says why (server.hpp).
        const Json no_variables = Json::object();
        contents = co_await withheld->reader(ctx, uri, no_variables);
    } else {
        resource_not_found(ctx.revision(), uri);
    }
    Json result = {{"contents", std::move(contents)}};
    add_cacheable(result, ctx, server_);
    co_return result;
}

Task<Json> ServerSession::subscribe(RequestContext& ctx) {
    auto uri = required_string(ctx.params(), "uri");
    // Only to what the caller could read: a URI no resource or template serves, or one it
    // cannot see, is "Resource not found" as in resources/read (and is not passed upstream).
    if (!server_.resource_visible(caller(), uri)) resource_not_found(ctx.revision(), uri);
    if (subscriptions_.insert(uri).second) server_.subscription_changed(uri, true);
    co_return Json::object();
}

Task<Json> ServerSession::unsubscribe(RequestContext& ctx) {
    auto uri = required_string(ctx.params(), "uri");
    if (subscriptions_.erase(uri) > 0) server_.subscription_changed(uri, false);
    co_return Json::object();
}

Task<Json> ServerSession::list_prompts(RequestContext& ctx) {
    co_await server_.wait_for_sources();
    Json result = visible_page(server_, caller(), server_.registry().prompts(), ctx.params(), "prompts", ctx.revision(),
                               "prompt");
    add_cacheable(result, ctx, server_);
    co_return result;
}

Task<Json> ServerSession::get_prompt_inner(RequestContext& ctx) {
    auto name = required_string(ctx.params(), "name");
    auto it = server_.registry().prompts().find(name);
    std::shared_ptr<const PromptSpec> prompt;
    if (it != server_.registry().prompts().end() && server_.visible(caller(), *it->second)) prompt = it->second;
    if (!prompt) {
        // A quarantined prompt: its stand-in answers with the reason (server.hpp).
        auto withheld = server_.withheld_prompt(name);
        if (!withheld || !server_.visible(caller(), *withheld)) unknown_prompt(name);
        const Json no_arguments = Json::object();
        Json refused = co_await withheld->handler(ctx, no_arguments);
        co_return refused;
    }
    const Json& args = param(ctx.params(), "arguments");
    if (!args.is_null() && !args.is_object()) {
        throw RpcError(error_code::kInvalidParams, "Invalid params: \"arguments\" must be an object");
    }
    for (const auto& a : prompt->arguments) {
        if (a.required && (args.is_null() || !args.contains(a.name))) {
            throw RpcError(error_code::kInvalidParams,
                           fmt::format("Invalid params: prompt \"{}\" needs argument \"{}\"", name, a.name));
        }
    }
    // (A named argument, not a temporary inside co_await: GCC 12 destroys such
    // temporaries twice.)
    const Json call_args = args.is_null() ? Json::object() : args;
    Json result = co_await prompt->handler(ctx, call_args);
    co_return result;
}

Task<Json> ServerSession::complete(RequestContext& ctx) {
    const Json& ref = param(ctx.params(), "ref");
    const Json& argument = param(ctx.params(), "argument");
    if (!ref.is_object() || !ref.contains("type") || !ref["type"].is_string()) {
        throw RpcError(error_code::kInvalidParams, "Invalid params: \"ref\" must be an object with a \"type\"");
    }
    if (!argument.is_object() || !argument.contains("name") || !argument["name"].is_string() ||
        !argument.contains("value") || !argument["value"].is_string()) {
        throw RpcError(error_code::kInvalidParams,
                       "Invalid params: \"argument\" must be an object with string \"name\" and \"value\"");
    }
    const std::string type = ref["type"];
    Completer completer;
    if (type == "ref/prompt") {
        auto name = required_string(ref, "name");
        const auto* prompt = server_.registry().find_prompt(name);
        if (!prompt || !server_.visible(caller(), *prompt)) unknown_prompt(name);
        completer = prompt->completer;
    } else if (type == "ref/resource") {
        auto uri = required_string(ref, "uri");
        const auto* tmpl = server_.registry().find_template(uri);
        if (tmpl && !server_.visible(caller(), *tmpl)) tmpl = nullptr;
        const auto* resource = server_.registry().find_resource(uri);
        if (resource && !server_.visible(caller(), *resource)) resource = nullptr;
        if (!tmpl && !resource) {
            throw RpcError(error_code::kInvalidParams,
                           fmt::format("Unknown resource: {}", util::sanitize_for_message(uri, 300)));
        }
        if (tmpl) completer = tmpl->completer;
    } else {
        throw RpcError(error_code::kInvalidParams,
                       fmt::format("Invalid params: unknown ref type \"{}\"", util::sanitize_for_message(type, 40)));
    }
    Json completion = {{"values", Json::array()}, {"hasMore", false}};
    if (completer) {
        Json context_args = Json::object();
        const Json& c = param(ctx.params(), "context");
        if (c.is_object() && c.contains("arguments") && c["arguments"].is_object()) context_args = c["arguments"];
        const std::string arg_name = argument["name"], arg_value = argument["value"];
        completion = co_await completer(ctx, arg_name, arg_value, context_args);
        // The spec caps a completion at 100 values.
        if (completion.contains("values") && completion["values"].is_array() && completion["values"].size() > 100) {
            auto total = completion["values"].size();
            completion["values"].erase(completion["values"].begin() + 100, completion["values"].end());
            completion["total"] = total;
            completion["hasMore"] = true;
        }
    }
    co_return Json{{"completion", std::move(completion)}};
}

Task<Json> ServerSession::discover(RequestContext& ctx) { co_return discover_result(server_, ctx); }

// subscriptions/listen (2026-07-28): one long-lived request whose stream carries the
// notifications the client opted into, each tagged with the subscription id. It ends
// when the client closes the stream (cancellation).
Task<Json> ServerSession::listen(RequestContext& ctx) {
    const Json& filter = param(ctx.params(), "notifications");
    if (!filter.is_object()) {
        throw RpcError(error_code::kInvalidParams, "Invalid params: \"notifications\" must be an object");
    }
    Json honoured = Json::object();
    for (const char* flag : {"toolsListChanged", "promptsListChanged", "resourcesListChanged"}) {
        if (filter.value(flag, false) == true) honoured[flag] = true;
    }
    std::set<std::string> watched;
    if (auto uris = filter.find("resourceSubscriptions"); uris != filter.end() && uris->is_array()) {
        for (const auto& u : *uris) {
            if (u.is_string()) watched.insert(u.get<std::string>());
        }
        honoured["resourceSubscriptions"] = *uris;
    }
    const std::string subscription_id = ctx.request_id().is_string() ? ctx.request_id().get<std::string>()
                                                                     : id_text(ctx.request_id());
    auto tell = [&ctx, subscription_id](std::string_view method, Json params) {
        params["_meta"] = Json{{"io.modelcontextprotocol/subscriptionId", subscription_id}};
        ctx.session().send(make_notification(method, std::move(params)), &ctx.request_id());
    };
    tell("notifications/subscriptions/acknowledged", Json{{"notifications", honoured}});

    auto& registry = server_.registry();
    // Only what this caller may see (McpServer::concerns, resource_visible), as on a session.
    int catalog_listener = registry.add_change_listener([this, &tell, honoured](const CatalogChange& change) {
        const CatalogKind kind = change.kind;
        if (server_.filters(caller()) && !server_.concerns(caller(), change)) return;
        const char* flag = kind == CatalogKind::tools     ? "toolsListChanged"
                           : kind == CatalogKind::prompts ? "promptsListChanged"
                                                          : "resourcesListChanged";
        if (!honoured.contains(flag)) return;
        tell(kind == CatalogKind::tools     ? "notifications/tools/list_changed"
             : kind == CatalogKind::prompts ? "notifications/prompts/list_changed"
                                            : "notifications/resources/list_changed",
             Json::object());
    });
    int resource_listener = server_.add_resource_listener([this, &tell, &watched](const std::string& uri) {
        if (watched.count(uri) && server_.resource_visible(caller(), uri))
            tell("notifications/resources/updated", Json{{"uri", uri}});
    });
    struct Unregister {
        Registry& registry;
        McpServer& server;
        std::shared_ptr<const bool> server_alive;
        int catalog, resource;
        ~Unregister() {
            if (!*server_alive) return;
            registry.remove_listener(catalog);
            server.remove_resource_listener(resource);
        }
    } unregister{registry, server_, server_.alive(), catalog_listener, resource_listener};

    Completion<bool> ended;
    auto& executor = server_.executor();
    ctx.cancel_token().on_cancel([ended, &executor]() mutable {
        executor.post([ended]() mutable { ended.set_error(std::make_exception_ptr(OperationCancelled())); });
    });
    co_await ended;  // only ever ends by cancellation
    co_return Json::object();
}

// The audit log's view of the requests it records outside the call pipeline: how each
// ended, told to the server's served listener (nothing is timed without one). A tools/call
// is recorded by the pipeline once it gets there; here only when it is refused with a
// protocol error (an unknown tool, bad params, a refused task).
class ServedReport {
public:
    explicit ServedReport(const McpServer& server) : listener_(server.served_listener()) {
        if (listener_) {
            at_ = std::chrono::system_clock::now();
            steady_ = std::chrono::steady_clock::now();
        }
    }
    void operator()(const RequestContext& ctx, std::exception_ptr error) const {
        if (listener_) listener_(ctx, at_, steady_, std::move(error));
    }

private:
    const McpServer::ServedListener& listener_;
    std::chrono::system_clock::time_point at_{};
    std::chrono::steady_clock::time_point steady_{};
};

Task<Json> ServerSession::call_tool(RequestContext& ctx) {
    ServedReport served(server_);
    Json refused;
    try {
        co_return co_await call_tool_inner(ctx);
    } catch (const RpcError&) {
        served(ctx, std::current_exception());
        throw;
    } catch (const ForbiddenCall& f) {
        served(ctx, std::make_exception_ptr(f.error));
        refused = f.tool->error_result(f.error).to_json();
    }
    shape_tool_result(ctx.revision(), refused);
    co_return refused;
}

Task<Json> ServerSession::read_resource(RequestContext& ctx) {
    ServedReport served(server_);
    Json result;
    try {
        result = co_await read_resource_inner(ctx);
    } catch (...) {
        served(ctx, std::current_exception());
        throw;
    }
    served(ctx, nullptr);
    co_return result;
}

Task<Json> ServerSession::get_prompt(RequestContext& ctx) {
    ServedReport served(server_);
    Json result;
    try {
        result = co_await get_prompt_inner(ctx);
    } catch (...) {
        served(ctx, std::current_exception());
        throw;
    }
    served(ctx, nullptr);
    co_return result;
}

}  // namespace toolport
