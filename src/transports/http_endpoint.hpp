// HttpEndpoint: the MCP side of the HTTP server, minus the sockets. It decides the answer to
// every request — Streamable HTTP at the MCP path (POST, GET streams, DELETE; sessions,
// SSE, resumability; the stateless 2026-07-28 revision), legacy HTTP+SSE at /sse and
// /messages, /metrics and /health — and keeps the sessions, their streams and their
// lifetimes. It runs on the engine's loop only; the connections (http_server.cpp) read
// requests, hand them here, and write what comes back.
//
// Every POST ends: answered, answered with an error when its request is cancelled or its
// session ends, or closed when its client leaves.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "transports/http_exchange.hpp"
#include "transports/http_options.hpp"

namespace toolport {

class Executor;
class McpServer;
class PendingPost;

class HttpEndpoint {
public:
    HttpEndpoint(McpServer& server, Executor& executor, HttpOptions options);
    ~HttpEndpoint();
    HttpEndpoint(const HttpEndpoint&) = delete;
    HttpEndpoint& operator=(const HttpEndpoint&) = delete;

    // The answer to `request`. Most are ready at once; an answer still waiting for its
    // requests comes back as `pending`.
    HttpAnswer answer(const HttpRequestView& request);

    // Starts expiring idle sessions and unfinished handshakes.
    void start();
    // Ends every session and every open answer; nothing is answered after this.
    void stop();

    std::size_t session_count() const;

    // Counts an answer the connection made itself (read errors, refusals) in
    // toolport_http_requests_total, like the endpoint's own.
    static void count_request(HttpMethod method, unsigned status);

private:
    friend class PendingPost;
    struct State;
    std::shared_ptr<State> state_;
};

}  // namespace toolport
