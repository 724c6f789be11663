// RequestContext: everything a tool, resource or prompt handler may use while it serves
// one request: the client's identity and capabilities, progress, logging to the client,
// requests to the client (sampling, elicitation, roots), cancellation and timers.
//
// The same handler code works in every revision: in the stateful revisions a client
// request is sent over the session and awaited; in 2026-07-28 (stateless) the engine
// answers with an InputRequiredResult and replays the handler when the client retries
// with the inputs (see input_required.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "async/cancel_token.hpp"
#include "async/task.hpp"
#include "observability/tracer.hpp"
#include "protocol/rpc_error.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "server/log_level.hpp"
#include "util/json.hpp"

namespace toolport {

class Executor;
class ServerSession;

// Who is calling: filled by the transport (bearer token subject, session id, trace id).
struct CallerIdentity {
    std::string principal;   // authenticated subject, empty when auth is off
    std::string session_id;  // MCP session id (HTTP) or "stdio"
    std::string trace_id;    // W3C trace id from traceparent, when sent
    // The subject of the OAuth access token the latest request came with ("" for other
    // callers): who the audit log says called (principal is a digest of the credential).
    std::string subject;
    // The client's values of the headers sources asked for (McpServer::forward_client_header),
    // by lower-case name, as the latest request sent them: per-user credentials. Never
    // logged; cached results are scoped by them.
    std::map<std::string, std::string> client_headers;
    // The view (a gateway profile) the client chose by its URL path, /mcp/<view>, or by a
    // bearer token of the view's: it sees and calls only that view's tools. Empty: every tool.
    std::string view;
    // The scopes of the OAuth access token the latest request came with (McpServer::
    // set_scope_policy: a tool whose scopes it lacks is neither listed nor called). Absent
    // for callers without an OAuth token (static bearer tokens, stdio): not filtered.
    std::optional<std::vector<std::string>> scopes;
    // The groups the OAuth access token's group claim names (auth/access_policy.hpp), read
    // only when an access rule names groups. Empty for other callers.
    std::vector<std::string> groups;
    // The verified OAuth access token the latest request came with ("" for other callers):
    // the subject token a source exchanges for one of its service's (auth/
    // upstream_credentials.hpp). Never logged, never sent on as it is.
    std::string access_token;
};

// One request from the handler to the client (elicitation/create, sampling/createMessage,
// roots/list).
struct ClientRequest {
    std::string method;
    Json params;
    // Names the answer in an MRTR round trip (inputRequests/inputResponses key); chosen
    // by the engine ("input_1", ...) when empty.
    std::string key = {};
    // Gives the question up when it fires, instead of the request's own token (a gateway
    // gives up what it relays for a call once the upstream has answered the call).
    CancelToken* cancel = nullptr;
};

// The _meta key under which a server-to-client request sent over a session carries the
// handler's name for its answer (ClientRequest::key), for gateways that ask a stateless
// client in its stead.
inline constexpr std::string_view kInputKeyMeta = "io.toolport/inputKey";

// The client capability a server-to-client request needs ("sampling" for
// sampling/createMessage, "elicitation", "roots"), or nullptr.
const char* client_capability_for(std::string_view method);

class RequestContext {
public:
    RequestContext(std::shared_ptr<ServerSession> session, protocol::RequestId id, std::string method, Json params,
                   protocol::Revision revision);
    ~RequestContext();
    RequestContext(const RequestContext&) = delete;
    RequestContext& operator=(const RequestContext&) = delete;

    const protocol::RequestId& request_id() const { return id_; }
    const std::string& method() const { return method_; }
    const Json& params() const { return params_; }
    // params._meta when it is an object, else null: found once, when first asked for (a
    // request's stages, its progress, budget scope and trace each look into it; a lookup by
    // name is a walk of the members, a miss as costly as a hit).
    const Json* meta() const;
    protocol::Revision revision() const { return revision_; }
    const Json& client_capabilities() const;
    const Json& client_info() const;
    const CallerIdentity& caller() const;
    Executor& executor() const;
    CancelToken& cancel_token() { return cancel_; }
    bool cancelled() const { return cancel_.cancelled(); }
    // The client gave up on the request (notifications/cancelled, session closed): its work
    // is cancelled and it gets no response. A deadline only cancels the work; the request
    // is still answered (with a TIMEOUT tool error).
    void abandon(std::string reason) {
        if (!abandoned_) abandon_reason_ = reason;
        abandoned_ = true;
        cancel_.cancel(std::move(reason));
    }
    bool abandoned() const { return abandoned_; }
    const std::string& abandon_reason() const { return abandon_reason_; }

    // Sends notifications/progress when the request carried a progressToken.
    void progress(double progress, std::optional<double> total = std::nullopt, std::string message = {});
    // Whether it did: progress() sends nothing otherwise.
    bool wants_progress() const;
    // Sends notifications/message when `level` passes the client's chosen level.
    void log(LogLevel level, Json data, std::string logger = {});
    // The call runs as the task `task_id` (2025-11-25 model): its progress and log
    // notifications carry _meta["io.modelcontextprotocol/related-task"], as that model requires.
    void relate_to_task(std::string task_id) { related_task_ = std::move(task_id); }

    // Asks the client and waits for its answer. Throws RpcError when the client answers
    // with an error, OperationCancelled when this request is cancelled, and
    // (stateless revision) InputRequired, which the engine turns into an InputRequiredResult.
    Task<Json> ask_client(ClientRequest request);
    // Several questions at once; in the stateless revision they travel in one round trip.
    Task<std::vector<Json>> ask_client_all(std::vector<ClientRequest> requests);

    // Throws RpcError -32021 (MissingRequiredClientCapability, with the capability in
    // data.requiredCapabilities) when the client did not declare `capability`.
    void require_client_capability(const std::string& capability) const;

    Task<Json> elicit(Json params) { return ask_client({"elicitation/create", std::move(params)}); }
    Task<Json> sample(Json params) { return ask_client({"sampling/createMessage", std::move(params)}); }
    Task<Json> list_roots() { return ask_client({"roots/list", Json::object()}); }

    Task<void> sleep(std::chrono::milliseconds delay);

    // Paces the requests this call sends to its downstream service: a source that sends
    // several (pages of a listing, a retry) awaits this before each one, so the service's
    // rate limit (e.g. 100 ms between requests) holds per request, not per call. The rate
    // limit stage installs the pacer; without one this returns at once. May throw ToolError
    // RATE_LIMITED, or OperationCancelled while waiting.
    Task<void> pace_downstream_request();
    // How many requests this call announced through pace_downstream_request: what
    // _meta.downstream_api_calls reports when the call ends in an error.
    int downstream_requests() const { return downstream_requests_; }
    // When the call must be done by (set by the timeout stage): downstream clients bound
    // their waits and retries by it. Unset: no deadline.
    std::optional<std::chrono::steady_clock::time_point> deadline() const { return deadline_; }
    void set_deadline(std::optional<std::chrono::steady_clock::time_point> deadline) { deadline_ = deadline; }
    void set_downstream_pacer(std::function<Task<void>()> pacer) { downstream_pacer_ = std::move(pacer); }

    // Time this request has spent waiting for the client's answers (sampling, elicitation,
    // roots), a wait in progress included. It is the user's time, not the tool's work, so
    // call deadlines do not count it (the wait has its own limit,
    // ServerOptions::client_request_timeout).
    std::chrono::steady_clock::duration client_wait() const;

    // Asks the transport to end this request's response stream now and let the client
    // resume it later (SSE polling, 2025-11-25). The request itself goes on. A no-op on
    // transports without resumable streams.
    void close_stream();

    ServerSession& session() const { return *session_; }

    // This request's SERVER span (observability/tracer.hpp; not recording when tracing is
    // off): pipeline stages add their events to it, and what the call sends downstream (an
    // upstream MCP request, a web API request) is its child: trace_context() is the parent
    // to pass on, with baggage() as the caller sent it.
    observability::Span& span() { return span_; }
    const observability::TraceContext& trace_context() const { return span_.context(); }
    const std::string& baggage() const { return baggage_; }
    void set_trace(observability::Span span, std::string baggage) {
        span_ = std::move(span);
        baggage_ = std::move(baggage);
    }

private:
    std::shared_ptr<ServerSession> session_;
    protocol::RequestId id_;
    std::string method_;
    std::string related_task_;
    Json params_;
    // meta(): in params_, whose members never move (a std::map's nodes); on the engine's loop.
    mutable const Json* meta_ = nullptr;
    mutable bool meta_found_ = false;
    protocol::Revision revision_;
    CancelToken cancel_;
    bool abandoned_ = false;
    std::string abandon_reason_;
    std::chrono::steady_clock::duration client_waited_{};
    std::optional<std::chrono::steady_clock::time_point> client_wait_started_;
    int client_requests_made_ = 0;  // numbers MRTR input keys deterministically per replay
    std::function<Task<void>()> downstream_pacer_;
    int downstream_requests_ = 0;
    std::optional<std::chrono::steady_clock::time_point> deadline_;
    observability::Span span_;
    std::string baggage_;
};

// A JSON-RPC error: what a handler throws to answer with it as-is (e.g. -32602 for an
// unknown resource), and what ask_client() throws when the client answers with an error.
using protocol::RpcError;

}  // namespace toolport
