#include "transports/stdio_transport.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
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
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                // A host may hand over a non-blocking stdout: wait until it takes more.
                pollfd writable{.fd = fd, .events = POLLOUT, .revents = 0};
                ::poll(&writable, 1, -1);
                continue;
            }
            return;  // the client went away; the reader will see EOF
        }
        off += static_cast<std::size_t>(n);
    }
}

// Cuts newline-delimited messages out of what stdin gives, chunk by chunk. A line longer
// than the limit is refused once (on_oversized) and the rest of it, up to its newline,
// skipped: its bytes are never held.
class InputLines {
public:
    explicit InputLines(std::size_t max_line) : max_line_(max_line) {}

    template <typename OnLine, typename OnOversized>
    void feed(std::string_view chunk, OnLine&& on_line, OnOversized&& on_oversized) {
        for (auto newline = chunk.find('\n'); newline != std::string_view::npos; newline = chunk.find('\n')) {
            if (!discarding_) {
                if (line_.size() + newline > max_line_) {
                    on_oversized();  // whole in this chunk, or ended in it
                } else {
                    line_.append(chunk.substr(0, newline));
                    on_line(std::move(line_));
                }
            }
            line_.clear();
            discarding_ = false;
            chunk.remove_prefix(newline + 1);
        }
        if (discarding_) return;
        line_.append(chunk);
        if (line_.size() > max_line_) {
            discarding_ = true;
            std::string().swap(line_);
            on_oversized();
        }
    }

    // End of input: a last line without its newline is still a message.
    template <typename OnLine>
    void finish(OnLine&& on_line) {
        if (!discarding_ && !line_.empty()) on_line(std::move(line_));
        line_.clear();
    }

private:
    std::size_t max_line_;
    std::string line_;
    bool discarding_ = false;
};

// Registers a duplicate of `fd` with the loop's epoll when it is a pipe or a socket (what
// hosts give their servers; Asio's reads make it non-blocking). Anything else is read by a
// thread: a terminal (whose flags the shell shares), and what epoll cannot watch at all (a
// regular file, /dev/null: Asio accepts those and fails each wait).
bool watch_on_loop(boost::asio::posix::stream_descriptor& watched, int fd) {
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) return false;
    const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) return false;
    boost::system::error_code ec;
    watched.assign(copy, ec);
    if (ec) {
        ::close(copy);
        return false;
    }
    return true;
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

    // Lines are cut from what stdin gives; a line over the limit is refused and the rest of
    // it skipped up to its newline.
    InputLines lines(options.max_message_bytes);
    auto refuse_oversized = [&session, limit = options.max_message_bytes]() {
        session->reject(
            protocol::ProtocolError{nullptr, protocol::error_code::kInvalidRequest,
                                    fmt::format("Invalid Request: message exceeds the {} byte limit", limit)});
    };

    // A pipe or a socket (what hosts give their servers) is read on the loop itself: a message
    // then reaches the session without waking a second thread, which would hand it over with
    // a wake-up of the loop (two context switches per message). Anything else (a file, a
    // terminal) is read by a blocking reader thread that posts its lines.
    boost::asio::posix::stream_descriptor watched(io);
    std::function<void()> read_input;
    std::vector<char> chunk;
    std::optional<std::thread> reader;
    if (watch_on_loop(watched, in_fd)) {
        // Asio tries each read before it waits: under load the next message is often there
        // already, and no pass through epoll is spent on it.
        chunk.resize(65536);
        read_input = [&]() {
            watched.async_read_some(boost::asio::buffer(chunk), [&](const boost::system::error_code& ec, std::size_t n) {
                if (ec == boost::asio::error::operation_aborted) return;
                if (ec) {  // the end of stdin (or an error reading it)
                    lines.finish(handle_line);
                    drain();
                    return;
                }
                lines.feed(std::string_view(chunk.data(), n), handle_line, refuse_oversized);
                read_input();
            });
        };
        read_input();
    } else {
        reader.emplace([&io, &lines, &handle_line, &refuse_oversized, &drain, in_fd]() {
            auto post_line = [&io, &handle_line](std::string line) {
                boost::asio::post(io, [&handle_line, l = std::move(line)]() mutable { handle_line(std::move(l)); });
            };
            auto post_refusal = [&io, &refuse_oversized]() { boost::asio::post(io, refuse_oversized); };
            char chunk[65536];
            for (;;) {
                ssize_t n = ::read(in_fd, chunk, sizeof chunk);
                if (n < 0 && errno == EINTR) continue;
                if (n <= 0) break;
                lines.feed(std::string_view(chunk, static_cast<std::size_t>(n)), post_line, post_refusal);
            }
            lines.finish(post_line);
            boost::asio::post(io, [&drain]() { drain(); });
        });
    }

    io.run();
    session->close();
    // A read of stdin still pending ends (its handler sees operation_aborted in the poll below).
    boost::system::error_code ignored;
    watched.close(ignored);
    // Let cancelled handlers unwind before the server goes away.
    io.restart();
    io.poll();
    if (reader) reader->join();
    spdlog::info("stdin closed; stdio session ended");
    return 0;
}

}  // namespace toolport
