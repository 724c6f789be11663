#include "client/sync_client.hpp"

#include <exception>
#include <optional>

#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "client/blocking_loop.hpp"

namespace toolport::client {

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

void SyncClient::run(Task<void> task) { impl_->loop.run(std::move(task)); }
Json SyncClient::run(Task<Json> task) { return impl_->loop.run(std::move(task)); }
std::vector<Json> SyncClient::run(Task<std::vector<Json>> task) { return impl_->loop.run(std::move(task)); }

}  // namespace toolport::client
