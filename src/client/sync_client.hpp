// SyncClient: McpClient for code that wants to block, such as the command line. It owns
// an event loop (an io_context, hidden here) and runs it until each call's task is done.
//
//   SyncClient client;
//   client.connect(make_http_transport(client.executor(), {.url = url}));
//   for (const Json& tool : client.list_tools()) ...
//   client.close();
//
// An in-process server for make_in_process_transport is built on client.executor() too,
// so that it runs on the same loop.
#pragma once

#include <memory>
#include <vector>

#include "client/mcp_client.hpp"

namespace toolport {
class AsioExecutor;
class Executor;
}  // namespace toolport

namespace toolport::client {

class SyncClient {
public:
    explicit SyncClient(ClientOptions options = {});
    // Closes the connection if still open.
    ~SyncClient();
    SyncClient(const SyncClient&) = delete;
    SyncClient& operator=(const SyncClient&) = delete;

    // The loop, for transports (make_http_transport, make_stdio_transport) ...
    AsioExecutor& executor();
    // ... and for everything else that runs on it (an in-process server's Runtime).
    AsioExecutor& event_loop();

    // Answers the server's requests (McpClient::on_request); set before connect().
    void on_request(McpClient::RequestHandler handler);
    // Handshake over `transport`; returns the server's InitializeResult. Once per client.
    Json connect(std::unique_ptr<ClientTransport> transport);
    std::vector<Json> list_tools(RequestOptions options = {});
    Json call_tool(const std::string& name, Json arguments, RequestOptions options = {});
    Json request(const std::string& method, Json params = Json::object(), RequestOptions options = {});
    // Never throws; safe to call more than once.
    void close();

    // The asynchronous client underneath (after connect()).
    McpClient& client();

    // Run the loop until `task` finishes; return its value or rethrow its exception.
    // (Not one template: coroutine code instantiated in headers lands in COMDAT sections,
    // which clang 14 cannot assemble under -fsanitize=function.)
    void run(Task<void> task);
    Json run(Task<Json> task);
    std::vector<Json> run(Task<std::vector<Json>> task);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toolport::client
