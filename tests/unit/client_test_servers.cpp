#include "client_test_servers.hpp"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <future>
#include <iostream>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "providers/source_table.hpp"
#include "protocol/jsonrpc.hpp"
#include "server/server.hpp"
#include "transports/http_server.hpp"
#include "transports/io_threads.hpp"
#include "transports/stdio_transport.hpp"
#include "util/json.hpp"

namespace toolport::test_support {

struct HttpServerThread::Impl {
    std::unique_ptr<IoThreads> io_threads;  // first: outlives the engine's loop, as in serve
    boost::asio::io_context io{1};
    AsioExecutor executor{io};
    std::unique_ptr<McpServer> server;
    std::vector<providers::RunningSource> sources;  // after the server: stopped before it goes
    std::unique_ptr<HttpServer> http;
    std::thread thread;
};

HttpServerThread::HttpServerThread(HttpOptions options, const std::function<void(McpServer&)>& setup)
    : impl_(std::make_unique<Impl>()) {
    ServerOptions server_options;
    server_options.page_size = 5;
    impl_->server = std::make_unique<McpServer>(impl_->executor, server_options);
    impl_->sources.push_back(providers::start_source("conformance", *impl_->server));
    if (setup) setup(*impl_->server);
    options.host = "127.0.0.1";
    options.port = 0;
    if (options.io_threads > 0) impl_->io_threads = std::make_unique<IoThreads>(options.io_threads);
    impl_->http = std::make_unique<HttpServer>(*impl_->server, impl_->executor, options, impl_->io_threads.get());
    impl_->http->start();
    impl_->thread = std::thread([impl = impl_.get()]() { impl->io.run(); });
}

HttpServerThread::~HttpServerThread() {
    boost::asio::post(impl_->io, [impl = impl_.get()]() {
        impl->http->stop();
        impl->io.stop();
    });
    impl_->thread.join();
    if (impl_->io_threads) impl_->io_threads->stop();
    impl_->http.reset();
    impl_->server.reset();
}

unsigned short HttpServerThread::port() const { return impl_->http->port(); }

std::string HttpServerThread::url() const { return "http://127.0.0.1:" + std::to_string(port()) + "/mcp"; }

std::size_t HttpServerThread::session_count() {
    std::promise<std::size_t> count;
    boost::asio::post(impl_->io, [&]() { count.set_value(impl_->http->session_count()); });
    return count.get_future().get();
}

std::string test_binary_path() {
    char path[4096];
    ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (n <= 0) throw std::runtime_error("cannot find this test binary");
    return std::string(path, static_cast<std::size_t>(n));
}

namespace {

// The smallest stdio "server": answers initialize (with its pid as the version), then
// calls `on_request` for every later request, until stdin ends.
void minimal_server(const std::function<void(const Json& request)>& on_request) {
    std::string line;
    while (std::getline(std::cin, line)) {
        Json message = Json::parse(line, nullptr, false);
        if (!message.is_object() || !message.contains("id") || !message.contains("method")) continue;
        if (message["method"] == "initialize") {
            Json reply = protocol::make_response(message["id"],
                                                 {{"protocolVersion", "2025-11-25"},
                                                  {"capabilities", Json::object()},
                                                  {"serverInfo",
                                                   {{"name", "minimal"}, {"version", std::to_string(::getpid())}}}});
            std::cout << reply.dump() << std::endl;
        } else {
            on_request(message);
        }
    }
}

[[noreturn]] void run_child(const std::string& role) {
    spdlog::set_level(spdlog::level::off);  // stdout carries the protocol
    if (role == "exit3") std::_Exit(3);
    if (role == "die_on_call") {
        minimal_server([](const Json&) { std::_Exit(7); });
        std::_Exit(0);
    }
    if (role == "stubborn") {
        ::signal(SIGTERM, SIG_IGN);
        std::thread([]() { minimal_server([](const Json&) {}); }).detach();
        for (;;) ::pause();  // stdin closed or not, this one stays
    }
    if (role == "big_reply") {
        // A reply of 300 KB, over four times the reader's 64 KiB buffer: it arrives in several
        // reads, which the transport must join into one line.
        minimal_server([](const Json& request) {
            Json reply = protocol::make_response(
                request["id"], {{"content", Json::array({{{"type", "text"}, {"text", std::string(300000, 'b')}}})}});
            std::cout << reply.dump() << std::endl;
        });
        std::_Exit(0);
    }
    if (role == "banner") std::cout << "Starting the server, please wait..." << std::endl;
    if (role == "serve" || role == "banner") {
        boost::asio::io_context io(1);
        AsioExecutor executor(io);
        McpServer server(executor, ServerOptions{});
        auto pack = providers::start_source("conformance", server);
        // As in `toolport serve --stdio`: serve_stdio's loop needs work of its own from the
        // start, and SIGTERM ends the process.
        boost::asio::signal_set signals(io, SIGTERM);
        signals.async_wait([](const boost::system::error_code& ec, int) {
            if (!ec) std::_Exit(0);
        });
        std::_Exit(serve_stdio(server, executor, StdioOptions{}));
    }
    std::_Exit(100);
}

// Runs before main() (during static initialization): a child started by the tests becomes
// its role and never returns. What the roles use initializes on first use (function-local
// statics), so it does not matter which other translation units are initialized yet.
const bool kIsChild = []() {
    std::ifstream cmdline("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());
    const std::string flag = std::string(1, '\0') + "--toolport-test-child=";
    auto at = all.find(flag);
    if (at == std::string::npos) return false;
    std::string role = all.substr(at + flag.size());
    role = role.substr(0, role.find('\0'));
    run_child(role);
}();

}  // namespace

}  // namespace toolport::test_support
