// Upstream: the gateway's connection to one upstream MCP server, kept alive. It connects
// (stdio child, Streamable HTTP or legacy HTTP+SSE) in whatever revision the server
// speaks, lists what it offers, re-lists when it says a list changed, and reconnects when
// the connection is lost (after restart_delay, then 0.5 s doubling to max_backoff while
// attempts fail): a dead upstream
// never stops the others or Toolport, and its entries stay listed while it comes back
// (calls meanwhile fail fast with SERVER_UNHEALTHY and when to retry).
//
// Everything runs on the engine's event loop. The gateway (gateway.hpp) turns the catalog
// into registry entries and forwards calls through call_tool() and friends.
//
// Its code: upstream.cpp (lifetime, state), upstream_connection.cpp, upstream_callers.cpp
// (callers and credentials), upstream_tasks.cpp, upstream_forwarding.cpp.
#pragma once

#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "async/task.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "providers/gateway/output_limits.hpp"
#include "server/content.hpp"
#include "util/json.hpp"

namespace toolport {
class AsioExecutor;
class RequestContext;
namespace auth {
class UpstreamCredentials;
}
namespace client {
class HttpAuthorizer;
class McpClient;
struct ServerRequest;
}  // namespace client
namespace http_client {
class HttpClient;
}
}  // namespace toolport

namespace toolport::gateway {

inline constexpr const char* kSkillsExtensionId = "io.modelcontextprotocol/skills";

// What an upstream offers, as it listed it (entries are the MCP objects it sent).
struct UpstreamCatalog {
    std::vector<Json> tools;
    std::vector<Json> resources;
    std::vector<Json> resource_templates;
    std::vector<Json> prompts;
    bool completions = false;    // it declared the completions capability
    bool subscriptions = false;  // resources.subscribe
    Json server_info;            // its initialize answer's serverInfo (name, version): pinned with its tools
    // The Skills extension (io.modelcontextprotocol/skills, SEP-2640): its settings as the
    // upstream declared them (null: not declared), and its skills/list entries, as listed
    // at connection and again when it says its resources changed (there is no skills
    // notification), kept current by the entries the gateway forwards (note_skill). Empty
    // while the upstream is away: a skill is served only while its server can serve it.
    Json skills_extension;
    std::vector<Json> skills;
    // It answered a listing (false until the first connection lists): an empty catalog
    // then means "offers none", which pinning remembers.
    bool listed = false;
};

class Upstream : public std::enable_shared_from_this<Upstream> {
public:
    enum class State { connecting, connected, reconnecting, stopped };

    struct Listener {
        // Its catalog changed (first listing, a re-listing after list_changed or a reconnect).
        std::function<void()> catalog_changed;
        // notifications/resources/updated for one of its URIs.
        std::function<void(const std::string& uri)> resource_updated;
    };

    Upstream(UpstreamSettings settings, AsioExecutor& executor);
    ~Upstream();

    const UpstreamSettings& settings() const { return settings_; }
    const std::string& name() const { return settings_.name; }

    // Before start().
    void set_listener(Listener listener) { listener_ = std::move(listener); }
    void start();
    // Ends the connection now (a stdio child and its process group are killed and reaped).
    void stop();
    // A registry upstream (settings().registry) whose kept entry names another version than
    // the one it runs (`toolport registry update` moved its `latest`): drops the connection
    // and connects again on the new entry, at once. Reads the state directory only, never
    // the registry. Returns whether it did (on the loop: SIGHUP, POST /admin/reload).
    bool apply_registry_update();

    State state() const;
    // One line for /health and errors: "connected (2025-06-18)", "reconnecting in 4 s: ...".
    std::string describe_state() const;
    const UpstreamCatalog& catalog() const { return catalog_; }
    // Whether the first connection attempt is over (connected or failed once).
    bool settled() const { return settled_; }

    // Forwarding. Each runs on the loop, on behalf of the client request `ctx`:
    // progress, cancellation (also by the pipeline's deadline), log messages and the
    // upstream's requests to the client (sampling, elicitation, roots) are passed on.
    // Failures are ToolErrors for calls, RpcErrors for the others.
    //
    // Tasks (io.modelcontextprotocol/tasks): when the upstream declares the extension and
    // its tool supports tasks, a call that runs inside a task of ours (server/tasks.hpp:
    // its request id is "task:<id>"), or of a tool that requires tasks, is run upstream as
    // a task: the gateway polls it (tasks/get, at the interval it suggests, 50 ms to 5 s)
    // and its outcome is the call's — completed: its result; failed: its JSON-RPC error,
    // thrown as it is (our task fails with it); cancelled: OperationCancelled. Its
    // questions (input_required) are asked of our client under the same keys (our task
    // goes input_required), and when our task runs again with the answers they go to the
    // same upstream task (tasks/update). A call given up (cancelled, timed out) cancels
    // the upstream task (tasks/cancel).
    Task<ToolResult> call_tool(RequestContext& ctx, std::string name, Json arguments);
    // Whether the connected upstream runs tool calls as tasks: it declared the extension;
    // or, on a 2025-11-25 session without it, the task model of that revision
    // (capabilities.tasks.requests.tools.call, SEP-1686), used the same way except that
    // its questions come as requests during tasks/result, so they are relayed as for a
    // call in the request: our task's run with the answers starts a new upstream task.
    bool runs_tasks() const;
    bool runs_v1_tasks() const;
    // Upstream tasks that belong to tasks of ours now (exposed for tests).
    std::size_t forwarded_tasks() const { return forwarded_.size(); }
    Task<Json> read_resource(RequestContext& ctx, std::string uri);
    Task<Json> get_prompt(RequestContext& ctx, std::string name, Json arguments);
    Task<Json> complete(RequestContext& ctx, Json ref, std::string argument, std::string value, Json context);
    // Any other request of the client forwarded as it is (the Skills extension's skills/list,
    // skills/get, resources/directory/read): its result, or its RpcError.
    Task<Json> forward(RequestContext& ctx, std::string method, Json params);
    // A skill entry the upstream just answered with (skills/list, skills/get): `entry` null
    // for a skill it says it does not serve. Returns whether the cached entries changed.
    bool note_skill(const std::string& uri, const Json* entry);
    // resources/subscribe and unsubscribe, kept across reconnections.
    void subscribe(const std::string& uri);
    void unsubscribe(const std::string& uri);

private:
    void connect_now();
    Task<void> connect_once();
    // A registry upstream (settings_.registry): its entry resolved (kept, else asked of the
    // registry) and turned into settings_'s command or URL, once (upstream_registry.cpp).
    // Throws with a message naming what is missing: the attempt fails as a dead upstream's.
    Task<void> resolve_registry();
    Task<void> list_everything(std::shared_ptr<client::McpClient> client);
    Task<std::vector<Json>> list_all(std::shared_ptr<client::McpClient> client, std::string method, std::string key);
    // resources/templates/list, an upstream that does not implement it having none.
    Task<std::vector<Json>> list_templates(std::shared_ptr<client::McpClient> client);
    // Its skills (skills/list, every page) when it declared the extension; a listing that
    // fails leaves none (and says why in the log) without failing the connection.
    Task<std::vector<Json>> list_skills(std::shared_ptr<client::McpClient> client);
    void relist(const std::string& what);
    void lost(const std::string& reason);
    void schedule_reconnect();
    void schedule_ping();
    void on_notification(const std::string& method, const Json& params, std::uint64_t related_tag);
    Task<Json> on_request(const client::ServerRequest& request);

public:
    // A client request being forwarded. What the upstream asks of the client on its behalf
    // may have to end it differently than the upstream's answer would: a stateless client
    // must be asked through an InputRequiredResult, a client without the capability gets
    // -32021. That outcome is stashed here, the upstream request is cancelled, and the
    // forwarding rethrows it.
    struct Caller {
        RequestContext* ctx = nullptr;
        std::uint64_t tag = 0;  // RequestOptions::tag of its upstream request
        std::exception_ptr stashed;
        CancelToken cancel;  // fired by the client's own token, or to end the call early
        // What may still be relayed to the client for its call (log messages, progress).
        CallNotificationBudget* budget = nullptr;
        // The upstream's requests relayed to the client for it (on_request) and not yet
        // answered. They wait in the client request's RequestContext, so the forwarding
        // ends after them: once its upstream request has ended (`ended`), it gives them up
        // and waits for them.
        std::size_t relays = 0;
        std::optional<Completion<bool>> relays_done;
        bool ended = false;
        void stash(std::exception_ptr outcome);
    };
    // Each client request's notification budget while it is forwarded (one per request,
    // shared by the several upstream requests of a call run as a task).
    struct BudgetEntry {
        std::size_t holders = 0;
        CallNotificationBudget budget{0};
        bool told = false;  // its exhaustion was logged
    };
    class BudgetHold;

private:
    // The client request an upstream's request or log message belongs to. Over Streamable
    // HTTP it is the one whose stream it came on (`tag`). Stdio carries no relation: then
    // the only call in flight, or the latest when all in flight are one client session's;
    // with calls of several clients it cannot be told (nullptr), and nothing is sent to a
    // client that might not be the one.
    Caller* caller_for(std::uint64_t tag);
    // The connection, or ToolError SERVER_UNHEALTHY saying when it should be back.
    std::shared_ptr<client::McpClient> ready_client(const char* what);
    // The connection a request of `ctx`'s caller goes on: ready_client(), or with auth:
    // token_exchange the caller's own, opened on its first request (ToolError
    // UPSTREAM_CREDENTIALS_UNAVAILABLE without a caller token, UPSTREAM_AUTHORIZATION_FAILED
    // when its token cannot be exchanged).
    Task<std::shared_ptr<client::McpClient>> client_for(RequestContext& ctx, const char* what);
    // Whether requests go on their callers' own connections (token_exchange): only then does
    // client_for() need to wait; otherwise a call takes ready_client() without a coroutine.
    bool per_caller_connections() const;
    // Opens a connection authorized with the token exchanged for `subject_token`.
    Task<std::shared_ptr<client::McpClient>> connect_caller(std::string key, std::string subject_token);
    // Closes caller connections idle for kCallerIdle, and schedules the next sweep.
    void sweep_caller_connections();
    // A client for the upstream (the gateway's connection or a caller's), its transport
    // authorized by `authorizer` (null: the configured headers only), the upstream's
    // requests answered by on_request. Throws client::TransportError for bad settings.
    std::shared_ptr<client::McpClient> new_client(std::shared_ptr<client::HttpAuthorizer> authorizer);
    // auth: login: the connection is authorized with the tokens of `toolport login`.
    bool uses_login() const;
    // "run: toolport login <url>", for the errors of such an upstream.
    std::string login_suggestion() const;
    // A non-interactive OAuthAuthorizer on the token store (throws AuthorizationError when
    // there is no store path).
    std::shared_ptr<client::HttpAuthorizer> login_authorizer();
    // One request on behalf of `ctx`, its caller registered while it runs (see Caller):
    // what was stashed for the client replaces the upstream's answer or failure.
    // `tasks`: the request declares the tasks extension (see with_tasks_declared); other
    // requests have it removed from the client's capabilities. `raw_result`: the result's
    // content may come back as raw JSON (client::RequestOptions::raw_result).
    Task<Json> send_for(RequestContext& ctx, std::shared_ptr<client::McpClient> client, std::string method, Json params,
                        std::function<void(const Json&)> on_progress = {}, bool tasks = false, bool raw_result = false);
    // One request on behalf of `ctx` (not a tool call): failures as RpcError.
    Task<Json> request(RequestContext& ctx, std::string method, Json params);
    // A tool call run upstream as a task (see call_tool): its CallToolResult. `local` is the
    // id of our task the call runs in ("" outside one).
    Task<Json> call_as_task(RequestContext& ctx, std::shared_ptr<client::McpClient> client, std::string tool,
                            Json arguments, std::string local, std::function<void(const Json&)> on_progress);
    // Polls upstream task `id` until it ends; answers its questions on the way.
    Task<Json> follow_task(RequestContext& ctx, std::shared_ptr<client::McpClient> client, std::string id,
                           std::string local, std::int64_t interval_ms);
    // tasks/get, tasks/update, tasks/cancel (and the task-creating tools/call) declare the
    // extension: per request in _meta (stateless: with the client's capabilities).
    static Json with_tasks_declared(Json params);
    void cancel_upstream_task(const std::shared_ptr<client::McpClient>& client, const std::string& id, bool v1 = false);
    // The same for an upstream of the 2025-11-25 task model (see runs_v1_tasks).
    Task<Json> call_as_v1_task(RequestContext& ctx, std::shared_ptr<client::McpClient> client, std::string tool,
                               Json arguments, std::function<void(const Json&)> on_progress);
    // The execution.taskSupport of the upstream's tool `name` (none: absent, "forbidden", or
    // anything else). Found on every call: read in place, no copy of the text.
    enum class TaskSupport { none, optional, required };
    TaskSupport task_support_of(const std::string& name) const;
    // The upstream tool's outputSchema as listed (null when it has none).
    Json output_schema_of(const std::string& name) const;
    // The upstream's Tool object named `name` as listed (the first of that name), or null.
    const Json* listed_tool(const std::string& name) const;
    // Rebuilds tool_index_ after catalog_.tools changed.
    void index_tools();
    static Task<Json> refuse_request(std::string why);
    void set_state(State state, std::string detail = {});

    UpstreamSettings settings_;
    // A registry upstream's settings as configured, before its entry filled them in: what a
    // new entry is planned from (apply_registry_update).
    std::optional<UpstreamSettings> configured_;
    // The version of the entry it runs ("" until resolved).
    std::string registry_version_;
    // settings_.secrets(), built once: every forwarded answer is redacted with them, and
    // settings_ does not change after construction (but for a registry upstream's
    // resolution, which adds the entry's secret values).
    std::vector<std::string> secrets_;
    bool resolved_ = false;
    std::unique_ptr<http_client::HttpClient> registry_http_;
    AsioExecutor& executor_;
    Listener listener_;
    // Its stderr and log message limits, across reconnections (output_limits.hpp).
    std::shared_ptr<UpstreamOutputGuard> output_;
    std::map<const RequestContext*, BudgetEntry> call_budgets_;
    // A notification of `bytes` for `caller`'s call: whether it may still go (counted and
    // logged once per call when not).
    bool within_budget(Caller& caller, std::size_t bytes);

    std::shared_ptr<client::McpClient> client_;
    // auth: the tokens, from the authorization server (on a client of their own: it is not
    // the upstream, and the upstream's ca_file is not its).
    std::unique_ptr<http_client::HttpClient> token_http_;
    std::shared_ptr<auth::UpstreamCredentials> credentials_;
    // Why the last connection attempt could not be authorized ("" when it was, or failed
    // otherwise): with auth: login, calls meanwhile fail with UPSTREAM_AUTHORIZATION_FAILED.
    std::string authorization_failure_;
    // token_exchange: each caller's connection, by the digest of its access token (a new
    // token, say after a refresh, gets a connection of its own; the old one idles out).
    struct CallerConnection {
        std::shared_ptr<client::McpClient> client;  // null while it connects
        std::vector<Completion<std::shared_ptr<client::McpClient>>> waiters;
        std::chrono::steady_clock::time_point last_used;
    };
    std::map<std::string, CallerConnection> caller_connections_;
    std::function<void()> cancel_sweep_;
    UpstreamCatalog catalog_;
    // catalog_.tools' positions by name: every call looks its tool up (task support), and a
    // scan of the list cost more than forwarding the call's bytes.
    std::unordered_map<std::string, std::size_t> tool_index_;
    std::list<Caller*> in_flight_;
    // Our task id → the upstream task its call runs as, kept while our task may run its
    // call again (it waits for answers); erased when either ends, or at our task's expiry.
    struct ForwardedTask {
        std::string upstream_id;
        // The connection it was created on (the gateway's, or its caller's own): reachable
        // only while that one is.
        std::weak_ptr<client::McpClient> via;
        // TaskEngine::owner_of our task's caller: a request that only names the task (a
        // client may choose "task:..." for a request id) reaches nobody else's.
        std::string owner;
        Json pending = Json::object();  // its questions our client has not answered yet
    };
    std::map<std::string, ForwardedTask> forwarded_;
    std::vector<std::string> subscribed_;
    bool relisting_ = false;
    std::vector<std::string> relist_queue_;

    mutable std::mutex state_mutex_;  // state_ and detail_ are read by /health's thread
    State state_ = State::connecting;
    std::string detail_;
    std::string protocol_version_;
    std::chrono::steady_clock::time_point next_attempt_{};

    bool settled_ = false;
    std::chrono::milliseconds backoff_{500};  // before the next attempt
    std::function<void()> cancel_timer_;
    std::function<void()> cancel_ping_;
    std::uint64_t generation_ = 0;  // bumped by every connection attempt
    std::uint64_t next_tag_ = 0;
};

}  // namespace toolport::gateway
