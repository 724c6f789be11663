// The stdio client transport: a child process (ChildProcess) whose stdin and stdout pipes
// sit on the event loop as Asio stream descriptors. Messages are newline-delimited JSON;
// the child's stderr is simply ours.
#include <signal.h>

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

#include "async/completion.hpp"
#include "client/child_process.hpp"
#include "client/client_transport.hpp"
#include "client/wire_payload.hpp"
#include "transports/asio_executor.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

namespace net = boost::asio;
using namespace std::chrono_literals;
constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

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
    }

    static net::awaitable<void> read_loop(std::shared_ptr<Impl> self) {
        std::array<char, 65536> chunk;
        std::string line;
        bool discarding = false;  // inside a line that is over the limit
        for (;;) {
            auto [ec, n] = co_await self->from_child->async_read_some(net::buffer(chunk), use_nothrow);
            if (ec) break;  // EOF: the child closed its stdout (it exited, usually)
            std::size_t start = 0;
            for (std::size_t i = 0; i < n; ++i) {
                if (chunk[i] != '\n') continue;
                if (!discarding) {
                    line.append(chunk.data() + start, i - start);
                    self->take_line(line);
                }
                line.clear();
                discarding = false;
                start = i + 1;
            }
            if (!discarding) {
                line.append(chunk.data() + start, n - start);
                if (line.size() > self->options.max_message_bytes) {
                    spdlog::warn("{} sent a line longer than {} bytes; dropped it", self->describe(),
                                 self->options.max_message_bytes);
                    line.clear();
                    discarding = true;
                }
            }
        }
        if (self->closing) co_return;  // close() reaps the child itself
        int status = co_await reap(self);
        self->end(fmt::format("{} {}", self->describe(), ChildProcess::describe_status(status)));
    }

    void take_line(std::string& line) {
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.find_first_not_of(" \t") == std::string::npos || closing) return;
        auto payload = decode_wire_payload(line);
        if (!payload.error.empty()) {
            // Servers sometimes print banners to stdout; skip them rather than give up.
            spdlog::warn("{} wrote a line that is not a JSON-RPC message ({}): {}", describe(), payload.error,
                         util::sanitize_for_message(line, 200));
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
            timer.expires_after(10ms);
            co_await timer.async_wait(use_nothrow);
        }
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
                int status = co_await reap(self);
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
        if (child) {
            child->signal(SIGKILL);
            child->wait();
        }
    }
};

template <typename T>
Task<T> await_asio(net::io_context& io, net::awaitable<T> operation) {
    Completion<T> done;
    net::co_spawn(io, std::move(operation), [done](std::exception_ptr error, T value) mutable {
        if (error) done.set_error(error);
        else done.set_value(std::move(value));
    });
    co_return co_await done;
}

class StdioTransport final : public ClientTransport {
public:
    StdioTransport(net::io_context& io, StdioClientOptions options)
        : impl_(std::make_shared<Impl>(io, std::move(options))) {}
    ~StdioTransport() override { impl_->kill_now(); }

    Task<void> open(Handlers handlers) override { return open_impl(impl_, std::move(handlers)); }
    Task<void> send(Json message) override { return send_impl(impl_, protocol::serialize(message) + "\n"); }
    Task<void> close() override { return close_impl(impl_); }
    std::string describe() const override { return impl_->describe(); }

private:
    // Static, with the Impl as a parameter: the coroutine frame keeps it alive even if the
    // transport object is destroyed while the coroutine waits.
    static Task<void> open_impl(std::shared_ptr<Impl> self, Handlers handlers) {
        if (self->child) throw TransportError(self->describe() + " was already started");
        ignore_sigpipe();
        self->handlers = std::move(handlers);
        self->child = std::make_unique<ChildProcess>(self->options.argv);
        self->to_child = std::make_unique<net::posix::stream_descriptor>(self->io, self->child->take_stdin());
        self->from_child = std::make_unique<net::posix::stream_descriptor>(self->io, self->child->take_stdout());
        spdlog::debug("started {} (pid {})", self->describe(), self->child->pid());
        self->start_reading();
        co_return;
    }

    static Task<void> send_impl(std::shared_ptr<Impl> self, std::string bytes) {
        if (!self->ended_reason.empty()) throw TransportError(self->ended_reason);
        if (self->closing || !self->child) throw TransportError("the connection to " + self->describe() + " is closed");
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
        int status = co_await await_asio(self->io, Impl::reap(self));
        self->from_child->close(ignored);
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
