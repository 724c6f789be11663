// The legacy HTTP+SSE client transport of MCP 2024-11-05, for upstream servers that
// predate Streamable HTTP. The client opens GET <url> (Accept: text/event-stream); the
// server's first event, "endpoint", names the URI to POST messages to (resolved against
// the stream's URL; it must be of the same origin). Every message the client sends is one
// POST there, which the server merely acknowledges (202 or 200); every message of the
// server (responses, requests, notifications) arrives as a "message" event on the GET
// stream. The session lives exactly as long as that stream.
//
//   HttpClientOptions options;
//   options.url = "http://127.0.0.1:8080/sse";
//   McpClient client(executor, make_legacy_sse_transport(executor, std::move(options)));
//
// HttpClientOptions are read as for Streamable HTTP (client_transport.hpp): https with
// the system's CAs plus ca_file, HTTPS_PROXY / HTTP_PROXY / NO_PROXY, bearer token and
// extra headers on the GET and on every POST; connect_timeout bounds open() until the
// endpoint event has arrived; acknowledge_timeout bounds each POST; max_message_bytes
// bounds one event of the stream. `listen` and `max_resumptions` do not apply (the one
// stream is always open, and a legacy stream cannot be resumed).
//
// This header is Asio-free; the network code is in legacy_sse_client_transport.cpp.
#pragma once

#include <memory>

#include "client/client_transport.hpp"

namespace toolport {
class AsioExecutor;
}

namespace toolport::client {

// Throws std::invalid_argument for a URL or header it cannot use (naming what is wrong).
std::unique_ptr<ClientTransport> make_legacy_sse_transport(AsioExecutor& executor, HttpClientOptions options);

}  // namespace toolport::client
