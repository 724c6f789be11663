// ServerSession: one client's conversation with the server: the lifecycle state machine
// (initialize → initialized → operation), method dispatch, in-flight requests and their
// cancellation, server-to-client requests, log level and resource subscriptions.
//
// A session knows nothing about bytes or sockets: transports hand it parsed messages and
// give it a SessionOutput to write to. Requests of the stateless revision (2026-07-28)
// carry their version in `_meta` and are served without a handshake on any session.
#pragma once

#include <chrono>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "async/completion.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/rpc_peer.hpp"
#include "protocol/versions.hpp"
#include "server/log_level.hpp"
#include "server/server.hpp"

namespace toolport {

struct StatelessMeta;

class ServerSession : public std::enable_shared_from_this<ServerSession> {
public:
    ServerSession(McpServer& server, SessionOutput output, CallerIdentity caller);
    ~ServerSession();
    ServerSession(const ServerSession&) = delete;
    ServerSession& operator=(const ServerSession&) = delete;

    // Handles one message from the client. Replies go to the SessionOutput, possibly later.
    void receive(protocol::Message message);
    // A request of the stateless revision whose _meta the transport has read already (to
    // route it): served as receive() serves it, without reading that _meta again.
    void receive_stateless(protocol::Request request, const StatelessMeta& meta);
    // Answers a message that could not be parsed (sends the error when it has an id or is
    // a parse error, as JSON-RPC requires).
    void reject(const protocol::ProtocolError& error);

    // Ends the session: cancels in-flight requests and fails pending client requests.
    void close();
    bool closed() const { return closed_; }

    bool initialized() const { return state_ == State::operating || state_ == State::initializing; }
    protocol::Revision revision() const { return revision_; }
    const Json& client_capabilities() const { return or_empty(client_capabilities_); }
    const Json& client_info() const { return or_empty(client_info_); }
    const CallerIdentity& caller() const { return caller_; }
    CallerIdentity& caller() { return caller_; }
    McpServer& server() { return server_; }
    std::size_t in_flight() const { return peer_.serving_count(); }

    // Messages that belong to no request (list_changed, resources/updated).
    void notify(std::string_view method, Json params);
    bool subscribed(const std::string& uri) const { return subscriptions_.count(uri) > 0; }

    // Used by RequestContext.
    void send(const Json& message, const protocol::RequestId* related);
    Task<Json> request_client(std::string method, Json params, const protocol::RequestId& related, CancelToken& token,
                              protocol::Revision revision);
    bool should_log(LogLevel level, const RequestContext& ctx) const;
    void close_stream(const protocol::RequestId& id) {
        if (stream_closer_) stream_closer_(id);
    }
    // Set by transports whose response streams can be closed and resumed.
    void set_stream_closer(std::function<void(const protocol::RequestId&)> closer) {
        stream_closer_ = std::move(closer);
    }
    // Told when a request ends without a reply (the client cancelled it, or the session
    // closed while it ran), so a transport holding a response open for it can end that
    // response instead of waiting for ever. `reason` says why, for the client.
    using UnansweredListener = std::function<void(const protocol::RequestId& id, const std::string& reason)>;
    void set_unanswered_listener(UnansweredListener listener) { unanswered_ = std::move(listener); }
    // Set by a transport whose SessionOutput only writes each message with protocol::serialize
    // (HTTP, stdio): a reply may then hold raw JSON (protocol/raw_json.hpp) where the session
    // has it ready as text (a stateless reply's serverInfo). Others (the in-process transport,
    // which hands messages to a client as they are) get documents throughout.
    void set_output_serializes() { output_serializes_ = true; }

    // Sessions shared between replicas (transports/http_endpoint.cpp, `sessions: shared`):
    // what another replica needs to go on serving this session, and taking it over from
    // that. restore() puts the session in operation with the given state (a session
    // another replica initialized), telling the server of subscriptions gained or lost.
    LogLevel log_level() const { return min_log_level_; }
    const std::set<std::string>& subscriptions() const { return subscriptions_; }
    void restore(protocol::Revision revision, Json client_capabilities, Json client_info, LogLevel level,
                 std::set<std::string> subscriptions);
    // Whether a message from the client is this replica's: a reply to a request it sent, a
    // notifications/cancelled for a request it serves (anything else is, too). A replica
    // relays the others to the replica they belong to.
    bool owns_client_message(const protocol::Message& message) const;
    // Our requests to the client are numbered after `base` (each replica its own range).
    void number_requests_after(std::int64_t base) { peer_.set_id_base(base); }

    // Whether the protocol itself defines `method` (in some revision): an extension cannot
    // take it over.
    static bool is_protocol_method(std::string_view method) {
        return method == "initialize" || method_table().count(method) > 0;
    }

private:
    enum class State { fresh, initializing, operating };
    using Handler = Task<Json> (ServerSession::*)(RequestContext&);

    void on_request(protocol::Request request, const StatelessMeta* known_meta = nullptr);
    void on_notification(const protocol::Notification& notification);
    Json handle_initialize(const protocol::Request& request);
    Task<void> run(std::unique_ptr<RequestContext> ctx, Handler handler);
    // Answers `request` with the error `reply` before any handler runs (its span and metric too).
    void refuse(const protocol::Request& request, protocol::Revision revision, Json reply);
    Json finish_result(Json result, const RequestContext& ctx) const;

    // Method handlers (server_methods.cpp).
    Task<Json> ping(RequestContext& ctx);
    Task<Json> set_log_level(RequestContext& ctx);
    Task<Json> list_tools(RequestContext& ctx);
    Task<Json> call_tool(RequestContext& ctx);
    Task<Json> call_extension(RequestContext& ctx);
    Task<Json> list_resources(RequestContext& ctx);
    Task<Json> list_resource_templates(RequestContext& ctx);
    Task<Json> read_resource(RequestContext& ctx);
    Task<Json> subscribe(RequestContext& ctx);
    Task<Json> unsubscribe(RequestContext& ctx);
    Task<Json> list_prompts(RequestContext& ctx);
    Task<Json> get_prompt(RequestContext& ctx);
    Task<Json> complete(RequestContext& ctx);
    Task<Json> discover(RequestContext& ctx);
    Task<Json> listen(RequestContext& ctx);
    // What call_tool, read_resource and get_prompt run, reported to the server's served
    // listener (the audit log) when they end.
    Task<Json> call_tool_inner(RequestContext& ctx);
    Task<Json> read_resource_inner(RequestContext& ctx);
    Task<Json> get_prompt_inner(RequestContext& ctx);

    static const std::unordered_map<std::string_view, Handler>& method_table();
    static const Json& or_empty(const Json& object);
    static bool method_allowed(std::string_view method, protocol::Revision revision);

    McpServer& server_;
    SessionOutput output_;
    CallerIdentity caller_;
    State state_ = State::fresh;
    // For mcp_server_session_duration_seconds (observability/mcp_metrics.hpp).
    std::chrono::steady_clock::time_point opened_ = std::chrono::steady_clock::now();
    void record_duration() const;
    bool closed_ = false;
    protocol::Revision revision_ = protocol::kLatestStateful;
    // Null (read as empty objects) until a handshake or restore() sets them: the session
    // a stateless request is served in, made and dropped per request, never builds them.
    Json client_capabilities_;
    Json client_info_;
    LogLevel min_log_level_ = LogLevel::debug;
    // The client's requests in flight, and ours to the client (sampling, elicitation, roots).
    protocol::RpcPeer peer_;
    std::set<std::string> subscriptions_;
    std::function<void(const protocol::RequestId&)> stream_closer_;
    UnansweredListener unanswered_;
    bool output_serializes_ = false;
};

}  // namespace toolport
