#include "transports/stdio_transport.hpp"

#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "protocol/jsonrpc.hpp"
#include "server/session.hpp"
#include "transports/batch.hpp"

namespace toolport {

namespace {

void write_all(int fd, const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
        ssize_t n = ::write(fd, data.data() + off, data.size() - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return;  // the client went away; the reader will see EOF
        }
        off += static_cast<std::size_t>(n);
    }
}

}  // namespace

int serve_stdio(McpServer& server, AsioExecutor& executor, const StdioOptions& options, int in_fd, int out_fd) {
    auto& io = executor.io();
    BatchCollector batches;
    auto write_message = [out_fd](const Json& message) { write_all(out_fd, protocol::serialize(message) + "\n"); };
    auto session = server.open_session(
        [&](const Json& message, const protocol::RequestId*) {
            if (auto batch = batches.offer(message)) {
                write_all(out_fd, protocol::serialize(*batch) + "\n");
                return;
            }
            if (!batches.holds(message)) write_message(message);
        },
        CallerIdentity{.session_id = "stdio"});
    session->set_output_serializes();  // (each message written with protocol::serialize)

    protocol::ParseLimits limits;
    limits.max_depth = options.max_json_depth;
    limits.max_batch_size = options.max_batch_size;
    auto handle_line = [&](std::string line) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos) return;
        auto parsed = protocol::parse_payload(line, limits);
        if (parsed.fatal) {
            session->reject(*parsed.fatal);
            return;
        }
        if (parsed.is_batch) {
            if (!session->initialized() || !protocol::allows_batches(session->revision())) {
                session->reject(
                    batch_refusal(session->initialized() ? std::make_optional(session->revision()) : std::nullopt));
                return;
            }
            if (auto ready = batches.begin(parsed)) write_all(out_fd, protocol::serialize(*ready) + "\n");
        }
        for (auto& item : parsed.items) {
            if (auto* error = std::get_if<protocol::ProtocolError>(&item)) {
                // In a batch, the collector has answered the members whose id is unreadable.
                if (!parsed.is_batch || !error->id.is_null()) session->reject(*error);
            } else {
                session->receive(std::move(std::get<protocol::Message>(item)));
            }
        }
    };

    // End of input: let requests still running answer (a client that pipes a request and
    // closes stdin still gets its reply), then stop. Bounded by drain_timeout.
    const auto drain_deadline_after = options.drain_timeout;
    std::optional<Executor::Clock::time_point> drain_deadline;
    std::function<void()> drain = [&]() {
        if (!drain_deadline) drain_deadline = executor.now() + drain_deadline_after;
        if (session->in_flight() == 0 || executor.now() >= *drain_deadline) {
            io.stop();
            return;
        }
        executor.schedule_after(std::chrono::milliseconds(10), drain);
    };

    // A blocking reader thread: stdin may be a pipe, a file or a terminal, and epoll
    // handles only some of those. Lines are handed to the loop thread.
    std::thread reader([&io, &handle_line, &options, &session, &drain, in_fd]() {
        std::string buffer, line;
        bool discarding = false;
        char chunk[65536];
        for (;;) {
            ssize_t n = ::read(in_fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            std::size_t start = 0;
            for (ssize_t i = 0; i < n; ++i) {
                if (chunk[i] != '\n') continue;
                if (!discarding) {
                    line.append(chunk + start, static_cast<std::size_t>(i) - start);
                    boost::asio::post(io, [&handle_line, l = std::move(line)]() mutable { handle_line(std::move(l)); });
                }
                line.clear();
                discarding = false;
                start = static_cast<std::size_t>(i) + 1;
            }
            if (!discarding) {
                line.append(chunk + start, static_cast<std::size_t>(n) - start);
                if (line.size() > options.max_message_bytes) {
                    discarding = true;
                    line.clear();
                    auto limit = options.max_message_bytes;
                    boost::asio::post(io, [&session, limit]() {
                        session->reject(
                            protocol::ProtocolError{nullptr, protocol::error_code::kInvalidRequest,
                                                    fmt::format("Invalid Request: message exceeds the {} byte limit",
                                                                limit)});
                    });
                }
            }
        }
        if (!discarding && !line.empty()) {
            boost::asio::post(io, [&handle_line, l = std::move(line)]() mutable { handle_line(std::move(l)); });
        }
        boost::asio::post(io, [&drain]() { drain(); });
    });

    io.run();
    session->close();
    // Let cancelled handlers unwind before the server goes away.
    io.restart();
    io.poll();
    reader.join();
    spdlog::info("stdin closed; stdio session ended");
    return 0;
}

}  // namespace toolport
