// The stdio client transport: a child process (ChildProcess) whose stdin and stdout pipes
// sit on the event loop as Asio stream descriptors. Messages are newline-delimited JSON.
// The child's stderr is ours, or, when the owner wants its lines, a third pipe read on
// the loop as well.
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <deque>
#include <mutex>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "async/await_asio.hpp"
#include "async/completion.hpp"
#include "client/child_process.hpp"
#include "client/client_transport.hpp"
#include "client/json_id_scanner.hpp"
#include "client/wire_payload.hpp"
#include "util/json_release.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

// A longer stderr line is cut at this size and the rest of it skipped: handed on in pieces,
// one 100 KB line would be a dozen log lines.
constexpr std::size_t kMaxStderrLine = 8 * 1024;
// How long the end of a child waits for its stderr to end too: by then its whole process
// group is dead and the pipe drains at once, unless something that left the group holds it.
constexpr auto kStderrDrainLimit = 500ms;

// A write to a child that has exited must fail with EPIPE, not kill this process.
void ignore_sigpipe() {
    static std::once_flag once;
    std::call_once(once, []() {
        struct sigaction action {};
        action.sa_handler = SIG_IGN;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGPIPE, &action, nullptr);
    });
}

struct Impl : std::enable_shared_from_this<Impl> {
    Impl(net::io_context& io, StdioClientOptions opts)
        : io(io), options(std::move(opts)), program(util::sanitize_for_message(options.argv.at(0), 200)) {}

    net::io_context& io;
    StdioClientOptions options;
    std::string program;
    ClientTransport::Handlers handlers;
    std::unique_ptr<ChildProcess> child;
    std::unique_ptr<net::posix::stream_descriptor> to_child;
    std::unique_ptr<net::posix::stream_descriptor> from_child;
    std::unique_ptr<net::posix::stream_descriptor> child_stderr;  // only with on_stderr_line
    std::unique_ptr<net::posix::stream_descriptor> exit_watch;    // a pidfd, where the kernel has them
    bool stderr_ended = false;                                    // the reader saw its end (or an error)
    bool stderr_silenced = false;  // close() finished or the transport is gone: no more lines

    // The line being read from the child's stdout. Over the limit, the line's text is no
    // longer kept; the scanner looks for the id it answers while the rest streams past.
    std::string line;
    bool dropping = false;
    std::size_t dropped_bytes = 0;
    JsonIdScanner dropped_id;

    struct Write {
        std::string bytes;
        Completion<bool> done;
    };
    std::deque<Write> writes;
    bool writing = false;
    bool closing = false;
    std::string ended_reason;  // set once the child is gone by itself

    std::string describe() const { return fmt::format("the server process \"{}\"", program); }

    void start_reading() {
        net::co_spawn(io, read_loop(shared_from_this()), net::detached);
        if (child_stderr) net::co_spawn(io, stderr_loop(shared_from_this()), net::detached);
        if (exit_watch) net::co_spawn(io, watch_exit(shared_from_this()), net::detached);
    }

    // The child's stdout need not end when the child does: something it started may hold
    // it (sh -c 'helper & exec server'). So its exit is watched for itself: reaping it
    // kills the rest of its group, after which its pipes do end.
    static net::awaitable<void> watch_exit(std::shared_ptr<Impl> self) {
        auto [ec] = co_await self->exit_watch->async_wait(net::posix::descriptor_base::wait_read, use_nothrow);
        if (ec || self->closing) co_return;  // close() and the destructor reap the child themselves
        self->child->try_wait();
    }

    static net::awaitable<void> read_loop(std::shared_ptr<Impl> self) {
        std::array<char, 65536> chunk;
        for (;;) {
            auto [ec, n] = co_await self->from_child->async_read_some(net::buffer(chunk), use_nothrow);
            if (ec) break;  // EOF: the child closed its stdout (it exited, usually)
            std::string_view rest(chunk.data(), n);
            for (auto newline = rest.find('\n'); newline != std::string_view::npos; newline = rest.find('\n')) {
                self->take_piece(rest.substr(0, newline));
                self->end_line();
                rest.remove_prefix(newline + 1);
            }
            self->take_piece(rest);
        }
        if (self->closing) co_return;  // close() reaps the child itself
        int status = co_await reap_and_drain(self);
        self->end(fmt::format("{} {}", self->describe(), ChildProcess::describe_status(status)));
    }

    // Part of the line being read (no newline in it).
    void take_piece(std::string_view piece) {
        if (piece.empty()) return;
        if (dropping) {
            dropped_bytes += piece.size();
            dropped_id.feed(piece);
            return;
        }
        line.append(piece);
        if (line.size() <= options.max_message_bytes) return;
        spdlog::warn("{} sent a line longer than {} bytes; dropped it", describe(), options.max_message_bytes);
        dropping = true;
        dropped_bytes = line.size();
        dropped_id.reset();
        dropped_id.feed(line);
        std::string().swap(line);  // its buffer is as large as the limit
    }

    void end_line() {
        if (!dropping) {
            take_line(line);
            line.clear();
            return;
        }
        // The request that line answered will get no other reply: say which one it was,
        // so that it fails now rather than at its timeout. A request from the server with
        // the same id is none of ours.
        dropping = false;
        const auto& id = dropped_id.id();
        if (id && !dropped_id.has_method() && handlers.on_oversized && !closing) {
            handlers.on_oversized(*id, dropped_bytes, options.max_message_bytes);
        }
    }

    static net::awaitable<void> stderr_loop(std::shared_ptr<Impl> self) {
        std::array<char, 8192> chunk;
        std::string pending;    // the line so far (at most kMaxStderrLine bytes)
        bool skipping = false;  // the line was cut and handed on: the rest of it goes
        for (;;) {
            auto [ec, n] = co_await self->child_stderr->async_read_some(net::buffer(chunk), use_nothrow);
            if (ec) break;  // EOF once every process that had it is gone, or close()
            std::string_view rest(chunk.data(), n);
            while (!rest.empty()) {
                const auto newline = rest.find('\n');
                if (skipping) {
                    if (newline == std::string_view::npos) break;
                    rest.remove_prefix(newline + 1);
                    skipping = false;
                    continue;
                }
                const std::size_t room = kMaxStderrLine - pending.size();
                if (newline != std::string_view::npos && newline <= room) {
                    pending.append(rest.substr(0, newline));
                    rest.remove_prefix(newline + 1);
                    if (!pending.empty() && pending.back() == '\r') pending.pop_back();
                } else if (rest.size() > room) {
                    // Full, and the next byte does not end the line: hand it on cut.
                    pending.append(rest.substr(0, room));
                    rest.remove_prefix(room);
                    skipping = true;
                } else {
                    pending.append(rest);
                    break;
                }
                self->stderr_line(pending);
                pending.clear();
            }
        }
        if (!pending.empty()) self->stderr_line(pending);
        self->stderr_ended = true;
    }

    void stderr_line(std::string_view text) {
        if (stderr_silenced) return;
        try {
            options.on_stderr_line(text);
        } catch (const std::exception& e) {
            spdlog::debug("the stderr handler of {} failed: {}", describe(), e.what());
        }
    }

    // Stops the stderr reader; no line is handed on after this.
    void silence_stderr() {
        stderr_silenced = true;
        boost::system::error_code ignored;
        if (child_stderr) child_stderr->close(ignored);
    }

    void take_line(std::string& text) {
        if (!text.empty() && text.back() == '\r') text.pop_back();
        if (text.find_first_not_of(" \t") == std::string::npos || closing) return;
        auto payload = decode_wire_payload(text);
        if (!payload.error.empty()) {
            // Servers sometimes print banners to stdout; skip them rather than give up.
            spdlog::warn("{} wrote a line that is not a JSON-RPC message ({}): {}", describe(), payload.error,
                         util::sanitize_for_message(text, 200));
            return;
        }
        for (auto& message : payload.messages) {
            if (closing) return;
            handlers.on_message(std::move(message));
        }
    }

    // Waits for the child to exit: `options.shutdown_grace`, then SIGTERM, again, then SIGKILL.
    static net::awaitable<int> reap(std::shared_ptr<Impl> self) {
        net::steady_timer timer(self->io);
        auto deadline = std::chrono::steady_clock::now() + self->options.shutdown_grace;
        bool terminated = false;
        // Most children exit within milliseconds of their stdin's end: look often at first.
        auto pause = 1ms;
        for (;;) {
            if (auto status = self->child->try_wait()) co_return *status;
            if (std::chrono::steady_clock::now() >= deadline) {
                if (terminated) {
                    spdlog::warn("{} ignored SIGTERM; killing it", self->describe());
                    self->child->signal(SIGKILL);
                    co_return self->child->wait();
                }
                spdlog::debug("{} did not exit; sending SIGTERM", self->describe());
                self->child->signal(SIGTERM);
                terminated = true;
                deadline = std::chrono::steady_clock::now() + self->options.shutdown_grace;
            }
            timer.expires_after(pause);
            co_await timer.async_wait(use_nothrow);
            pause = std::min<std::chrono::milliseconds>(pause * 2, 10ms);
        }
    }

    // reap(), then a short wait for the child's stderr to end: its last lines (often why
    // it went) reach the owner before the news that it is gone, or close() returns.
    static net::awaitable<int> reap_and_drain(std::shared_ptr<Impl> self) {
        const int status = co_await reap(self);
        if (self->child_stderr) {
            net::steady_timer timer(self->io);
            const auto deadline = std::chrono::steady_clock::now() + kStderrDrainLimit;
            while (!self->stderr_ended && !self->stderr_silenced && std::chrono::steady_clock::now() < deadline) {
                timer.expires_after(5ms);
                co_await timer.async_wait(use_nothrow);
            }
        }
        co_return status;
    }

    // The child went away by itself: fail what is queued and tell the client, once.
    void end(std::string reason) {
        if (!ended_reason.empty() || closing) return;
        ended_reason = std::move(reason);
        auto queued = std::move(writes);
        writes.clear();
        for (auto& w : queued) w.done.set_error(std::make_exception_ptr(TransportError(ended_reason)));
        if (handlers.on_closed) handlers.on_closed(ended_reason);
    }

    static net::awaitable<void> write_loop(std::shared_ptr<Impl> self) {
        self->writing = true;
        while (!self->writes.empty()) {
            Write w = std::move(self->writes.front());
            self->writes.pop_front();
            auto [ec, n] = co_await net::async_write(*self->to_child, net::buffer(w.bytes), use_nothrow);
            if (!ec) {
                w.done.set_value(true);
                continue;
            }
            // Usually EPIPE: the child closed its stdin because it is exiting. Its exit
            // status says more than "Broken pipe" does.
            std::string reason;
            if (!self->closing) {
                int status = co_await reap_and_drain(self);
                reason = fmt::format("{} {}", self->describe(), ChildProcess::describe_status(status));
            } else {
                reason = fmt::format("cannot write to {}: {}", self->describe(), ec.message());
            }
            w.done.set_error(std::make_exception_ptr(TransportError(reason)));
            self->end(reason);
        }
        self->writing = false;
    }

    void kill_now() {
        closing = true;
        boost::system::error_code ignored;
        if (to_child) to_child->close(ignored);
        if (from_child) from_child->close(ignored);
        if (exit_watch) exit_watch->close(ignored);
        silence_stderr();
        if (child) {
            child->signal(SIGKILL);
            child->wait();
        }
    }
};

// Puts a pipe end on the loop; closes it when that fails.
std::unique_ptr<net::posix::stream_descriptor> adopt(net::io_context& io, int fd) {
    try {
        return std::make_unique<net::posix::stream_descriptor>(io, fd);
    } catch (...) {
        ::close(fd);
        throw;
    }
}

class StdioTransport final : public ClientTransport {
public:
    StdioTransport(net::io_context& io, StdioClientOptions options)
        : impl_(std::make_shared<Impl>(io, std::move(options))) {}
    ~StdioTransport() override { impl_->kill_now(); }
    void terminate() override { impl_->kill_now(); }

    Task<void> open(Handlers handlers) override { return open_impl(impl_, std::move(handlers)); }
    Task<void> send(Json message) override {
        std::string line = protocol::serialize(message);
        line += '\n';
        util::release_json(message);  // written: freed without nlohmann's heap stack
        return send_impl(impl_, std::move(line));
    }
    Task<void> close() override { return close_impl(impl_); }
    std::string describe() const override { return impl_->describe(); }

private:
    // Static, with the Impl as a parameter: the coroutine frame keeps it alive even if the
    // transport object is destroyed while the coroutine waits.
    static Task<void> open_impl(std::shared_ptr<Impl> self, Handlers handlers) {
        if (self->child) throw TransportError(self->describe() + " was already started");
        ignore_sigpipe();
        self->handlers = std::move(handlers);
        ChildProcessOptions spawn;
        spawn.argv = self->options.argv;
        spawn.env = self->options.env;
        spawn.inherit_env = self->options.inherit_env;
        spawn.cwd = self->options.cwd;
        spawn.pipe_stderr = static_cast<bool>(self->options.on_stderr_line);
        self->child = std::make_unique<ChildProcess>(spawn);
        try {
            self->to_child = adopt(self->io, self->child->take_stdin());
            // send_impl's direct write must not block the loop when the pipe is full.
            self->to_child->non_blocking(true);
            self->from_child = adopt(self->io, self->child->take_stdout());
            if (spawn.pipe_stderr) self->child_stderr = adopt(self->io, self->child->take_stderr());
                // Without pidfds (Linux before 5.3, some sandboxes) the child's end is noticed
                // when its stdout ends.
#ifdef SYS_pidfd_open
            const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, self->child->pid(), 0));
            if (pidfd >= 0) self->exit_watch = adopt(self->io, pidfd);
#endif
        } catch (const std::exception& e) {
            self->kill_now();
            self->child.reset();
            throw TransportError(fmt::format("cannot watch {}: {}", self->describe(), e.what()));
        }
        spdlog::debug("started {} (pid {})", self->describe(), self->child->pid());
        self->start_reading();
        co_return;
    }

    static Task<void> send_impl(std::shared_ptr<Impl> self, std::string bytes) {
        if (!self->ended_reason.empty()) throw TransportError(self->ended_reason);
        if (self->closing || !self->child) throw TransportError("the connection to " + self->describe() + " is closed");
        // Nothing queued: the pipe takes a message at once, as a rule, written here without
        // starting the write loop (a coroutine and a pass through the event loop per message).
        // What it does not take (a full pipe, an error) goes the queued way below, which
        // waits for room and reports errors as it always did.
        if (!self->writing && self->writes.empty()) {
            boost::system::error_code ec;
            const std::size_t written = self->to_child->write_some(net::buffer(bytes), ec);
            if (!ec && written == bytes.size()) co_return;
            if (!ec) bytes.erase(0, written);
        }
        Completion<bool> done;
        self->writes.push_back({std::move(bytes), done});
        if (!self->writing) net::co_spawn(self->io, Impl::write_loop(self), net::detached);
        co_await done;
    }

    static Task<void> close_impl(std::shared_ptr<Impl> self) {
        if (self->closing || !self->child) co_return;
        self->closing = true;
        auto queued = std::move(self->writes);
        self->writes.clear();
        for (auto& w : queued) w.done.set_error(std::make_exception_ptr(TransportError("the connection was closed")));
        // The polite MCP shutdown: end the child's input and give it time to exit.
        boost::system::error_code ignored;
        self->to_child->close(ignored);
        int status = co_await await_asio(self->io, Impl::reap_and_drain(self));
        self->from_child->close(ignored);
        if (self->exit_watch) self->exit_watch->close(ignored);
        self->silence_stderr();
        spdlog::debug("{} {}", self->describe(), ChildProcess::describe_status(status));
    }

    std::shared_ptr<Impl> impl_;
};

}  // namespace

std::unique_ptr<ClientTransport> make_stdio_transport(AsioExecutor& executor, StdioClientOptions options) {
    if (options.argv.empty() || options.argv[0].empty()) throw std::invalid_argument("the command is empty");
    return std::make_unique<StdioTransport>(executor.io(), std::move(options));
}

}  // namespace toolport::client
