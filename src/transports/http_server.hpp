// HttpServer: Streamable HTTP at /mcp (POST, GET stream, DELETE; sessions, SSE,
// resumability; the stateless 2026-07-28 revision) and legacy HTTP+SSE at /sse +
// /messages. All sockets live in http_server.cpp; this header is Asio-free.
#pragma once

#include <memory>
#include <string>

#include "transports/http_options.hpp"

namespace toolport {

class AsioExecutor;
class McpServer;
class IoThreads;

class HttpServer {
public:
    // Binds at once (throws std::runtime_error with the reason when it cannot). With
    // `io_threads`, connections do their socket work on those loops and hand each request
    // to the engine's loop; without, everything runs on the engine's loop.
    // `executor` is the engine's loop, the one `server` runs on.
    HttpServer(McpServer& server, AsioExecutor& executor, HttpOptions options, IoThreads* io_threads = nullptr);
    ~HttpServer();
    HttpServer(const HttpServer&) = delete;
    HttpServer& operator=(const HttpServer&) = delete;

    // The port actually bound (useful with port 0).
    unsigned short port() const;
    // Starts accepting on the engine's loop.
    void start();
    void stop();
    std::size_t session_count() const;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toolport
