#include "app/serve.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "app/runtime.hpp"
#include "transports/asio_executor.hpp"
#include "transports/http_server.hpp"

namespace toolport {

int serve(const Config& config) {
    boost::asio::io_context io(1);
    AsioExecutor executor(io);
    std::unique_ptr<Runtime> runtime;
    try {
        runtime = std::make_unique<Runtime>(config, executor);
    } catch (const ConfigError& e) {
        spdlog::error("{}", e.what());
        return 2;
    }
    McpServer& server = runtime->server();

    if (config.transport == Config::Transport::stdio) {
        // SIGINT/SIGTERM end the process; stdin EOF ends the session normally.
        boost::asio::signal_set signals(io, SIGINT, SIGTERM);
        signals.async_wait([](const boost::system::error_code& ec, int) {
            if (!ec) std::_Exit(0);
        });
        spdlog::info("serving MCP on stdio ({} tools)", server.registry().tools().size());
        return serve_stdio(server, config.stdio);
    }

    HttpOptions http_options = config.http;
    http_options.health_report = [&health = runtime->health()]() { return health.http_response(); };
    std::unique_ptr<HttpServer> http;
    try {
        http = std::make_unique<HttpServer>(server, std::move(http_options));
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
    http->start();
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("signal {}: shutting down", sig);
        http->stop();
        io.stop();
    });
    spdlog::info("serving MCP on http://{}:{}{} ({} tools){}", config.http.host, http->port(), config.http.path,
                 server.registry().tools().size(), config.http.bearer_tokens.empty() ? "" : ", bearer auth on");
    io.run();
    return 0;
}

}  // namespace toolport
