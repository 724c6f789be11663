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

#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "client/mcp_client.hpp"

namespace toolport {
class AsioExecutor;
class Executor;
}

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
    Executor& event_loop();

    // Handshake over `transport`; returns the server's InitializeResult. Once per client.
    Json connect(std::unique_ptr<ClientTransport> transport);
    std::vector<Json> list_tools(RequestOptions options = {});
    Json call_tool(const std::string& name, Json arguments, RequestOptions options = {});
    Json request(const std::string& method, Json params = Json::object(), RequestOptions options = {});
    // Never throws; safe to call more than once.
    void close();

    // The asynchronous client underneath (after connect()).
    McpClient& client();

    // Runs the loop until `task` finishes; returns its value or rethrows its exception.
    template <typename T>
    T run(Task<T> task) {
        auto outcome = std::make_shared<Outcome<T>>();
        if constexpr (std::is_void_v<T>) {
            spawn(std::move(task), [outcome](std::exception_ptr error) {
                outcome->error = error;
                outcome->done = true;
            });
        } else {
            spawn(std::move(task), [outcome](std::optional<T> value, std::exception_ptr error) {
                outcome->value = std::move(value);
                outcome->error = error;
                outcome->done = true;
            });
        }
        run_until(outcome->done);
        if (outcome->error) std::rethrow_exception(outcome->error);
        if constexpr (!std::is_void_v<T>) return std::move(*outcome->value);
    }

private:
    // Shared with the task's completion callback, which must never outlive what it writes.
    template <typename T>
    struct Outcome {
        bool done = false;
        std::exception_ptr error;
        std::conditional_t<std::is_void_v<T>, bool, std::optional<T>> value{};
    };
    void run_until(const bool& done);

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toolport::client
