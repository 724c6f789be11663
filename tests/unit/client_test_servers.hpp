// Real servers for the client transport tests: Toolport's HttpServer on an ephemeral
// loopback port (on its own thread), and this test binary re-run as a stdio child with
// --toolport-test-child=ROLE. Kept apart so that the tests themselves need no Asio.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "transports/http_options.hpp"

namespace toolport {
class McpServer;
}

namespace toolport::test_support {

// An McpServer with the conformance pack (plus whatever `setup` adds) behind a real
// HttpServer at http://127.0.0.1:<ephemeral>/mcp, served from a second thread.
class HttpServerThread {
public:
    explicit HttpServerThread(HttpOptions options = {}, const std::function<void(McpServer&)>& setup = {});
    ~HttpServerThread();
    HttpServerThread(const HttpServerThread&) = delete;
    HttpServerThread& operator=(const HttpServerThread&) = delete;

    std::string url() const;
    unsigned short port() const;
    // Asks the server's thread (and waits for the answer).
    std::size_t session_count();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// This test binary, to start again as a child: {test_binary_path(), "--toolport-test-child=ROLE"}.
// Roles: serve (the conformance pack over stdio), banner (serve after a line that is not
// JSON), exit3 (exits at once with status 3), die_on_call (answers initialize, exits with
// status 7 at the next request), stubborn (answers initialize with its pid as the version,
// then ignores stdin's end and SIGTERM).
std::string test_binary_path();

}  // namespace toolport::test_support
