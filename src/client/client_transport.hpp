// ClientTransport: how an McpClient's messages reach one MCP server and the server's
// messages come back. Three kinds exist: a child process over stdio, Streamable HTTP,
// and an McpServer in this very process (no sockets; used by the command line's
// --config mode and by tests). This header is Asio-free; the transports' network and
// process code lives in their .cpp files.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "client/client_errors.hpp"
#include "protocol/jsonrpc.hpp"

namespace toolport {
class AsioExecutor;
class McpServer;
struct CallerIdentity;
}  // namespace toolport

namespace toolport::client {

class ClientTransport {
public:
    struct Handlers {
        // One JSON-RPC message from the server (a batch arrives as its members, in order).
        std::function<void(Json message)> on_message;
        // The connection ended for good (the child exited, the HTTP session is gone).
        // `reason` is one readable line. Not called for close().
        std::function<void(const std::string& reason)> on_closed;
    };

    virtual ~ClientTransport() = default;

    // Connects: starts the child process, or checks nothing yet for HTTP (its first POST
    // connects). Throws TransportError.
    virtual Task<void> open(Handlers handlers) = 0;

    // Delivers one message. Over HTTP a request's POST also carries its reply (a JSON body
    // or an SSE stream), so for requests this completes once the reply has been handed to
    // on_message. Throws TransportError when the message or its reply cannot be delivered.
    virtual Task<void> send(Json message) = 0;

    // The client no longer waits for request `id` (timeout, cancellation): an HTTP
    // transport drops that request's response stream.
    virtual void abandon(const protocol::RequestId& id) {}

    // The server accepted `protocol_version` in initialize (HTTP sends it as
    // MCP-Protocol-Version on every later request).
    virtual void use_protocol_version(const std::string& protocol_version) {}
    // The handshake is complete (notifications/initialized went out): HTTP may now open
    // its stream for server messages that belong to no request.
    virtual void handshake_done() {}

    // Ends the connection politely: HTTP deletes its session; stdio closes the child's
    // stdin, waits, then signals it. Pending sends fail. Never throws.
    virtual Task<void> close() = 0;

    // Names the server in error messages: the URL (without its query) or the program.
    virtual std::string describe() const = 0;
};

// ---------------------------------------------------------------- stdio

struct StdioClientOptions {
    // The program and its arguments, passed to execvp as they are (no shell). argv[0] is
    // looked up in PATH when it has no slash.
    std::vector<std::string> argv;
    // How long the child may take to exit after its stdin closes, and again after SIGTERM,
    // before it gets SIGTERM and SIGKILL respectively.
    std::chrono::milliseconds shutdown_grace{std::chrono::seconds(2)};
    // A longer line from the child is dropped (and logged).
    std::size_t max_message_bytes = 64 * 1024 * 1024;
};

// The child's stdin and stdout carry newline-delimited JSON-RPC; its stderr is ours.
// Throws std::invalid_argument for an empty argv.
std::unique_ptr<ClientTransport> make_stdio_transport(AsioExecutor& executor, StdioClientOptions options);

// ---------------------------------------------------------------- Streamable HTTP

struct HttpClientOptions {
    // http:// or https://host[:port][/path][?query]. https uses the system's CA store
    // (SSL_CERT_FILE / SSL_CERT_DIR honoured) plus `ca_file`; HTTPS_PROXY, HTTP_PROXY and
    // NO_PROXY are honoured as curl does.
    std::string url;
    // A PEM file of CAs trusted besides the system store (a private CA).
    std::string ca_file;
    // Skip certificate verification (a warning is logged). For a throwaway test server only.
    bool insecure_skip_verify = false;
    // Sent as "Authorization: Bearer <token>" when not empty. Never logged.
    std::string bearer_token;
    // Extra request headers (name, value), e.g. an API key header of a hosted server.
    std::vector<std::pair<std::string, std::string>> headers;
    std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
    // For exchanges that are not requests (notifications, replies to the server, DELETE):
    // how long the server may take to acknowledge them.
    std::chrono::milliseconds acknowledge_timeout{std::chrono::seconds(30)};
    // A larger JSON body or SSE event fails the exchange.
    std::size_t max_message_bytes = 64 * 1024 * 1024;
    // Open the GET stream on which the server sends messages that belong to no request
    // (list_changed, resource updates), once the handshake is done.
    bool listen = true;
    // How many times a response stream the server ended early is resumed with
    // Last-Event-ID (without any new event in between) before the request fails.
    int max_resumptions = 5;
};

// Throws std::invalid_argument for a URL or header it cannot use (naming what is wrong).
std::unique_ptr<ClientTransport> make_http_transport(AsioExecutor& executor, HttpClientOptions options);

// ---------------------------------------------------------------- in-process

// A session on `server` (which must outlive the transport), as `caller`. Messages are
// handed over as JSON values on the server's executor; nothing is serialized.
std::unique_ptr<ClientTransport> make_in_process_transport(McpServer& server, const CallerIdentity& caller);

}  // namespace toolport::client
