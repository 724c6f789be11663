#include "client/sync_client.hpp"

#include <boost/asio/io_context.hpp>
#include <spdlog/spdlog.h>

#include "transports/asio_executor.hpp"

namespace toolport::client {

struct SyncClient::Impl {
    explicit Impl(ClientOptions o) : executor(io), options(std::move(o)) {}
    boost::asio::io_context io{1};
    AsioExecutor executor;
    ClientOptions options;
    std::unique_ptr<McpClient> client;
};

SyncClient::SyncClient(ClientOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

SyncClient::~SyncClient() {
    close();
    impl_->client.reset();
    // Let cancelled operations unwind before the loop (and their frames) go away.
    impl_->io.restart();
    impl_->io.poll();
}

AsioExecutor& SyncClient::executor() { return impl_->executor; }
Executor& SyncClient::event_loop() { return impl_->executor; }

McpClient& SyncClient::client() {
    if (!impl_->client) throw ClientError("connect() first");
    return *impl_->client;
}

Json SyncClient::connect(std::unique_ptr<ClientTransport> transport) {
    if (impl_->client) throw ClientError("this SyncClient is already connected");
    impl_->client = std::make_unique<McpClient>(impl_->executor, std::move(transport), impl_->options);
    return run(impl_->client->connect());
}

std::vector<Json> SyncClient::list_tools(RequestOptions options) { return run(client().list_tools(std::move(options))); }

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
    }
}

void SyncClient::run_until(const bool& done) {
    impl_->io.restart();
    while (!done) {
        if (impl_->io.run_one() == 0 && !done) {
            throw std::logic_error("the event loop ran out of work before the MCP client call finished");
        }
    }
}

}  // namespace toolport::client
