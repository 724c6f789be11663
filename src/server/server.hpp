// McpServer: the protocol engine's shared half. It owns the registry and the server's
// identity, opens sessions for transports, and tells live sessions about catalogue changes.
//
// Usage (what a transport does):
//   auto session = server.open_session([&](const Json& msg, const RequestId* related) { ... }, caller);
//   session->receive(message);      // for every message the client sends
//   session->close();               // when the connection or session ends
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/access_policy.hpp"
#include "auth/scope_policy.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "server/extension.hpp"
#include "server/registry.hpp"
#include "server/request_context.hpp"
#include "server/view.hpp"

namespace toolport {

class Executor;
class ServerSession;
class TaskEngine;

struct ServerOptions {
    std::string name = "toolport";
    std::string title = "Toolport";
    std::string version;
    std::string instructions;
    std::size_t page_size = 100;  // entries per */list page
    // How long a server-to-client request (sampling, elicitation, roots) may wait.
    std::chrono::milliseconds client_request_timeout{std::chrono::minutes(5)};
    // Key that signs MRTR requestState (2026-07-28); random per process when empty.
    std::string state_secret;
    // Advertised list TTL for cacheable results (2026-07-28).
    std::chrono::milliseconds list_ttl{std::chrono::seconds(60)};
    // Tasks (server/tasks.hpp): how long a task's record is kept after it is created, and
    // how often clients are asked to poll it.
    std::chrono::milliseconds task_ttl{std::chrono::hours(1)};
    std::chrono::milliseconds task_poll_interval{500};
    // A call of an "optional" task tool from a client that declared the tasks extension but
    // did not ask for a task is answered in its request unless it outlives this; then it
    // becomes a task (0: always a task at once).
    std::chrono::milliseconds task_threshold{1000};
    // How long the first list requests (tools, resources, templates, prompts) and calls of
    // tools not (yet) registered wait for the sources that load in the background (REST
    // catalogs, OpenAPI documents, gateway upstreams) to settle: a host that lists once at
    // start-up and ignores list_changed would otherwise see an empty catalogue.
    std::chrono::milliseconds wait_for_sources{5000};
};

// Where a session's outgoing messages go. `related` is the id of the client request the
// message belongs to (its response, its progress, its nested requests); null for
// messages that belong to no request (list_changed, resources/updated).
using SessionOutput = std::function<void(const Json& message, const protocol::RequestId* related)>;

// Runs one tool call. The call pipeline (validation, cache, limits, ...) installs one;
// without it a call goes straight to the tool's handler.
using ToolInvoker =
    std::function<Task<ToolResult>(RequestContext&, const std::shared_ptr<const ToolSpec>& tool, const Json& arguments)>;

class McpServer {
public:
    McpServer(Executor& executor, ServerOptions options);
    ~McpServer();
    McpServer(const McpServer&) = delete;
    McpServer& operator=(const McpServer&) = delete;

    Registry& registry() { return registry_; }
    const Registry& registry() const { return registry_; }
    Executor& executor() { return executor_; }
    const ServerOptions& options() const { return options_; }

    std::shared_ptr<ServerSession> open_session(SessionOutput output, CallerIdentity caller = {});

    // {name, version, title}: built once (the options do not change), since every reply of
    // the stateless revision carries it.
    const Json& server_info() const { return server_info_; }
    // The same as raw JSON (protocol/raw_json.hpp), for replies that a transport writes with
    // protocol::serialize: copied as one value rather than member by member, and written as
    // it is.
    const Json& server_info_raw() const { return server_info_raw_; }
    // The capabilities `caller` is offered (every extension without a caller; with one,
    // only the extensions of sources it may see).
    Json capabilities(protocol::Revision revision, const CallerIdentity* caller = nullptr) const;

    // Turns false when the server is destroyed: for cleanup code in coroutine frames that
    // may be destroyed after the server at shutdown.
    std::shared_ptr<const bool> alive() const { return alive_; }

    // The number of sessions that are open right now.
    std::size_t session_count() const { return sessions_.size(); }

    void set_tool_invoker(ToolInvoker invoker) { tool_invoker_ = std::move(invoker); }
    // Long calls as tasks (server/tasks.hpp); without an engine every call is answered in
    // its request.
    void set_tasks(std::shared_ptr<TaskEngine> tasks) { tasks_ = std::move(tasks); }
    TaskEngine* tasks() const { return tasks_.get(); }
    Task<ToolResult> invoke_tool(RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                                 const Json& arguments) {
        return tool_invoker_ ? tool_invoker_(ctx, tool, arguments) : tool->handler(ctx, arguments);
    }

    // The start-up gate (ServerOptions::wait_for_sources): `settled` tells whether every
    // source that loads in the background has finished its first load; `late` is told once
    // when the wait runs out first. Until one of the two, list requests and calls of tools
    // not registered yet wait (wait_for_sources). Without a gate nothing waits.
    void set_sources_gate(std::function<bool()> settled, std::function<void()> late);
    Task<void> wait_for_sources();

    // Sends notifications/resources/updated to every session subscribed to `uri` (and to
    // every stateless subscriptions/listen stream that asked for it).
    void resource_updated(const std::string& uri);
    using ResourceListener = std::function<void(const std::string& uri)>;
    int add_resource_listener(ResourceListener listener);
    void remove_resource_listener(int id) { resource_listeners_.erase(id); }

    // Views: named subsets of the catalogue (the gateway's profiles, server/view.hpp),
    // chosen by a client through the URL path /mcp/<view> or by a bearer token of the
    // view's, so a client that takes only its first 40 tools (Cursor) or refuses more than
    // 128 (VS Code) gets a catalogue it can use, and a token reaches only its lane. A
    // session in a view lists, calls, reads, gets, completes and subscribes to only what
    // `visible` accepts, and hears only of changes to that. The HTTP transport compares the
    // tokens (in constant time).
    using ToolView = std::function<bool(const ToolSpec& tool)>;
    void add_view(const std::string& name, ViewSpec view, std::vector<std::string> tokens = {});
    // A view of these tools, and of the resources and prompts of their sources.
    void add_view(const std::string& name, ToolView tools, std::vector<std::string> tokens = {}) {
        add_view(name, ViewSpec{std::move(tools), {}}, std::move(tokens));
    }
    bool has_view(const std::string& name) const { return views_.count(name) > 0; }
    bool has_views() const { return !views_.empty(); }
    // The views' names, in order.
    std::vector<std::string> view_names() const {
        std::vector<std::string> names;
        for (const auto& [name, view] : views_) names.push_back(name);
        return names;
    }
    // Every view's bearer tokens, as (token, view name).
    const std::vector<std::pair<std::string, std::string>>& view_tokens() const { return view_tokens_; }

    // What `caller` may see, one rule for every primitive: an entry is visible when it is in
    // the caller's view (always, outside a view) and the caller's OAuth token holds the
    // scopes it needs (always, without a token or a scope policy): a tool its own and its
    // source's, anything else its source's. What a caller cannot see is answered exactly as
    // what does not exist.
    bool visible(const CallerIdentity& caller, const ToolSpec& tool) const;
    bool visible(const CallerIdentity& caller, const ResourceSpec& resource) const {
        return source_visible(caller, resource.source);
    }
    bool visible(const CallerIdentity& caller, const ResourceTemplateSpec& resource_template) const {
        return source_visible(caller, resource_template.source);
    }
    bool visible(const CallerIdentity& caller, const PromptSpec& prompt) const {
        return source_visible(caller, prompt.source);
    }
    // Whether `caller` sees what `source` offers besides tools ("" is the server's own: always).
    bool source_visible(const CallerIdentity& caller, const std::string& source) const;
    // Whether `uri` is a resource `caller` sees or matches a template it sees.
    bool resource_visible(const CallerIdentity& caller, const std::string& uri) const;
    // Whether anything is hidden from `caller` at all (a view, or an OAuth token under a
    // scope policy): the others are served the whole catalogue without a look at each entry.
    bool filters(const CallerIdentity& caller) const {
        return !caller.view.empty() || (caller.scopes && scope_policy_ && !scope_policy_->empty()) || access_policy_;
    }
    // Whether `change` touched anything `caller` sees (a list_changed is for it).
    bool concerns(const CallerIdentity& caller, const CatalogChange& change) const;
    // Whether `tool` is in `view`'s tools (every tool for "").
    bool in_view(const std::string& view, const ToolSpec& tool) const;

    // OAuth scopes per tool, source and profile (auth/scope_policy.hpp), for callers that
    // came with an access token (CallerIdentity::scopes).
    void set_scope_policy(std::shared_ptr<const auth::ScopePolicy> policy) { scope_policy_ = std::move(policy); }
    const auth::ScopePolicy* scope_policy() const { return scope_policy_.get(); }
    // The scopes `tool` needs beyond the server-wide ones ([] without a policy).
    std::vector<std::string> tool_scopes(const ToolSpec& tool) const;
    // The scopes `tool` needs that `caller`'s token lacks ([] for a caller without a token).
    std::vector<std::string> missing_scopes(const CallerIdentity& caller, const ToolSpec& tool) const;

    // Allow and deny rules by principal (auth/access_policy.hpp), for every caller: a tool a
    // rule denies is not listed, and a call of it is answered with the tool error
    // MCP_TOOL_FORBIDDEN naming the rule; a source denied as a whole hides its resources,
    // templates, prompts and extension methods. Null (or a policy without rules that
    // allows by default): nothing is checked. May be replaced at any time (a reload).
    void set_access_policy(std::shared_ptr<const auth::AccessPolicy> policy) {
        access_policy_ = policy && !policy->empty() ? std::move(policy) : nullptr;
    }
    const auth::AccessPolicy* access_policy() const { return access_policy_.get(); }
    // What the rules say of `caller` calling `tool` (allowed, without a policy).
    auth::AccessDecision access(const CallerIdentity& caller, const ToolSpec& tool) const;

    // Told when a session subscribes to a resource (true) and when the last session
    // subscribed to one unsubscribes (false): sources that forward subscriptions upstream.
    using SubscriptionListener = std::function<void(const std::string& uri, bool subscribed)>;
    // Tools withheld from clients (a pinning quarantine, providers/pins): never listed, but
    // a call by name reaches the stand-in, whose handler answers with a tool error that says
    // why and how to release it, instead of "Unknown tool". Replaced or dropped per name.
    void withhold_tool(std::shared_ptr<const ToolSpec> stand_in) {
        auto name = stand_in->name;
        withheld_tools_[name] = std::move(stand_in);
    }
    bool release_tool(const std::string& name) { return withheld_tools_.erase(name) > 0; }
    std::shared_ptr<const ToolSpec> withheld_tool(const std::string& name) const {
        auto it = withheld_tools_.find(name);
        return it == withheld_tools_.end() ? nullptr : it->second;
    }

    // Prompts and resource templates withheld the same way: never listed; prompts/get of
    // the name, or resources/read of a URI that only a withheld template matches, reaches
    // the stand-in, whose handler (reader) answers with a JSON-RPC error saying why.
    void withhold_prompt(std::shared_ptr<const PromptSpec> stand_in) {
        auto name = stand_in->name;
        withheld_prompts_[name] = std::move(stand_in);
    }
    bool release_prompt(const std::string& name) { return withheld_prompts_.erase(name) > 0; }
    std::shared_ptr<const PromptSpec> withheld_prompt(const std::string& name) const {
        auto it = withheld_prompts_.find(name);
        return it == withheld_prompts_.end() ? nullptr : it->second;
    }
    void withhold_template(std::shared_ptr<const ResourceTemplateSpec> stand_in) {
        auto pattern = stand_in->uri_template;
        withheld_templates_[pattern] = std::move(stand_in);
    }
    bool release_template(const std::string& uri_template) { return withheld_templates_.erase(uri_template) > 0; }
    // The withheld template `accept`ed that matches `uri` (null when none does).
    std::shared_ptr<const ResourceTemplateSpec> withheld_template_for(
        const std::string& uri, const std::function<bool(const ResourceTemplateSpec&)>& accept) const;

    void add_subscription_listener(SubscriptionListener listener) {
        subscription_listeners_.push_back(std::move(listener));
    }
    void subscription_changed(const std::string& uri, bool subscribed);
    // Told about every session that ends (for per-session summaries).
    using SessionClosedListener = std::function<void(const CallerIdentity& caller)>;
    void set_session_closed_listener(SessionClosedListener listener) { session_closed_listener_ = std::move(listener); }
    // Told when a request served outside the call pipeline is over (resources/read,
    // prompts/get, a tools/call refused before the pipeline): the audit log. `error` is
    // what it failed with, null when it was answered.
    using ServedListener =
        std::function<void(const RequestContext& ctx, std::chrono::system_clock::time_point started,
                           std::chrono::steady_clock::time_point started_steady, std::exception_ptr error)>;
    void set_served_listener(ServedListener listener) { served_listener_ = std::move(listener); }
    const ServedListener& served_listener() const { return served_listener_; }

    // Declares a protocol extension: `settings` are advertised under
    // capabilities.extensions[id] (inline, as SEP-2133 has it) and `methods` are served in
    // every revision. A method the protocol already has cannot be taken over. An extension
    // of a `source` is advertised and served only to callers that see the source
    // (source_visible); to the others it does not exist.
    void add_extension(const std::string& id, Json settings, std::map<std::string, ExtensionMethod> methods,
                       const std::string& source = {});
    const ExtensionMethod* extension_method(const std::string& method) const;

    // Request headers of HTTP clients that tools may read (CallerIdentity::client_headers):
    // a source asks for the ones that carry per-user credentials (X-Tango-Api-Key). Names
    // are kept lower-case. Nothing else of a client's request reaches the tools.
    void forward_client_header(const std::string& name);
    const std::set<std::string>& forwarded_client_headers() const { return forwarded_headers_; }

private:
    friend class ServerSession;
    void session_closed(ServerSession* session);
    void broadcast_list_changed(const CatalogChange& change);
    // Whether `source` is one of `view`'s (ViewSpec::sources, else those of its tools).
    bool view_has_source(const std::string& view, const std::string& source) const;

    Executor& executor_;
    ServerOptions options_;
    Json server_info_;
    Json server_info_raw_;
    Registry registry_;
    std::set<std::string> forwarded_headers_;
    Json extensions_ = Json::object();
    std::map<std::string, std::string> extension_sources_;  // extension id → the source that declared it
    std::map<std::string, ExtensionMethod> extension_methods_;
    int registry_listener_ = 0;
    std::unordered_set<ServerSession*> sessions_;
    std::map<int, ResourceListener> resource_listeners_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
    ToolInvoker tool_invoker_;
    std::shared_ptr<TaskEngine> tasks_;
    std::function<bool()> sources_settled_;  // null: nothing to wait for, or the wait is over
    std::function<void()> sources_late_;
    std::chrono::steady_clock::time_point sources_deadline_{};
    SessionClosedListener session_closed_listener_;
    ServedListener served_listener_;
    std::vector<SubscriptionListener> subscription_listeners_;
    std::map<std::string, ViewSpec> views_;
    // Per view without declared sources, the sources of its tools: worked out when first
    // needed, forgotten whenever the tools change.
    mutable std::map<std::string, std::set<std::string>> tool_sources_;
    std::vector<std::pair<std::string, std::string>> view_tokens_;
    std::shared_ptr<const auth::ScopePolicy> scope_policy_;
    std::shared_ptr<const auth::AccessPolicy> access_policy_;
    int next_resource_listener_ = 0;
    std::map<std::string, std::shared_ptr<const ToolSpec>> withheld_tools_;
    std::map<std::string, std::shared_ptr<const PromptSpec>> withheld_prompts_;
    std::map<std::string, std::shared_ptr<const ResourceTemplateSpec>> withheld_templates_;
};

}  // namespace toolport
