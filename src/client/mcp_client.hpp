// McpClient: an asynchronous MCP client on Toolport's event loop. It speaks to one server
// through a ClientTransport (stdio child process, Streamable HTTP, or an in-process
// McpServer), does the initialize handshake, and then sends requests with ids and
// per-request timeouts. The command line uses it for `toolport list` / `toolport call`
// (through SyncClient, sync_client.hpp); the gateway aggregates upstream servers with it.
//
// It also speaks the stateless revision (2026-07-28; ClientOptions::protocol_version, and
// the "auto" fallback for servers that refuse initialize): connect() asks server/discover
// instead of the handshake, and every request carries the protocol version, client info
// and client capabilities in its _meta. A result with resultType "input_required" (a
// multi round-trip request) is answered through RequestOptions::on_input_required and the
// request retried until it completes. Notifications come on a subscriptions/listen request
// the client keeps open. The methods the revision removed keep working for callers:
// ping is sent as server/discover, logging/setLevel sets the level later requests name in
// their _meta, and resources/subscribe / unsubscribe change what subscriptions/listen asks
// for; each returns {} (mcp_client_stateless.cpp).
//
//   McpClient client(executor, make_http_transport(executor, {.url = "http://127.0.0.1:8080/mcp"}));
//   client.on_notification([](const std::string& method, const Json& params) { ... });
//   co_await client.connect();
//   std::vector<Json> tools = co_await client.list_tools();
//   Json result = co_await client.call_tool("greet", {{"who", "Ada"}});
//   co_await client.close();
//
// Everything runs on the executor's thread; no method may be called from another thread.
// Failures are ClientError subclasses (client_errors.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/cancel_token.hpp"
#include "async/task.hpp"
#include "client/client_errors.hpp"
#include "client/client_transport.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/rpc_peer.hpp"

namespace toolport {
class Executor;
}

namespace toolport::client {

struct ClientOptions {
    std::string client_name = "toolport";
    std::string client_version;  // Toolport's version when empty
    // The capabilities declared in initialize ({"elicitation": {}, "sampling": {}, "roots": {...}}),
    // or in the stateless revision in every request's _meta (unless the request names its
    // own, RequestOptions::client_capabilities). Declare only what the request handler
    // (stateless: the on_input_required handler) can answer.
    Json capabilities = Json::object();
    // The protocol revision to speak.
    //   ""            "auto": initialize offering the latest revision with the handshake
    //                 (2025-11-25); when the server refuses initialize as a method it does
    //                 not have (-32601, over HTTP also with status 404) or a version it does
    //                 not speak (-32022), the client asks server/discover and speaks
    //                 2026-07-28 statelessly.
    //   "2025-06-18"  (any revision with the handshake) offered in initialize; the server
    //                 may still negotiate another one Toolport speaks. No fallback.
    //   "2026-07-28"  stateless from the start: server/discover, no initialize.
    // connect() throws ClientError for a revision Toolport does not speak.
    std::string protocol_version;
    // Applies to requests that give no timeout of their own, and to initialize.
    std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
};

// Per-request settings.
struct RequestOptions {
    std::optional<std::chrono::milliseconds> timeout;  // ClientOptions::request_timeout when empty
    // Fires notifications/cancelled and ends the request with OperationCancelled.
    CancelToken* cancel = nullptr;
    // When set, the request carries a progress token and the server's
    // notifications/progress for it arrive here (params as sent).
    std::function<void(const Json& progress)> on_progress;
    // The caller's mark for this request (non-zero): a server request or notification the
    // transport can tell is about it carries it (ServerRequest::related_tag,
    // McpClient::related_tag()), e.g. a sampling request on this request's HTTP stream.
    std::uint64_t tag = 0;
    // The result's "content" and "structuredContent" may stay raw JSON
    // (protocol/raw_json.hpp): for a result passed on unread (a gateway's tools/call),
    // which the writer sends on as the text it came in. Otherwise they are expanded.
    bool raw_result = false;

    // ---- the stateless revision only (ignored after an initialize handshake)

    // The client capabilities this request declares in its _meta instead of
    // ClientOptions::capabilities (a gateway passes on those of its own client, so the
    // server asks only what that client can answer).
    std::optional<Json> client_capabilities;
    // The log level this request names in its _meta (io.modelcontextprotocol/logLevel)
    // instead of the one last set with logging/setLevel; the server sends
    // notifications/message for it only at this level or above.
    std::optional<std::string> log_level;
    // Answers a result with resultType "input_required": gets its inputRequests
    // ({key: {"method": ..., "params": ...}}: elicitation/create, sampling/createMessage,
    // roots/list) and returns the inputResponses ({key: the result of that request}). The
    // request is then sent again, with the same params plus inputResponses and the
    // server's requestState, up to kMaxInputRounds times. What the handler throws ends the
    // request. Without a handler such a result fails the request with InputRequiredError.
    // `timeout` applies to each round trip; the handler's own time is not counted.
    std::function<Task<Json>(const Json& input_requests)> on_input_required;
};

// How many times one request is answered with input_required and sent again before
// McpClient gives up (InputRequiredError).
inline constexpr int kMaxInputRounds = 10;

// A request the server sends to the client (sampling/createMessage, elicitation/create,
// roots/list, ...).
struct ServerRequest {
    protocol::RequestId id;
    std::string method;
    Json params;
    // Fired when the server cancels the request (notifications/cancelled) or the client
    // closes; the answer is then not sent.
    CancelToken& cancel;
    // The RequestOptions::tag of the request of ours this one is about, when the
    // transport can tell (Streamable HTTP: it came on that request's stream); else 0.
    std::uint64_t related_tag = 0;
};

class McpClient {
public:
    // Every server notification, progress included (params null when the server sent none).
    // Stateless: also those of subscriptions/listen (params with the _meta subscriptionId),
    // but not its notifications/subscriptions/acknowledged, which is the client's business.
    using NotificationHandler = std::function<void(const std::string& method, const Json& params)>;
    // Answers a server request: the result object, or throw RpcError to answer with an
    // error (any other exception becomes -32603). Without a handler, requests get -32601.
    using RequestHandler = std::function<Task<Json>(const ServerRequest& request)>;
    // The transport ended without close() being called (child died, session expired).
    using DisconnectHandler = std::function<void(const std::string& reason)>;

    McpClient(Executor& executor, std::unique_ptr<ClientTransport> transport, ClientOptions options = {});
    // Closes the transport without the polite steps of close(); prefer co_await close().
    ~McpClient();
    McpClient(const McpClient&) = delete;
    McpClient& operator=(const McpClient&) = delete;

    // Set these before connect().
    void on_notification(NotificationHandler handler) { on_notification_ = std::move(handler); }
    void on_request(RequestHandler handler) { on_request_ = std::move(handler); }
    void on_disconnect(DisconnectHandler handler) { on_disconnect_ = std::move(handler); }

    // Opens the transport and does the handshake: initialize (offering 2025-11-25, or
    // ClientOptions::protocol_version; accepting any revision with the handshake the
    // server negotiates that Toolport speaks), then notifications/initialized. Returns the
    // server's InitializeResult.
    // Stateless (ClientOptions::protocol_version, or the "auto" fallback): server/discover
    // instead, whose result is returned (supportedVersions, capabilities, serverInfo,
    // instructions); then, when a notification handler is set and the server declares
    // listChanged or subscribe, a subscriptions/listen request is kept open for them.
    Task<Json> connect();

    // One request; returns its result. Throws RpcError, TransportError, RequestTimeout
    // (after telling the server to stop: notifications/cancelled, or over stateless HTTP
    // by closing the request's stream), OperationCancelled, or ClientError when the
    // server's reply is not valid JSON-RPC.
    // Stateless: the result is returned as the server sent it, "resultType": "complete"
    // (and the _meta serverInfo, ttlMs, cacheScope a server adds) included; input_required
    // results are answered through RequestOptions::on_input_required first.
    Task<Json> request(std::string method, Json params = Json::object(), RequestOptions options = {});
    // Throws ClientError over stateless HTTP, where notifications cannot reach the server.
    Task<void> notify(std::string method, Json params = nullptr);

    // tools/list, following nextCursor until the last page. Stateless: a tool whose
    // "x-mcp-header" markings are invalid (x_mcp_header_problem, stateless_http_headers.hpp)
    // is left out, with a warning, and remembered in excluded_tools().
    Task<std::vector<Json>> list_tools(RequestOptions options = {});
    // tools/call; returns the CallToolResult (isError results are results, not exceptions).
    // A tool a listing excluded is not called (ClientError).
    Task<Json> call_tool(std::string name, Json arguments = Json::object(), RequestOptions options = {});
    // The tools the last listing left out, with the reason.
    const std::map<std::string, std::string>& excluded_tools() const { return excluded_tools_; }

    // Fails whatever is pending and ends the connection (DELETE for HTTP, stdin closed and
    // the child reaped for stdio). Safe to call more than once.
    Task<void> close();
    // The same at once, for shutdown: what is pending fails, the transport is terminated
    // (ClientTransport::terminate: a child and its process group killed and reaped now),
    // even while coroutines that will never resume still hold this client.
    void terminate();

    bool is_open() const { return state_ == State::ready; }
    // While the notification handler runs: the tag of the request the notification is
    // about (see RequestOptions::tag), 0 when unknown.
    std::uint64_t related_tag() const { return related_tag_; }
    // What the server said in the handshake or in server/discover (empty until connect()
    // succeeds). protocol_version() is "2026-07-28" when the client speaks statelessly.
    const std::string& protocol_version() const { return protocol_version_; }
    bool is_stateless() const { return stateless_; }
    const Json& server_info() const { return server_info_; }
    const Json& server_capabilities() const { return server_capabilities_; }
    const std::string& instructions() const { return instructions_; }
    std::string describe_server() const { return transport_->describe(); }

private:
    struct Listening;
    enum class State { fresh, connecting, ready, closed };

    // One request and its reply (no stateless _meta, no input rounds). `timed`: false for
    // subscriptions/listen, which stays open until cancelled.
    Task<Json> round_trip(std::string method, Json params, RequestOptions options = {}, bool timed = true);
    // The same without waiting: registers the request, tells `registered` its id, sends it,
    // and returns its id and awaitable reply.
    protocol::RpcPeer::Started send_request(std::string method, Json params, const RequestOptions& options, bool timed,
                                            const std::function<void(std::int64_t id)>& registered = {});
    Task<Json> initialize(const std::string& offered);
    void accept_server_description(const Json& result);

    // ---- the stateless revision (mcp_client_stateless.cpp)
    Task<Json> discover();
    Task<Json> stateless_request(std::string method, Json params, RequestOptions options);
    // ping, logging/setLevel, resources/subscribe and resources/unsubscribe, which
    // 2026-07-28 removed, done the stateless way.
    static bool removed_in_stateless(const std::string& method);
    Task<Json> stand_in_for_removed(std::string method, Json params, RequestOptions options);
    Json with_stateless_meta(Json params, const RequestOptions& options) const;
    void start_listening();
    void open_listen();
    void listen_ended(std::int64_t id, std::exception_ptr error);
    // Ends every listen request here (without telling the server); returns their ids.
    std::vector<std::int64_t> stop_listening();
    // False when the notification belongs to a listen stream that was replaced (dropped).
    bool note_listen_notification(const std::string& method, const Json& params);

    void receive(Json message, std::uint64_t related_tag = 0);
    // A message from the server that classify() refused: ends the request it answers, when
    // it is a reply to a pending one (`reply_shaped`: no "method"), and is ignored otherwise.
    void malformed_message(const protocol::ProtocolError& problem, bool reply_shaped);
    void answer_server_request(protocol::Request request, std::uint64_t related_tag);
    Task<void> serve_request(protocol::Request request, std::shared_ptr<CancelToken> cancel, std::uint64_t related_tag);
    Task<void> send_reply(Json reply, std::string method);
    void on_server_notification(const protocol::Notification& notification);
    void transport_closed(const std::string& reason);
    // Ends every request both ways: ours fail with `error`, the server's are stopped.
    void end_all(const std::exception_ptr& error, const std::string& reason);
    // A request of ours given up (timed out, cancelled): the server is told to stop.
    void give_up(std::int64_t id, const std::string& method, const std::string& reason);

    Executor& executor_;
    std::unique_ptr<ClientTransport> transport_;
    ClientOptions options_;
    NotificationHandler on_notification_;
    RequestHandler on_request_;
    DisconnectHandler on_disconnect_;

    State state_ = State::fresh;
    bool close_called_ = false;
    std::string closed_reason_;
    // Our requests (ids, replies, timeouts, cancellation, progress) and the server's ones
    // being answered: the same bookkeeping a ServerSession keeps for its side.
    protocol::RpcPeer peer_;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

    std::string protocol_version_;
    bool stateless_ = false;
    std::string stateless_version_;  // what requests name in _meta, set before server/discover
    std::string log_level_;          // from logging/setLevel, for later requests' _meta
    std::unique_ptr<Listening> listening_;
    Json server_info_ = Json::object();
    Json server_capabilities_ = Json::object();
    std::string instructions_;
    std::map<std::string, std::string> excluded_tools_;
    std::uint64_t related_tag_ = 0;
};

}  // namespace toolport::client
