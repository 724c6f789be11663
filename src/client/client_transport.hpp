// ClientTransport: how an McpClient's messages reach one MCP server and the server's
// messages come back. Three kinds exist: a child process over stdio, Streamable HTTP,
// and an McpServer in this very process (no sockets; used by the command line's
// --config mode and by tests). This header is Asio-free; the transports' network and
// process code lives in their .cpp files.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
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

class HttpAuthorizer;  // client/http_authorizer.hpp

class ClientTransport {
public:
    struct Handlers {
        // One JSON-RPC message from the server (a batch arrives as its members, in order).
        std::function<void(Json message)> on_message;
        // Optional: a message that arrived on the response stream of one of our requests
        // (a Streamable HTTP POST's SSE stream), with that request's id as JSON text — a
        // server request or notification *about* that request. Without it, on_message.
        std::function<void(Json message, const std::string& request_id)> on_message_about;
        // The connection ended for good (the child exited, the HTTP session is gone).
        // `reason` is one readable line. Not called for close().
        std::function<void(const std::string& reason)> on_closed;
        // Optional. A reply to request `id` came but was over the transport's size limit
        // (`limit`; `bytes_read` of it were read) and was dropped: no other reply to that
        // request will come. The stdio transport reports this; HTTP fails the request's
        // send() with ResponseTooLarge instead.
        std::function<void(const protocol::RequestId& id, std::size_t bytes_read, std::size_t limit)> on_oversized;
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

    // The stateless revision (2026-07-28) from now on: there is no handshake and no
    // session; every request names `protocol_version` in its _meta, and over HTTP also in
    // the MCP-Protocol-Version header, with the Mcp-Method / Mcp-Name / Mcp-Param-*
    // mirrors the revision asks of HTTP requests (stateless_http_headers.hpp). No stream
    // outside requests is opened (handshake_done() is not called).
    virtual void use_stateless_revision(const std::string& protocol_version) {}
    // Whether a notification can reach the server. Not over stateless HTTP: without a
    // session a notification has nowhere to go, and a request is cancelled by closing its
    // response stream, which abandon() does.
    virtual bool notifications_reach_server() const { return true; }

    // Ends the connection politely: HTTP deletes its session; stdio closes the child's
    // stdin, waits, then signals it. Pending sends fail. Never throws.
    virtual Task<void> close() = 0;

    // Ends the connection at once, without the polite steps and without the event loop
    // (which may have stopped: shutdown): a stdio child and its process group are killed
    // and reaped before this returns. Pending sends fail. Never throws.
    virtual void terminate() {}

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
    // A longer line from the child is dropped (and logged); when it is a reply, the
    // handlers' on_oversized hears which request it answered.
    std::size_t max_message_bytes = 64 * 1024 * 1024;
    // Set in the child's environment on top of what it inherits (a value replaces ours).
    // A PATH set here is also where a program without a slash is looked up.
    std::map<std::string, std::string> env;
    // The child inherits all of our environment (true), or only PATH, HOME, LANG, TERM,
    // USER, LOGNAME, SHELL and TMPDIR (false; client/child_process.hpp).
    bool inherit_env = false;
    // The child's working directory; empty: ours. open() throws TransportError naming it
    // when it is missing.
    std::string cwd;
    // When set, the child's stderr goes to a pipe and each line arrives here on the event
    // loop, without its line ending ("\n" or "\r\n"); a line longer than 8 KiB comes cut
    // to its first 8 KiB (the rest is skipped), and a last line without an ending comes
    // when the child closes stderr. Never called once close() has finished or the transport is destroyed.
    // When unset, the child's stderr is ours.
    std::function<void(std::string_view line)> on_stderr_line;
};

// The child's stdin and stdout carry newline-delimited JSON-RPC. The child runs in a
// process group of its own, and the transport's signals (SIGTERM, SIGKILL) go to the
// whole group, so whatever the child started goes with it. Throws std::invalid_argument
// for an empty argv.
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
    // Authorizes requests instead (OAuth, client/oauth/oauth_authorizer.hpp): its header goes
    // on every request, and a request it says to retry after a 401 / 403 is sent again.
    // Not together with bearer_token.
    std::shared_ptr<HttpAuthorizer> authorizer;
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
