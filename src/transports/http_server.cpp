// The Boost.Beast side of the HTTP transports: accepting connections (within the
// descriptor and connection limits), reading requests with limits, writing replies and
// event streams, and watching for clients that leave. What to answer is decided by
// HttpEndpoint (http_endpoint.cpp) on the engine's loop; this file moves bytes.
#include "transports/http_server.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "observability/metrics.hpp"
#include "protocol/jsonrpc.hpp"
#include "transports/event_stream.hpp"
#include "transports/http_endpoint.hpp"
#include "transports/io_threads.hpp"
#include "transports/parsed_request.hpp"
#include "util/http_text.hpp"

namespace toolport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

namespace {

constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

constexpr std::string_view kConnectionsMetric = "toolport_http_connections_open";
constexpr std::string_view kRefusedMetric = "toolport_http_connections_refused_total";

// How much a connection reads ahead (a pipelined request) while it waits for an answer;
// past this it stops reading until the answer is written.
constexpr std::size_t kReadAheadWhileWaiting = 64 * 1024;
// A connection's read buffer is given this much room before its first read. Beast reads as
// much as the buffer has room for, and at least 512 bytes: in a buffer left at 512 a request
// of 513 to 1,024 bytes (a 2026-07-28 call with its _meta and Mcp-* headers is about 540)
// took two reads, and the first one's completion a pass through the loop, every time.
constexpr std::size_t kRequestBufferBytes = 4096;

HttpMethod method_of(http::verb verb) {
    switch (verb) {
        case http::verb::get: return HttpMethod::get;
        case http::verb::post: return HttpMethod::post;
        case http::verb::delete_: return HttpMethod::delete_;
        case http::verb::head: return HttpMethod::head;
        case http::verb::put: return HttpMethod::put;
        case http::verb::options: return HttpMethod::options;
        case http::verb::patch: return HttpMethod::patch;
        default: return HttpMethod::other;
    }
}

// Reads a request into the connection's ParsedRequest: Beast's tokenizer and limits
// (header and body bytes), without Beast's message type (parsed_request.hpp says why).
class RequestParser final : public http::basic_parser<true> {
public:
    explicit RequestParser(ParsedRequest& request) : r_(request) { r_.clear(); }

    // What the parser got to read: verb::unknown when it failed before the request line.
    http::verb verb() const { return verb_; }

private:
    void on_request_impl(http::verb verb, beast::string_view, beast::string_view target, int version,
                         beast::error_code& ec) override {
        verb_ = verb;
        r_.method = method_of(verb);
        r_.target.assign(target.data(), target.size());
        r_.version = static_cast<unsigned>(version);
        ec = {};
    }
    void on_response_impl(int, beast::string_view, int, beast::error_code&) override {}
    // Trailers of a chunked body are fields too, as Beast's own parser keeps them.
    void on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code& ec) override {
        if (r_.add_field({name.data(), name.size()}, {value.data(), value.size()})) ec = {};
        else ec = http::error::header_limit;
    }
    void on_header_impl(beast::error_code& ec) override {
        r_.keep_alive = keep_alive();
        ec = {};
    }
    void on_body_init_impl(const boost::optional<std::uint64_t>& length, beast::error_code& ec) override {
        // The body limit was checked against the length already (basic_parser::body_limit).
        if (length) r_.body.reserve(static_cast<std::size_t>(*length));
        ec = {};
    }
    std::size_t on_body_impl(beast::string_view body, beast::error_code& ec) override {
        r_.body.append(body.data(), body.size());
        ec = {};
        return body.size();
    }
    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code& ec) override { ec = {}; }
    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code& ec) override {
        return on_body_impl(body, ec);
    }
    void on_finish_impl(beast::error_code& ec) override { ec = {}; }

    ParsedRequest& r_;
    http::verb verb_ = http::verb::unknown;
};

// The reply to a connection over http.max_connections, or one taken only to be shed while
// the process is out of descriptors.
std::string refusal_reply(std::string_view message) {
    std::string body = fmt::format(R"({{"error":{{"code":-32600,"message":"{}"}},"id":null,"jsonrpc":"2.0"}})", message);
    auto reply = format_reply(11, false, 503, {{"Content-Type", "application/json"}, {"Retry-After", "1"}}, body);
    return reply.head + reply.body;
}

bool out_of_descriptors(const beast::error_code& ec) {
    return ec == net::error::no_descriptors || ec == net::error::no_buffer_space || ec == net::error::no_memory ||
           ec == boost::system::errc::too_many_files_open_in_system;
}

// One warning per interval for a condition that can repeat thousands of times a second.
class RateLimitedWarning {
public:
    explicit RateLimitedWarning(std::chrono::seconds every) : every_(every) {}
    template <typename... Args>
    void warn(fmt::format_string<Args...> format, Args&&... args) {
        auto now = std::chrono::steady_clock::now();
        if (logged_ && now - last_ < every_) {
            ++suppressed_;
            return;
        }
        std::string text = fmt::format(format, std::forward<Args>(args)...);
        if (suppressed_ > 0) text += fmt::format(" ({} more since the last such message)", suppressed_);
        spdlog::warn("{}", text);
        logged_ = true;
        last_ = now;
        suppressed_ = 0;
    }

private:
    std::chrono::seconds every_;
    std::chrono::steady_clock::time_point last_{};
    bool logged_ = false;
    std::uint64_t suppressed_ = 0;
};

// While a connection waits for its answer it keeps reading, to see the client leave: a
// read that ends (EOF, reset) means nobody is there to answer any more. Bytes that do
// arrive are a pipelined request, kept in the connection's buffer for later.
struct Watch {
    explicit Watch(const net::any_io_executor& executor) : timer(executor, net::steady_timer::time_point::max()) {}
    net::steady_timer timer;  // on the connection's loop; cancelled to wake its waiter
    bool woken = false;       // the answer may be ready
    bool reading = false;     // a read is outstanding
    bool gone = false;        // the client closed the connection
    // The connection has moved on (end_watch): a completion of the watch still queued must
    // leave the socket and the buffer alone, which are the connection's own again.
    bool ended = false;
    void wake() {
        woken = true;
        timer.cancel();
    }
};

// The keep-alive timeout of a connection's reads (http.keep_alive_timeout_s: from the start of
// a read, waiting for the next request included, to the end of that request). One timer for
// the connection's life instead of one armed and cancelled per request (Beast's stream
// timeout): each cancel queues a completion, which costs a pass through the loop and a
// non-blocking epoll_wait per request. A read only notes when it starts; when the timer
// fires it ends the read that is over time (closing the socket, as Beast's timeout does) or
// waits again until the current read's deadline.
class ReadDeadline : public std::enable_shared_from_this<ReadDeadline> {
public:
    ReadDeadline(beast::tcp_stream& stream, std::chrono::steady_clock::duration limit)
        : stream_(&stream), limit_(limit), timer_(stream.get_executor()) {}

    void start() { arm(std::chrono::steady_clock::now() + limit_); }
    void reading() {
        started_ = std::chrono::steady_clock::now();
        reading_ = true;
    }
    void done_reading() { reading_ = false; }
    // Whether the last read ended because it was over time.
    bool timed_out() const { return timed_out_; }
    // The connection is done with its stream (its coroutine ends, or hands the socket over):
    // a completion already queued must not touch it.
    void stop() {
        stream_ = nullptr;
        timer_.cancel();
    }

private:
    void arm(std::chrono::steady_clock::time_point at) {
        timer_.expires_at(at);
        timer_.async_wait([self = shared_from_this()](const beast::error_code& ec) {
            if (ec || !self->stream_) return;
            const auto now = std::chrono::steady_clock::now();
            if (self->reading_ && now - self->started_ >= self->limit_) {
                self->timed_out_ = true;
                self->stream_->close();  // the read ends with an error; the connection closes
                return;
            }
            self->arm(self->reading_ ? self->started_ + self->limit_ : now + self->limit_);
        });
    }

    beast::tcp_stream* stream_;
    std::chrono::steady_clock::duration limit_;
    net::steady_timer timer_;
    std::chrono::steady_clock::time_point started_{};
    bool reading_ = false;
    bool timed_out_ = false;
};

void watch_reads(beast::tcp_stream& stream, beast::flat_buffer& buffer, std::shared_ptr<Watch> watch) {
    if (buffer.size() >= kReadAheadWhileWaiting) return;
    watch->reading = true;
    // Waits for the socket to become readable, then reads what is there: a read started at
    // once would first try the socket, and the client almost never has sent anything yet
    // (one failed system call per request).
    stream.socket().async_wait(tcp::socket::wait_read, [&stream, &buffer, watch](const beast::error_code& wait_ec) {
        watch->reading = false;
        // Ended: `stream` and `buffer` may be gone or reading for the connection, and what the
        // client sent since is still in the socket for that read.
        if (watch->ended) return;
        // Not ended, so the connection's coroutine still waits in wait_for() and both are there.
        beast::error_code ec = wait_ec;
        std::size_t n = 0;
        if (!ec) {
            n = stream.socket().read_some(buffer.prepare(4096), ec);  // non-blocking: never waits
            buffer.commit(n);
            if (ec == net::error::would_block || ec == net::error::try_again) {
                watch_reads(stream, buffer, watch);  // readable, then not: wait again
                return;
            }
        }
        if (!ec && n > 0) {
            watch_reads(stream, buffer, watch);
            return;
        }
        if (ec != net::error::operation_aborted) watch->gone = true;  // EOF (n == 0) or an error
        watch->timer.cancel();
    });
}

// A connection that waits for an answer starts its watch (watch_reads) only once it has
// waited kWatchAfter. Most answers come sooner (a gateway's upstream round trip on one machine
// takes about a hundred microseconds) and the client almost never leaves meanwhile, while a
// watch started for every request cost a readiness wait (an epoll_ctl system call), its
// cancellation, and the cancelled wait's completion through the loop. The waiting
// connections are listed in the order they began to wait; one timer, armed while any is
// listed, starts the watches of those that have waited that long. A client that leaves is
// noticed at most kWatchAfter later than before. On the engine's loop only: with I/O
// threads a connection watches at once (each loop would need a list and a timer of its own).
constexpr auto kWatchAfter = 50ms;

class LateWatches;

// A connection's place in LateWatches while it waits; unlisted when it is destroyed.
struct LateWatch {
    LateWatch(beast::tcp_stream& stream, beast::flat_buffer& buffer, std::shared_ptr<Watch> watch)
        : stream(&stream), buffer(&buffer), watch(std::move(watch)) {}
    LateWatch(const LateWatch&) = delete;
    LateWatch& operator=(const LateWatch&) = delete;
    inline ~LateWatch();

    beast::tcp_stream* stream;
    beast::flat_buffer* buffer;
    std::shared_ptr<Watch> watch;
    std::chrono::steady_clock::time_point since{};
    LateWatches* list = nullptr;  // while listed
    LateWatch* prev = nullptr;
    LateWatch* next = nullptr;
};

class LateWatches {
public:
    explicit LateWatches(net::io_context& io) : timer_(std::in_place, io) {}
    LateWatches(const LateWatches&) = delete;
    LateWatches& operator=(const LateWatches&) = delete;

    // Lists `w` (not listed yet); its watch starts in kWatchAfter unless it is removed first.
    // `alive` is what the timer's completion checks before it touches this object. Once the
    // timer is released (release_timer) the watch starts at once.
    void add(LateWatch& w, std::weak_ptr<void> alive) {
        if (!timer_) {
            watch_reads(*w.stream, *w.buffer, w.watch);
            return;
        }
        w.since = std::chrono::steady_clock::now();
        w.list = this;
        w.prev = tail_;
        w.next = nullptr;
        (tail_ ? tail_->next : head_) = &w;
        tail_ = &w;
        if (!armed_) arm(w.since + kWatchAfter, std::move(alive));
    }

    void remove(LateWatch& w) {
        if (w.list != this) return;
        (w.prev ? w.prev->next : head_) = w.next;
        (w.next ? w.next->prev : tail_) = w.prev;
        w.list = nullptr;
        w.prev = w.next = nullptr;
    }

    // The timer belongs to the engine's loop: released while the loop still exists (the
    // server's stop()), since this object may outlive it. Watches still listed start now.
    void release_timer() {
        timer_.reset();
        armed_ = false;
        while (head_) start(*head_);
    }

private:
    void arm(std::chrono::steady_clock::time_point at, std::weak_ptr<void> alive) {
        armed_ = true;
        timer_->expires_at(at);
        timer_->async_wait([this, alive](const beast::error_code& ec) {
            if (alive.expired() || ec) return;  // gone, or released (release_timer)
            armed_ = false;
            const auto now = std::chrono::steady_clock::now();
            while (head_ && now - head_->since >= kWatchAfter) start(*head_);
            if (head_ && timer_) arm(head_->since + kWatchAfter, alive);
        });
    }

    void start(LateWatch& w) {
        remove(w);
        watch_reads(*w.stream, *w.buffer, w.watch);
    }

    std::optional<net::steady_timer> timer_;
    bool armed_ = false;
    LateWatch* head_ = nullptr;  // waiting longest
    LateWatch* tail_ = nullptr;
};

LateWatch::~LateWatch() {
    if (list) list->remove(*this);
}

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
    Impl(McpServer& server, AsioExecutor& executor, HttpOptions options, IoThreads* threads)
        : endpoint(server, executor, options),
          opts(std::move(options)),
          io(executor.io()),
          io_threads(threads && threads->size() > 0 ? threads : nullptr),
          acceptor(std::in_place, io),
          shed_timer(std::in_place, io),
          late_watches(io) {
        auto& m = observability::metrics();
        m.describe(kConnectionsMetric, "HTTP connections open.");
        m.describe(kRefusedMetric, "HTTP connections refused, by reason (max_connections, out_of_descriptors).");
        open_gauge = m.gauge(kConnectionsMetric, {});
        refused_over_limit = m.counter(kRefusedMetric, {{"reason", "max_connections"}});
        refused_no_descriptors = m.counter(kRefusedMetric, {{"reason", "out_of_descriptors"}});
    }
    ~Impl() {
        if (spare_fd >= 0) ::close(spare_fd);
    }

    HttpEndpoint endpoint;  // lives on the engine's loop
    HttpOptions opts;
    net::io_context& io;    // the engine's loop: sessions, streams and tools live here
    IoThreads* io_threads;  // loops for the connections' socket work, if any
    // Both belong to the engine's loop; stop() releases them while it still exists, since the
    // last reference to this object may die later, with a connection on an I/O loop.
    std::optional<tcp::acceptor> acceptor;
    std::optional<net::steady_timer> shed_timer;
    LateWatches late_watches;  // the engine loop's connections (without I/O threads)
    // Read by connections on the I/O loops; everything else here is the engine's alone.
    std::atomic<bool> stopping{false};
    std::atomic<std::size_t> open_connections{0};
    std::atomic<std::size_t> refusing{0};
    // Held in reserve: when accept() fails for want of descriptors, this one is let go to
    // take a waiting connection and answer it 503 instead of leaving it in the backlog.
    int spare_fd = -1;
    RateLimitedWarning accept_warning{std::chrono::seconds(10)};
    observability::Gauge open_gauge;
    observability::Counter refused_over_limit;
    observability::Counter refused_no_descriptors;

    void bind() {
        beast::error_code ec;
        auto address = net::ip::make_address(opts.host == "localhost" ? "127.0.0.1" : opts.host, ec);
        if (ec) throw std::runtime_error(fmt::format("cannot listen on \"{}\": not an IP address", opts.host));
        tcp::endpoint endpoint(address, opts.port);
        acceptor->open(endpoint.protocol(), ec);
        if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
        if (!ec) acceptor->bind(endpoint, ec);
        if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
        if (ec) {
            throw std::runtime_error(fmt::format("cannot listen on {}:{}: {}", opts.host, opts.port, ec.message()));
        }
        spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    }

    void start() {
        endpoint.start();
        net::co_spawn(io, accept_loop(shared_from_this()), net::detached);
    }

    void stop() {
        stopping = true;
        // Closing completes the pending accept and wait with operation_aborted; their
        // handlers see `stopping` and touch neither object again.
        acceptor.reset();
        shed_timer.reset();
        late_watches.release_timer();
        endpoint.stop();
    }

    // ---------------------------------------------------------------- accepting

    // Counts a connection for its whole life, on whichever loop it ends.
    class ConnectionSlot {
    public:
        explicit ConnectionSlot(std::shared_ptr<Impl> owner) : owner_(std::move(owner)) {
            owner_->open_gauge.set(static_cast<double>(++owner_->open_connections));
        }
        ConnectionSlot(ConnectionSlot&&) = default;
        ~ConnectionSlot() {
            if (owner_) owner_->open_gauge.set(static_cast<double>(--owner_->open_connections));
        }

    private:
        std::shared_ptr<Impl> owner_;
    };

    static net::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
        for (;;) {
            // With I/O threads a connection lives on one of their loops from its first byte.
            net::io_context& loop = self->io_threads ? self->io_threads->next() : self->io;
            auto [ec, socket] = co_await self->acceptor->async_accept(loop, use_nothrow);
            if (self->stopping) co_return;
            if (ec == net::error::operation_aborted) co_return;
            if (out_of_descriptors(ec)) {
                // Retrying at once would spin: back off, and shed what waits meanwhile.
                std::size_t shed = self->shed_waiting_connections();
                self->accept_warning.warn(
                    "accept failed: {} ({} open connections); answering new connections 503 "
                    "until descriptors free up{}",
                    ec.message(), self->open_connections.load(), shed ? fmt::format(" ({} shed)", shed) : std::string());
                if (!co_await self->pause(100ms)) co_return;
                continue;
            }
            if (ec) {
                // ECONNABORTED and the like: the client left before we took it.
                self->accept_warning.warn("accept failed: {}", ec.message());
                if (!co_await self->pause(10ms)) co_return;
                continue;
            }
            if (self->open_connections.load() >= self->opts.max_connections) {
                self->refused_over_limit.increment();
                net::co_spawn(loop, refuse(self, std::move(socket)), net::detached);
                continue;
            }
            socket.set_option(tcp::no_delay(true), ec);
            net::co_spawn(loop, serve_connection(self, ConnectionSlot(self), beast::tcp_stream(std::move(socket))),
                          net::detached);
        }
    }

    // Sleeps on the engine's loop; false when the server stopped meanwhile.
    net::awaitable<bool> pause(std::chrono::milliseconds delay) {
        if (!shed_timer) co_return false;
        shed_timer->expires_after(delay);
        co_await shed_timer->async_wait(use_nothrow);
        co_return !stopping && acceptor;
    }

    // Out of descriptors: frees the spare one to take waiting connections one at a time,
    // tells each it is refused, and takes the spare back. Returns how many were shed.
    std::size_t shed_waiting_connections() {
        if (spare_fd < 0 || !acceptor) return 0;
        static const std::string reply = refusal_reply(
            "Service Unavailable: the server is out of file descriptors; retry shortly");
        std::size_t shed = 0;
        for (; shed < 64; ++shed) {
            ::close(spare_fd);
            spare_fd = -1;
            int fd = ::accept4(acceptor->native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd >= 0) {
                (void)!::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
                ::shutdown(fd, SHUT_WR);
                ::close(fd);
                refused_no_descriptors.increment();
            }
            spare_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (fd < 0 || spare_fd < 0) break;
        }
        return shed;
    }

    // A connection over http.max_connections: told so (503), then closed.
    static net::awaitable<void> refuse(std::shared_ptr<Impl> self, tcp::socket socket) {
        static const std::string reply = refusal_reply(
            "Service Unavailable: the server holds its maximum number of connections; retry shortly");
        // Refusals hold a descriptor for a moment each; under a flood, close at once.
        if (++self->refusing > 64) {
            --self->refusing;
            co_return;
        }
        beast::tcp_stream stream(std::move(socket));
        stream.expires_after(2s);
        auto [ec, n] = co_await net::async_write(stream, net::buffer(reply), use_nothrow);
        if (!ec) co_await linger(stream, 1s, 64 * 1024);
        --self->refusing;
    }

    // Lingering close (RFC 9112 §9.6): closing with unread request bytes makes the kernel
    // reset the connection, and the client would lose the answer just written. Stop
    // sending, then read and discard what the client is still sending, for a while.
    static net::awaitable<void> linger(beast::tcp_stream& stream, std::chrono::steady_clock::duration limit,
                                       std::size_t max_bytes) {
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        std::vector<char> sink(16 * 1024);
        std::size_t discarded = 0;
        auto deadline = std::chrono::steady_clock::now() + limit;
        while (discarded < max_bytes && std::chrono::steady_clock::now() < deadline) {
            stream.expires_at(deadline);
            auto [rec, n] = co_await stream.async_read_some(net::buffer(sink), use_nothrow);
            if (rec) break;
            discarded += n;
        }
    }

    // ---------------------------------------------------------------- connection

    // One connection's requests, in turn, on the connection's loop. The endpoint decides
    // each answer on the engine's loop; plain replies are written back here, while an event
    // stream takes the connection over and ends it.
    static net::awaitable<void> serve_connection(std::shared_ptr<Impl> self, ConnectionSlot slot,
                                                 beast::tcp_stream stream) {
        beast::flat_buffer buffer;
        buffer.reserve(kRequestBufferBytes);
        beast::error_code nb;
        stream.socket().non_blocking(true, nb);  // write_reply() tries a write without waiting
        auto deadline = std::make_shared<ReadDeadline>(stream, self->opts.keep_alive_timeout);
        struct StopDeadline {
            std::shared_ptr<ReadDeadline> d;
            ~StopDeadline() { d->stop(); }
        } stop_deadline{deadline};
        deadline->start();
        stream.expires_never();  // reads have no Beast timeout (write_reply() clears its own)
        ParsedRequest req;       // one per connection: its buffers serve every request
        for (;;) {
            RequestParser parser(req);
            parser.header_limit(static_cast<std::uint32_t>(self->opts.max_header_bytes));
            parser.body_limit(self->opts.max_body_bytes);
            deadline->reading();
            auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_nothrow);
            deadline->done_reading();
            if (deadline->timed_out()) break;  // closed at the keep-alive timeout
            if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
                ec == beast::error::timeout || ec == net::error::operation_aborted) {
                break;
            }
            if (ec) {
                co_await reply_read_error(self, stream, ec, parser.verb());
                break;
            }
            ParsedRequestView view(req);
            HttpAnswer answer = self->io_threads ? co_await on_engine(self, [&] { return self->endpoint.answer(view); })
                                                 : self->endpoint.answer(view);
            std::shared_ptr<Watch> watch;
            if (answer.pending) {
                auto waited = co_await wait_for(self, stream, buffer, std::move(answer.pending));
                answer = std::move(waited.answer);
                watch = std::move(waited.watch);
            }
            if (answer.stream) {
                if (watch && !end_watch(stream, *watch)) break;
                if (!self->io_threads) {
                    co_await write_event_stream(self, stream, std::move(answer.stream));
                    break;
                }
                hand_over(self, std::move(slot), stream, std::move(answer.stream));
                co_return;
            }
            bool keep = answer.reply && co_await write_reply(self, stream, *answer.reply) && answer.reply->keep_alive;
            if (watch && !end_watch(stream, *watch)) keep = false;
            if (!keep || !req.keep_alive || self->stopping) break;
        }
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    }

    // Runs `fn` on the engine's loop and returns its result here (a connection on an I/O
    // loop); `fn` is copied into the coroutine, so what it captures by reference must
    // outlive the co_await, as a connection's locals do.
    template <typename Fn>
    static net::awaitable<std::invoke_result_t<Fn>> on_engine(std::shared_ptr<Impl> self, Fn fn) {
        co_return co_await net::co_spawn(self->io, call(std::move(fn)), net::use_awaitable);
    }
    template <typename Fn>
    static net::awaitable<std::invoke_result_t<Fn>> call(Fn fn) {
        co_return fn();
    }

    // Waits for a pending answer on the connection's loop while watching the socket: if the
    // client leaves first, the endpoint is told (cancelling a stateless call) and the
    // connection closes.
    struct WaitedAnswer {
        HttpAnswer answer;
        std::shared_ptr<Watch> watch;  // still reading: end_watch() before the next read
    };
    static net::awaitable<WaitedAnswer> wait_for(std::shared_ptr<Impl> self, beast::tcp_stream& stream,
                                                 beast::flat_buffer& buffer, std::shared_ptr<PendingAnswer> pending) {
        auto watch = std::make_shared<Watch>(stream.get_executor());
        std::weak_ptr<Watch> weak = watch;
        auto connection_loop = stream.get_executor();
        // Called on the engine's loop; the watch belongs to the connection's. On one loop
        // the watch is woken at once (waking only queues the timer's completion), which saves
        // a pass through the loop per request.
        std::function<void()> waker = [weak]() {
            if (auto w = weak.lock()) w->wake();
        };
        if (self->io_threads) {
            waker = [weak, connection_loop]() {
                net::post(connection_loop, [weak]() {
                    if (auto w = weak.lock()) w->wake();
                });
            };
        }
        // Watched at once from an I/O loop; on the engine's, only once the answer is slow to
        // come (LateWatches). Unlisted when this returns.
        LateWatch late(stream, buffer, watch);
        if (self->io_threads) watch_reads(stream, buffer, watch);
        // Each step on the engine's loop: through on_engine() from an I/O loop, else called
        // here (a coroutine frame per step cost more than the step).
        const bool io = self->io_threads != nullptr;
        auto claim = [&] {
            pending->set_waker(waker);
            return pending->ready();
        };
        auto tell_gone = [&] { return (pending->client_gone(), true); };
        auto ready = [&] { return pending->ready(); };
        auto take = [&] { return pending->take(); };
        bool done = io ? co_await on_engine(self, claim) : claim();
        if (!done && !io) self->late_watches.add(late, self);
        bool told_gone = false;
        while (!done) {
            if (watch->gone && !told_gone) {
                told_gone = true;
                if (io) co_await on_engine(self, tell_gone);
                else tell_gone();
            }
            if (!watch->woken) {
                watch->timer.expires_at(net::steady_timer::time_point::max());
                co_await watch->timer.async_wait(use_nothrow);
            }
            watch->woken = false;
            done = io ? co_await on_engine(self, ready) : ready();
        }
        HttpAnswer answer = io ? co_await on_engine(self, take) : take();
        if (watch->gone) answer = HttpAnswer{};  // nobody to write to
        co_return WaitedAnswer{std::move(answer), std::move(watch)};
    }

    // Ends the watch of wait_for() before the connection reads again or lets go of the
    // socket: its wait is cancelled, and its completion, whenever it runs, touches nothing
    // (Watch::ended), so the connection need not wait for it (a timer and two passes through
    // the loop per request). Done after the reply is written, so the client does not wait
    // for it. Returns false when the client has gone meanwhile.
    static bool end_watch(beast::tcp_stream& stream, Watch& watch) {
        watch.ended = true;
        if (watch.reading) {
            beast::error_code ignored;
            stream.socket().cancel(ignored);
        }
        return !watch.gone;
    }

    static net::awaitable<bool> write_reply(std::shared_ptr<Impl> self, beast::tcp_stream& stream,
                                            const HttpReply& reply) {
        std::array<net::const_buffer, 2> buffers{net::buffer(reply.head), net::buffer(reply.body)};
        // Most replies fit in the socket's send buffer: written at once (the socket is in
        // non-blocking mode), they skip a round through the event loop, which costs a
        // queued completion and an epoll_wait per request. Only what does not fit waits.
        beast::error_code ec;
        std::size_t sent = stream.socket().write_some(buffers, ec);
        if (!ec && sent == net::buffer_size(buffers)) co_return true;
        if (ec && ec != net::error::would_block && ec != net::error::try_again) co_return false;
        beast::buffers_suffix<std::array<net::const_buffer, 2>> rest(buffers);
        rest.consume(ec ? 0 : sent);
        stream.expires_after(self->opts.write_timeout);
        auto [wec, n] = co_await net::async_write(stream, rest, use_nothrow);
        stream.expires_never();  // the next read's deadline is the connection's (ReadDeadline)
        co_return !wec;
    }

    // Moves the connection onto the engine's loop, where its event stream is written (a socket
    // belongs to the loop that watches it; the kernel descriptor moves, nothing is lost).
    static void hand_over(std::shared_ptr<Impl> self, ConnectionSlot slot, beast::tcp_stream& stream,
                          std::shared_ptr<EventStream> events) {
        beast::error_code ec;
        auto protocol = stream.socket().local_endpoint(ec).protocol();
        auto fd = ec ? -1 : stream.socket().release(ec);
        if (ec) fd = -1;
        net::post(self->io, [self, slot = std::move(slot), protocol, fd, events = std::move(events)]() mutable {
            tcp::socket socket(self->io);
            beast::error_code aec;
            if (fd >= 0) socket.assign(protocol, fd, aec);
            if (aec) ::close(fd);
            // Even without a socket the stream runs: its writes fail at once and its
            // cleanup (stream bookkeeping) still happens.
            net::co_spawn(self->io,
                          run_stream(self, std::move(slot), beast::tcp_stream(std::move(socket)), std::move(events)),
                          net::detached);
        });
    }

    static net::awaitable<void> run_stream(std::shared_ptr<Impl> self, ConnectionSlot slot, beast::tcp_stream stream,
                                           std::shared_ptr<EventStream> events) {
        co_await write_event_stream(self, stream, std::move(events));
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    }

    // Writes an event stream until it ends, the client leaves, or the server stops; on the
    // engine's loop, where the stream's events come from.
    static net::awaitable<void> write_event_stream(std::shared_ptr<Impl> self, beast::tcp_stream& stream,
                                                   std::shared_ptr<EventStream> events) {
        struct Finish {
            EventStream& e;
            ~Finish() { e.finish(); }
        } finish{*events};
        stream.expires_after(self->opts.write_timeout);
        if (auto [ec, n] = co_await net::async_write(stream, net::buffer(events->head()), use_nothrow); ec) co_return;

        // Reading tells when the client leaves (it sends nothing while it reads a stream).
        auto watch = std::make_shared<Watch>(stream.get_executor());
        std::weak_ptr<Watch> weak = watch;
        events->set_waker([weak]() {
            if (auto w = weak.lock()) w->wake();
        });
        auto scratch = std::make_shared<std::array<char, 64>>();
        watch->reading = true;
        stream.socket().async_read_some(net::buffer(*scratch), [watch, scratch](const beast::error_code&, std::size_t) {
            watch->reading = false;
            watch->gone = true;  // data, EOF or error alike
            watch->timer.cancel();
        });
        struct StopWatching {
            beast::tcp_stream& s;
            std::shared_ptr<Watch> w;
            ~StopWatching() {
                beast::error_code ignored;
                if (w->reading) s.socket().cancel(ignored);
            }
        } stop_watching{stream, watch};

        for (;;) {
            std::string chunk;
            auto step = events->next(chunk);
            if (step == EventStream::Step::end) chunk += EventStream::last_chunk();
            if (!chunk.empty()) {
                stream.expires_after(self->opts.write_timeout);
                auto [ec, n] = co_await net::async_write(stream, net::buffer(chunk), use_nothrow);
                if (ec) co_return;
                events->written();
            }
            if (step == EventStream::Step::end || self->stopping || watch->gone) co_return;
            if (!watch->woken) {
                watch->timer.expires_after(15s);
                auto [ec] = co_await watch->timer.async_wait(use_nothrow);
                if (!ec) {  // idle: a comment keeps proxies from timing out
                    stream.expires_after(self->opts.write_timeout);
                    auto [wec, wn] = co_await net::async_write(stream, net::buffer(EventStream::keep_alive_chunk()),
                                                               use_nothrow);
                    if (wec) co_return;
                }
            }
            watch->woken = false;
        }
    }

    // `method` is what the parser got to read (verb::unknown when it failed before that).
    static net::awaitable<void> reply_read_error(std::shared_ptr<Impl> self, beast::tcp_stream& stream,
                                                 beast::error_code ec, http::verb method) {
        unsigned status = 400;
        std::string message = fmt::format("Bad Request: {}", ec.message());
        if (ec == http::error::body_limit) {
            status = 413;
            message = fmt::format("Request body exceeds the {} byte limit", self->opts.max_body_bytes);
        } else if (ec == http::error::header_limit) {
            status = 431;
            message = fmt::format("Request headers exceed the {} byte limit", self->opts.max_header_bytes);
        }
        auto reply = format_reply(11, false, status, {{"Content-Type", "application/json"}},
                                  protocol::serialize(
                                      protocol::make_error(nullptr, protocol::error_code::kInvalidRequest, message)));
        HttpEndpoint::count_request(method_of(method), status);
        stream.expires_after(5s);
        std::array<net::const_buffer, 2> buffers{net::buffer(reply.head), net::buffer(reply.body)};
        auto [wec, wn] = co_await net::async_write(stream, buffers, use_nothrow);
        if (wec) co_return;
        co_await linger(stream, 2s, 256 * 1024 * 1024);
    }
};

HttpServer::HttpServer(McpServer& server, AsioExecutor& executor, HttpOptions options, IoThreads* io_threads)
    : impl_(std::make_shared<Impl>(server, executor, std::move(options), io_threads)) {
    impl_->bind();
}

HttpServer::~HttpServer() { impl_->stop(); }

unsigned short HttpServer::port() const { return impl_->acceptor ? impl_->acceptor->local_endpoint().port() : 0; }
void HttpServer::start() { impl_->start(); }
void HttpServer::stop() { impl_->stop(); }
std::size_t HttpServer::session_count() const { return impl_->endpoint.session_count(); }

}  // namespace toolport
