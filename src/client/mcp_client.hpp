// McpClient: an asynchronous MCP client on Toolport's event loop. It speaks to one server
// through a ClientTransport (stdio child process, Streamable HTTP, or an in-process
// McpServer), does the initialize handshake, and then sends requests with ids and
// per-request timeouts. The command line uses it for `toolport list` / `toolport call`
// (through SyncClient, sync_client.hpp); the gateway aggregates upstream servers with it.
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

namespace toolport {
class Executor;
}

namespace toolport::client {

struct ClientOptions {
    std::string client_name = "toolport";
    std::string client_version;  // Toolport's version when empty
    // The capabilities declared in initialize ({"elicitation": {}, "sampling": {}, "roots": {...}}).
    // Declare only what the request handler can answer.
    Json capabilities = Json::object();
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
};

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
    using NotificationHandler = std::function<void(const std::string& method, const Json& params)>;
    // Answers a server request: the result object, or throw JsonRpcError to answer with an
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

    // Opens the transport and does the handshake: initialize (offering 2025-11-25,
    // accepting any revision the server negotiates that Toolport speaks), then
    // notifications/initialized. Returns the server's InitializeResult.
    Task<Json> connect();

    // One request; returns its result. Throws JsonRpcError, TransportError, RequestTimeout
    // (after sending notifications/cancelled), OperationCancelled, or ClientError when the
    // server's reply is not valid JSON-RPC.
    Task<Json> request(std::string method, Json params = Json::object(), RequestOptions options = {});
    Task<void> notify(std::string method, Json params = nullptr);

    // tools/list, following nextCursor until the last page.
    Task<std::vector<Json>> list_tools(RequestOptions options = {});
    // tools/call; returns the CallToolResult (isError results are results, not exceptions).
    Task<Json> call_tool(std::string name, Json arguments = Json::object(), RequestOptions options = {});

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
    // What the server said in the handshake (empty until connect() succeeds).
    const std::string& protocol_version() const { return protocol_version_; }
    const Json& server_info() const { return server_info_; }
    const Json& server_capabilities() const { return server_capabilities_; }
    const std::string& instructions() const { return instructions_; }
    std::string describe_server() const { return transport_->describe(); }

private:
    struct Pending;
    enum class State { fresh, connecting, ready, closed };

    void receive(Json message, std::uint64_t related_tag = 0);
    // A message from the server that classify() refused: ends the request it answers, when
    // it is a reply to a pending one (`reply_shaped`: no "method"), and is ignored otherwise.
    void malformed_message(const protocol::ProtocolError& problem, bool reply_shaped);
    void answer_server_request(protocol::Request request, std::uint64_t related_tag);
    Task<void> serve_request(protocol::Request request, std::shared_ptr<CancelToken> cancel, std::uint64_t related_tag);
    void on_server_notification(const protocol::Notification& notification);
    void transport_closed(const std::string& reason);
    // Ends request `id` with its result or error (when it is still pending). A non-empty
    // `cancel_reason` also tells the server to stop (timeouts and cancellations).
    void finish(std::int64_t id, Json result);
    void fail(std::int64_t id, std::exception_ptr error, const std::string& cancel_reason = {});
    void fail_all(const std::exception_ptr& error);

    Executor& executor_;
    std::unique_ptr<ClientTransport> transport_;
    ClientOptions options_;
    NotificationHandler on_notification_;
    RequestHandler on_request_;
    DisconnectHandler on_disconnect_;

    State state_ = State::fresh;
    bool close_called_ = false;
    std::string closed_reason_;
    std::int64_t next_id_ = 0;
    std::map<std::int64_t, std::shared_ptr<Pending>> pending_;
    std::map<std::string, std::shared_ptr<CancelToken>> serving_;  // server requests, by id as JSON text
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);

    std::string protocol_version_;
    Json server_info_ = Json::object();
    Json server_capabilities_ = Json::object();
    std::string instructions_;
    std::uint64_t related_tag_ = 0;
};

}  // namespace toolport::client
