#include "client/sync_client.hpp"

#include <exception>
#include <optional>

#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "client/blocking_loop.hpp"

namespace toolport::client {

namespace {

// Runs `loop` until `task` is done; returns its value or rethrows its exception. The
// outcome is shared with the completion callback, which must never write into a dead
// stack frame (when run_until throws, the task may still finish later).
template <typename T>
T run_on(BlockingLoop& loop, Task<T> task) {
    struct Outcome {
        bool done = false;
        std::exception_ptr error;
        std::optional<T> value;
    };
    auto outcome = std::make_shared<Outcome>();
    spawn(std::move(task), [outcome](std::optional<T> value, std::exception_ptr error) {
        outcome->value = std::move(value);
        outcome->error = error;
        outcome->done = true;
    });
    loop.run_until(outcome->done);
    if (outcome->error) std::rethrow_exception(outcome->error);
    return std::move(*outcome->value);
}

void run_on(BlockingLoop& loop, Task<void> task) {
    auto done = std::make_shared<bool>(false);
    auto error = std::make_shared<std::exception_ptr>();
    spawn(std::move(task), [done, error](std::exception_ptr e) {
        *error = e;
        *done = true;
    });
    loop.run_until(*done);
    if (*error) std::rethrow_exception(*error);
}

}  // namespace

struct SyncClient::Impl {
    explicit Impl(ClientOptions o) : options(std::move(o)) {}
    BlockingLoop loop;
    ClientOptions options;
    McpClient::RequestHandler on_request;
    std::unique_ptr<McpClient> client;
};

SyncClient::SyncClient(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

SyncClient::~SyncClient() {
    close();
    impl_->client.reset();
    // Let cancelled operations unwind before the loop (and their frames) go away.
    impl_->loop.poll();
}

AsioExecutor& SyncClient::executor() { return impl_->loop.asio_executor(); }
AsioExecutor& SyncClient::event_loop() { return impl_->loop.asio_executor(); }

McpClient& SyncClient::client() {
    if (!impl_->client) throw ClientError("connect() first");
    return *impl_->client;
}

Json SyncClient::connect(std::unique_ptr<ClientTransport> transport) {
    if (impl_->client) throw ClientError("this SyncClient is already connected");
    impl_->client = std::make_unique<McpClient>(impl_->loop.executor(), std::move(transport), impl_->options);
    if (impl_->on_request) impl_->client->on_request(impl_->on_request);
    return run(impl_->client->connect());
}

void SyncClient::on_request(McpClient::RequestHandler handler) {
    if (impl_->client) throw ClientError("on_request() must come before connect()");
    impl_->on_request = std::move(handler);
}

std::vector<Json> SyncClient::list_tools(RequestOptions options) {
    return run(client().list_tools(std::move(options)));
}

Json SyncClient::call_tool(const std::string& name, Json arguments, RequestOptions options) {
    return run(client().call_tool(name, std::move(arguments), std::move(options)));
}

Json SyncClient::request(const std::string& method, Json params, RequestOptions options) {
    return run(client().request(method, std::move(params), std::move(options)));
}

void SyncClient::close() {
    if (!impl_->client) return;
    try {
        run(impl_->client->close());
    } catch (const std::exception& e) {
        spdlog::debug("closing the MCP client: {}", e.what());
    } catch (const OperationCancelled&) {
        // Closing is already giving up on everything in flight.
    }
}

void SyncClient::run(Task<void> task) { run_on(impl_->loop, std::move(task)); }
Json SyncClient::run(Task<Json> task) { return run_on(impl_->loop, std::move(task)); }
std::vector<Json> SyncClient::run(Task<std::vector<Json>> task) { return run_on(impl_->loop, std::move(task)); }

}  // namespace toolport::client
