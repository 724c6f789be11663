// fuzz_http_request: raw bytes against the real HTTP server (Boost.Beast parsing, the
// request checks, Streamable HTTP, the stateless revision, legacy SSE routing).
//
// One HttpServer with the conformance pack listens on 127.0.0.1 (port 0) for the whole run;
// it and this harness share one io_context on this thread. Per input: connect, write the
// bytes, shut down the write side, then run the loop until the server closes the connection
// or a short deadline passes, and close.
//
// Sessions: the server makes session ids at random, so an input cannot name one. When the
// input contains the placeholder @SID@, the harness first opens a session itself
// (initialize + notifications/initialized over HTTP) and substitutes its id for every
// @SID@, which lets inputs reach tools/call, GET streams and DELETE on a live session.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "providers/source_table.hpp"
#include "server/server.hpp"
#include "transports/http_server.hpp"

namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

constexpr std::size_t kMaxInput = 256 * 1024;
constexpr auto kDeadline = 40ms;  // per exchange; most finish in well under 1 ms
constexpr std::size_t kMaxResponse = 1 << 20;

bool verbose() {
    static const bool on = std::getenv("FUZZ_HTTP_VERBOSE") != nullptr;  // to check the harness
    return on;
}

struct World {
    net::io_context io{1};
    toolport::AsioExecutor executor{io};
    std::unique_ptr<toolport::McpServer> server;
    std::vector<toolport::providers::RunningSource> sources;  // after the server: stopped before it goes
    std::unique_ptr<toolport::HttpServer> http;
    tcp::endpoint endpoint;

    World() {
        auto logger = std::make_shared<spdlog::logger>("fuzz", std::make_shared<spdlog::sinks::null_sink_mt>());
        logger->set_level(spdlog::level::trace);
        spdlog::set_default_logger(logger);

        toolport::ServerOptions options;
        options.state_secret = "fuzz-fixed-state-secret";
        options.client_request_timeout = 1s;
        server = std::make_unique<toolport::McpServer>(executor, options);
        sources.push_back(toolport::providers::start_source("conformance", *server));

        toolport::HttpOptions http_options;
        http_options.host = "127.0.0.1";
        http_options.port = 0;
        // Sessions opened by inputs are never deleted by them: let the sweeper expire them
        // quickly so a long run does not pile them up.
        http_options.session_idle_timeout = 2s;
        http_options.keep_alive_timeout = 2s;
        http_options.write_timeout = 2s;
        http_options.max_body_bytes = 64 * 1024;
        http_options.sse_retry = 0ms;
        http = std::make_unique<toolport::HttpServer>(*server, executor, http_options);
        http->start();
        endpoint = tcp::endpoint(net::ip::make_address("127.0.0.1"), http->port());
    }

    // Runs the loop until `done` or the deadline.
    template <typename Pred>
    void run_until(Pred done, std::chrono::steady_clock::duration budget) {
        auto deadline = std::chrono::steady_clock::now() + budget;
        while (!done()) {
            auto now = std::chrono::steady_clock::now();
            if (now >= deadline) break;
            io.restart();
            io.run_one_for(deadline - now);
        }
    }

    void poll(int rounds = 16) {
        for (int i = 0; i < rounds; ++i) {
            io.restart();
            if (io.poll() == 0) break;
        }
    }

    // Sends `bytes` on a fresh connection, half-closes, and reads what comes back.
    std::string exchange(std::string bytes) {
        struct State {
            tcp::socket socket;
            std::string request;
            std::string response;
            char buffer[16 * 1024];
            bool done = false;
            boost::system::error_code end;
            explicit State(net::io_context& io) : socket(io) {}
        };
        auto st = std::make_shared<State>(io);
        st->request = std::move(bytes);
        boost::system::error_code ec;
        // Loopback: the kernel completes it from the backlog. libFuzzer's timeout timer
        // (SIGALRM) can interrupt the blocking call; that is not a failure, so try again.
        do {
            ec.clear();
            if (st->socket.is_open()) st->socket.close(ec);
            st->socket.connect(endpoint, ec);
        } while (ec == boost::asio::error::interrupted);
        if (ec) {
            std::fprintf(stderr, "fuzz_http_request: connect failed: %s\n", ec.message().c_str());
            std::abort();
        }

        struct Reader {
            std::shared_ptr<State> st;
            void operator()(const boost::system::error_code& ec, std::size_t n) const {
                if (n) st->response.append(st->buffer, n);
                if (ec || st->response.size() > kMaxResponse) {
                    st->done = true;
                    st->end = ec;
                    return;
                }
                st->socket.async_read_some(net::buffer(st->buffer), Reader{st});
            }
        };
        net::async_write(st->socket, net::buffer(st->request), [st](const boost::system::error_code& ec, std::size_t) {
            boost::system::error_code ignored;
            if (!ec) st->socket.shutdown(tcp::socket::shutdown_send, ignored);
        });
        st->socket.async_read_some(net::buffer(st->buffer), Reader{st});

        auto started = std::chrono::steady_clock::now();
        run_until([&] { return st->done; }, kDeadline);
        if (verbose()) {
            std::fprintf(stderr, "---- exchange: %s (%s) after %.2f ms\n", st->done ? "ended" : "deadline",
                         st->end.message().c_str(),
                         std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
        }
        st->socket.close(ec);  // pending handlers complete with operation_aborted below
        poll();
        return std::move(st->response);
    }

    // Opens a session the way a client does; "" when the server refused.
    std::string open_session() {
        static const std::string body =
            R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
            R"("capabilities":{"sampling":{},"elicitation":{},"roots":{}},"clientInfo":{"name":"fuzz","version":"1"}}})";
        std::string response = exchange(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nConnection: close\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body);
        static constexpr std::string_view kHeader = "Mcp-Session-Id: ";
        auto pos = response.find(kHeader);
        if (pos == std::string::npos) return {};
        auto end = response.find("\r\n", pos);
        std::string id = response.substr(pos + kHeader.size(), end - pos - kHeader.size());
        static const std::string initialized = R"({"jsonrpc":"2.0","method":"notifications/initialized"})";
        exchange(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nConnection: close\r\nMcp-Session-Id: " +
            id + "\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: " + std::to_string(initialized.size()) +
            "\r\n\r\n" + initialized);
        return id;
    }
};

World& world() {
    static World* w = new World();  // lives for the whole fuzzing run
    return *w;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    world();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0 || size > kMaxInput) return 0;
    World& w = world();
    std::string input(reinterpret_cast<const char*>(data), size);

    static constexpr std::string_view kPlaceholder = "@SID@";
    if (input.find(kPlaceholder) != std::string::npos) {
        std::string sid = w.open_session();
        if (sid.empty()) sid = "no-session";
        for (auto pos = input.find(kPlaceholder); pos != std::string::npos;
             pos = input.find(kPlaceholder, pos + sid.size())) {
            input.replace(pos, kPlaceholder.size(), sid);
        }
    }

    std::string response = w.exchange(std::move(input));
    if (verbose()) std::fprintf(stderr, "---- response (%zu bytes)\n%.600s\n", response.size(), response.c_str());
    // Whatever the server says must be an HTTP response.
    if (!response.empty() && response.rfind("HTTP/", 0) != 0) {
        std::fprintf(stderr, "fuzz_http_request: response does not start with a status line:\n%.200s\n",
                     response.c_str());
        std::abort();
    }
    return 0;
}
