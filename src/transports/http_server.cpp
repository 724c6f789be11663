// The Boost.Beast side of the HTTP transports: accepting, reading requests with limits,
// writing JSON replies and SSE streams. What to answer is decided by the request checks
// in http_policy and the stream logic in sse_stream; this file moves bytes.
#include "transports/http_server.hpp"

#include <atomic>
#include <optional>

#include <unistd.h>

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

#include "observability/metrics.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "transports/asio_executor.hpp"
#include "transports/batch.hpp"
#include "transports/http_policy.hpp"
#include "transports/io_threads.hpp"
#include "transports/sse_stream.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using protocol::Json;
using namespace std::chrono_literals;

namespace {

constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// 128 bits from the kernel: unguessable, and visible ASCII as the spec requires.
std::string random_session_id() { return util::random_hex(16); }

// A header's value ("" when absent), valid while `req` lives.
std::string_view header(const Request& req, std::string_view name) {
    auto it = req.find(name);
    return it == req.end() ? std::string_view() : std::string_view(it->value());
}

// Session lookup by string_view without building a std::string per request.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// The method as a metric label: the methods HTTP clients use, everything else as "other"
// (the method is client input, and each label value is a series kept forever).
std::string_view method_label(http::verb method) {
    switch (method) {
        case http::verb::get: return "GET";
        case http::verb::post: return "POST";
        case http::verb::delete_: return "DELETE";
        case http::verb::head: return "HEAD";
        case http::verb::put: return "PUT";
        case http::verb::options: return "OPTIONS";
        case http::verb::patch: return "PATCH";
        default: return "other";
    }
}

constexpr std::string_view kRequestsMetric = "toolport_http_requests_total";
constexpr std::string_view kSessionsMetric = "toolport_sessions_open";

// Counted when the response (or an SSE stream's header) is about to be written. The series
// handles are cached per thread (connections may live on I/O threads), by method and status.
void count_request(http::verb method, unsigned status) {
    using observability::Labels;
    thread_local std::unordered_map<unsigned, observability::Counter> counters;
    unsigned key = static_cast<unsigned>(method) * 1000u + status;  // Beast's verbs are a small enum
    auto it = counters.find(key);
    if (it == counters.end()) {
        Labels labels{{"method", std::string(method_label(method))}, {"status", std::to_string(status)}};
        it = counters.emplace(key, observability::metrics().counter(kRequestsMetric, labels)).first;
    }
    it->second.increment();
}

// The pieces of a POST body the transport needs before handing messages to a session.
struct PostBody {
    protocol::ParsedPayload parsed;
    std::vector<std::string> request_keys;
    bool has_initialize = false;
    const protocol::Request* first_request = nullptr;
    std::string traceparent;  // W3C trace context header, carried into requests' _meta
};

// The rest of a connection when the answer is an event stream: written on the engine's
// loop (the stream's events come from there), and the connection ends with it.
using StreamWriter = std::function<net::awaitable<void>(beast::tcp_stream&)>;

// What the engine decided for one HTTP request: a reply for the connection to write (its
// header block and body, already serialized), or an event stream that takes the
// connection over.
struct Outcome {
    std::string head;  // status line and header fields, ending with the empty line
    std::string body;
    bool has_reply = false;
    bool keep_alive = false;  // with a reply: the connection may carry another request
    StreamWriter stream;
    // Not decided yet (a request still running): await this for the outcome.
    std::optional<net::awaitable<Outcome>> pending;
};

// "HTTP/1.1 200 OK\r\n": HTTP/1.0 clients get a 1.0 status line, as Beast would write.
void append_status_line(std::string& out, unsigned version, unsigned status) {
    out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    out += std::to_string(status);
    out += ' ';
    out += http::obsolete_reason(static_cast<http::status>(status));
    out += "\r\n";
}

// Connection management the way Beast's keep_alive() says it: only where the version's
// default differs from what is wanted.
void append_connection(std::string& out, unsigned version, bool keep_alive) {
    if (version == 10 && keep_alive) out += "Connection: keep-alive\r\n";
    if (version != 10 && !keep_alive) out += "Connection: close\r\n";
}

// The common reply, a JSON body, serialized without building a Beast message (this is the
// one every tools/call gets; Beast's field container allocates per field).
Outcome json_outcome(unsigned version, bool keep_alive, unsigned status, std::string_view session_id, std::string body) {
    Outcome outcome;
    outcome.head.reserve(128 + session_id.size());
    append_status_line(outcome.head, version, status);
    outcome.head += "Content-Type: application/json\r\n";
    if (!session_id.empty()) {
        outcome.head += "Mcp-Session-Id: ";
        outcome.head += session_id;
        outcome.head += "\r\n";
    }
    append_connection(outcome.head, version, keep_alive);
    outcome.head += "Content-Length: ";
    outcome.head += std::to_string(body.size());
    outcome.head += "\r\n\r\n";
    outcome.body = std::move(body);
    outcome.has_reply = true;
    outcome.keep_alive = keep_alive;
    return outcome;
}

// The request line's facts an event stream needs after the request itself is gone.
struct RequestLine {
    http::verb method = http::verb::get;
    unsigned version = 11;
};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
    Impl(McpServer& server, HttpOptions options)
        : mcp(server),
          opts(std::move(options)),
          io(static_cast<AsioExecutor&>(server.executor()).io()),
          acceptor(std::in_place, io),
          sweeper(std::in_place, io) {
        auto& m = observability::metrics();
        m.describe(kRequestsMetric, "HTTP requests answered, by method and status code.");
        m.describe(kSessionsMetric, "MCP sessions open on the HTTP transports (Streamable HTTP and legacy SSE).");
        sessions_changed();
    }

    McpServer& mcp;
    HttpOptions opts;
    net::io_context& io;           // the engine's loop: sessions, streams and tools live here
    IoThreads* io_threads = nullptr;  // loops for the connections' socket work, if any
    // Both belong to the engine's loop; stop() releases them while it still exists, since the
    // last reference to this object may die later, with a connection on an I/O loop.
    std::optional<tcp::acceptor> acceptor;
    std::optional<net::steady_timer> sweeper;
    // Read by connections on the I/O loops; everything else here is the engine's alone.
    std::atomic<bool> stopping{false};
    std::unordered_map<std::string, std::shared_ptr<HttpSession>, StringHash, std::equal_to<>> sessions;

    void sessions_changed() {
        observability::metrics().set(kSessionsMetric, {}, static_cast<double>(sessions.size()));
    }

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
    }

    void start() {
        net::co_spawn(io, accept_loop(shared_from_this()), net::detached);
        schedule_sweep();
    }

    void stop() {
        stopping = true;
        // Closing completes the pending accept and wait with operation_aborted; their
        // handlers see `stopping` and touch neither object again.
        acceptor.reset();
        sweeper.reset();
        for (auto& [id, s] : sessions) s->mcp->close();
        sessions.clear();
        sessions_changed();
    }

    void schedule_sweep() {
        if (!sweeper) return;
        sweeper->expires_after(std::min<std::chrono::steady_clock::duration>(opts.session_idle_timeout / 2, 30s));
        sweeper->async_wait([self = shared_from_this()](beast::error_code ec) {
            if (ec || self->stopping) return;
            self->sweep();
            self->schedule_sweep();
        });
    }

    void sweep() {
        auto now = std::chrono::steady_clock::now();
        for (auto it = sessions.begin(); it != sessions.end();) {
            auto& s = it->second;
            s->prune(std::chrono::minutes(5));
            if (!s->busy() && now - s->last_active > opts.session_idle_timeout) {
                spdlog::info("session {}… expired after {} s idle", s->id().substr(0, 8),
                             opts.session_idle_timeout.count());
                s->mcp->close();
                it = sessions.erase(it);
            } else {
                ++it;
            }
        }
        sessions_changed();
    }

    std::shared_ptr<HttpSession> create_session(bool legacy, std::string principal) {
        auto s = std::make_shared<HttpSession>(random_session_id(), opts.max_replay_events, opts.max_replay_bytes);
        s->legacy = legacy;
        std::weak_ptr<HttpSession> weak = s;
        s->mcp = mcp.open_session(
            [weak](const Json& message, const protocol::RequestId* related) {
                if (auto hs = weak.lock()) hs->route(message, related);
            },
            CallerIdentity{std::move(principal), s->id(), ""});
        s->mcp->set_stream_closer([weak](const protocol::RequestId& id) {
            if (auto hs = weak.lock()) hs->close_stream(id);
        });
        sessions.emplace(s->id(), s);
        sessions_changed();
        return s;
    }

    void drop_session(std::string_view id) {
        auto it = sessions.find(id);
        if (it == sessions.end()) return;
        it->second->mcp->close();
        sessions.erase(it);
        sessions_changed();
    }

    // ---------------------------------------------------------------- connection

    static net::awaitable<void> accept_loop(std::shared_ptr<Impl> self) {
        for (;;) {
            // With I/O threads a connection lives on one of their loops from its first byte.
            net::io_context& loop = self->io_threads ? self->io_threads->next() : self->io;
            auto [ec, socket] = co_await self->acceptor->async_accept(loop, use_nothrow);
            if (self->stopping) co_return;
            if (ec) {
                if (ec == net::error::operation_aborted) co_return;
                spdlog::warn("accept failed: {}", ec.message());
                continue;
            }
            socket.set_option(tcp::no_delay(true), ec);
            net::co_spawn(loop, serve_connection(self, beast::tcp_stream(std::move(socket))), net::detached);
        }
    }

    // One connection's requests, in turn, on the connection's loop. The engine decides each
    // answer on its own loop (dispatch); plain replies are written back here, while an event
    // stream takes the connection over and ends it.
    static net::awaitable<void> serve_connection(std::shared_ptr<Impl> self, beast::tcp_stream stream) {
        beast::flat_buffer buffer;
        beast::error_code nb;
        stream.socket().non_blocking(true, nb);  // write_reply() tries a write without waiting
        for (;;) {
            http::request_parser<http::string_body> parser;
            parser.header_limit(static_cast<std::uint32_t>(self->opts.max_header_bytes));
            parser.body_limit(self->opts.max_body_bytes);
            stream.expires_after(self->opts.keep_alive_timeout);
            auto [ec, n] = co_await http::async_read(stream, buffer, parser, use_nothrow);
            if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
                ec == beast::error::timeout || ec == net::error::operation_aborted) {
                break;
            }
            if (ec) {
                co_await reply_read_error(self, stream, ec, parser.get().method());
                break;
            }
            Request req = parser.release();
            Outcome outcome = self->io_threads
                                  ? co_await net::co_spawn(self->io, decide(self, req), net::use_awaitable)
                                  : self->dispatch(req);
            if (outcome.pending) outcome = co_await std::move(*outcome.pending);
            if (outcome.stream) {
                if (!self->io_threads) {
                    co_await outcome.stream(stream);
                    break;
                }
                hand_over(self, stream, std::move(outcome.stream));
                co_return;
            }
            bool keep = outcome.has_reply && co_await write_reply(self, stream, outcome) && outcome.keep_alive;
            if (!keep || !req.keep_alive() || self->stopping) break;
        }
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    }

    // dispatch() as a coroutine, for a connection on another loop to run on the engine's.
    static net::awaitable<Outcome> decide(std::shared_ptr<Impl> self, Request& req) {
        Outcome outcome = self->dispatch(req);
        if (outcome.pending) outcome = co_await std::move(*outcome.pending);
        co_return outcome;
    }

    static net::awaitable<bool> write_reply(std::shared_ptr<Impl> self, beast::tcp_stream& stream, const Outcome& reply) {
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
        co_return !wec;
    }

    // Moves the connection onto the engine's loop, where its event stream is written (a socket
    // belongs to the loop that watches it; the kernel descriptor moves, nothing is lost).
    static void hand_over(std::shared_ptr<Impl> self, beast::tcp_stream& stream, StreamWriter writer) {
        beast::error_code ec;
        auto protocol = stream.socket().local_endpoint(ec).protocol();
        auto fd = ec ? -1 : stream.socket().release(ec);
        if (ec) fd = -1;
        net::post(self->io, [self, protocol, fd, writer = std::move(writer)]() mutable {
            tcp::socket socket(self->io);
            beast::error_code aec;
            if (fd >= 0) socket.assign(protocol, fd, aec);
            if (aec) ::close(fd);
            // Even without a socket the writer runs: its writes fail at once and its cleanup
            // (stream bookkeeping) still happens.
            net::co_spawn(self->io, run_stream(beast::tcp_stream(std::move(socket)), std::move(writer)), net::detached);
        });
    }

    static net::awaitable<void> run_stream(beast::tcp_stream stream, StreamWriter writer) {
        co_await writer(stream);
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    }

    // `method` is what the parser got to read (verb::unknown when it failed before that).
    static net::awaitable<void> reply_read_error(std::shared_ptr<Impl> self, beast::tcp_stream& stream,
                                                 beast::error_code ec, http::verb method) {
        http::status status = http::status::bad_request;
        std::string message = fmt::format("Bad Request: {}", ec.message());
        if (ec == http::error::body_limit) {
            status = http::status::payload_too_large;
            message = fmt::format("Request body exceeds the {} byte limit", self->opts.max_body_bytes);
        } else if (ec == http::error::header_limit) {
            status = http::status::request_header_fields_too_large;
            message = fmt::format("Request headers exceed the {} byte limit", self->opts.max_header_bytes);
        }
        Response res{status, 11};
        res.set(http::field::content_type, "application/json");
        res.set(http::field::connection, "close");
        res.body() = protocol::serialize(protocol::make_error(nullptr, protocol::error_code::kInvalidRequest, message));
        res.prepare_payload();
        count_request(method, res.result_int());
        stream.expires_after(5s);
        auto [wec, wn] = co_await http::async_write(stream, res, use_nothrow);
        if (wec) co_return;
        // Lingering close (RFC 9112 §9.6): closing with unread request bytes makes the
        // kernel reset the connection, and the client would lose the answer above. Stop
        // sending, then read and discard what the client is still sending, for a while.
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        std::size_t discarded = 0;
        auto deadline = std::chrono::steady_clock::now() + 2s;
        static char sink[65536];
        while (discarded < 256 * 1024 * 1024 && std::chrono::steady_clock::now() < deadline) {
            stream.expires_at(deadline);
            auto [rec, n] = co_await stream.async_read_some(net::buffer(sink), use_nothrow);
            if (rec) break;
            discarded += n;
        }
    }

    // ------------------------------------------------------------------ replies

    static Response make_json(const Request& req, http::status status, const Json& body) {
        Response res{status, req.version()};
        res.set(http::field::content_type, "application/json");
        res.keep_alive(req.keep_alive());
        res.body() = protocol::serialize(body);
        res.prepare_payload();
        return res;
    }

    static Response make_rpc_error(const Request& req, http::status status, int code, std::string_view message,
                                   const Json& id = nullptr) {
        return make_json(req, status, protocol::make_error(id, code, message));
    }

    static Response make_empty(const Request& req, http::status status) {
        Response res{status, req.version()};
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        return res;
    }

    // The answer to write: counted now, written by the connection.
    static Outcome reply(const Request& req, Response res) {
        count_request(req.method(), res.result_int());
        Outcome outcome;
        append_status_line(outcome.head, res.version(), res.result_int());
        for (const auto& field : res) {
            outcome.head += field.name_string();
            outcome.head += ": ";
            outcome.head += field.value();
            outcome.head += "\r\n";
        }
        outcome.head += "\r\n";
        outcome.keep_alive = res.keep_alive();
        outcome.body = std::move(res.body());
        outcome.has_reply = true;
        return outcome;
    }

    // ------------------------------------------------------------------ routing

    // Decides the answer to one request, on the engine's loop. Most answers are ready at
    // once (tools that finish without waiting); the others come back as `pending`. Kept
    // free of coroutine frames on that common path: each is a heap allocation.
    Outcome dispatch(Request& req) {
        auto target = std::string_view(req.target());
        auto path = target.substr(0, target.find('?'));
        // The MCP endpoint wins if it was configured at one of these paths.
        const bool is_metrics = opts.metrics_endpoint && path == "/metrics" && path != opts.path;
        const bool is_health = opts.health_endpoint && opts.health_report && path == "/health" && path != opts.path;

        // DNS-rebinding protection applies to every endpoint, authentication to every
        // endpoint but a public /health.
        if (!http_policy::host_allowed(opts, header(req, "Host"))) {
            return reply(req, make_rpc_error(req, http::status::forbidden, protocol::error_code::kInvalidRequest,
                                                                "Forbidden: Host header not allowed"));
        }
        if (!http_policy::origin_allowed(opts, header(req, "Origin"))) {
            return reply(req, make_rpc_error(req, http::status::forbidden, protocol::error_code::kInvalidRequest,
                                                                "Forbidden: Origin not allowed"));
        }
        if (!(is_health && opts.public_health) && !http_policy::authorized(opts, header(req, "Authorization"))) {
            auto res = make_rpc_error(req, http::status::unauthorized, protocol::error_code::kInvalidRequest,
                                      "Unauthorized: send Authorization: Bearer <token>");
            res.set(http::field::www_authenticate,
                    req.find(http::field::authorization) == req.end()
                        ? "Bearer realm=\"toolport\""
                        : "Bearer realm=\"toolport\", error=\"invalid_token\"");
            return reply(req, std::move(res));
        }

        if (is_metrics || is_health) return handle_observability(req, is_metrics);
        if (path == opts.path) {
            switch (req.method()) {
                case http::verb::post: return handle_post(req);
                case http::verb::get: return handle_get(req);
                case http::verb::delete_: return handle_delete(req);
                default: {
                    auto res = make_rpc_error(req, http::status::method_not_allowed,
                                              protocol::error_code::kInvalidRequest, "Method Not Allowed");
                    res.set(http::field::allow, "GET, POST, DELETE");
                    return reply(req, std::move(res));
                }
            }
        }
        if (opts.legacy_sse && path == "/sse" && req.method() == http::verb::get) {
            return handle_legacy_sse(req);
        }
        if (opts.legacy_sse && path == "/messages" && req.method() == http::verb::post) {
            return handle_legacy_post(req);
        }
        return reply(req, make_rpc_error(req, http::status::not_found, protocol::error_code::kInvalidRequest,
                                                            fmt::format("Not Found: the MCP endpoint is {}", opts.path)));
    }

    // GET /metrics (Prometheus text format 0.0.4) and GET /health (the health report).
    Outcome handle_observability(Request& req, bool metrics) {
        if (req.method() != http::verb::get) {
            auto res = make_rpc_error(req, http::status::method_not_allowed, protocol::error_code::kInvalidRequest,
                                      "Method Not Allowed: use GET");
            res.set(http::field::allow, "GET");
            return reply(req, std::move(res));
        }
        Response res{http::status::ok, req.version()};
        if (metrics) {
            res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
            res.body() = observability::metrics().render();
        } else {
            auto [status, body] = health_response();
            res.result(static_cast<http::status>(status));
            res.set(http::field::content_type, "application/json");
            res.body() = std::move(body);
        }
        // Both describe this moment: a cached copy would be wrong.
        res.set(http::field::cache_control, "no-store");
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        return reply(req, std::move(res));
    }

    // The health report from the application; a report that cannot be made is itself a
    // sign of trouble (500), never a reason to drop the connection.
    std::pair<int, std::string> health_response() {
        try {
            auto [status, body] = opts.health_report();
            if (status < 100 || status > 599) throw std::runtime_error(fmt::format("HTTP status {} out of range", status));
            return {status, std::move(body)};
        } catch (const std::exception& e) {
            spdlog::error("health report failed: {}", util::sanitize_for_message(e.what()));
        } catch (...) {
            spdlog::error("health report failed with a non-standard exception");
        }
        return {500, R"({"status":"unhealthy","error":"the health report failed"})"};
    }

    // Reads the body into messages; on failure returns the reply to send.
    std::optional<Response> read_post_body(const Request& req, PostBody& body) {
        if (!http_policy::is_json_content_type(header(req, "Content-Type"))) {
            return make_rpc_error(req, http::status::unsupported_media_type, protocol::error_code::kInvalidRequest,
                                  "Unsupported Media Type: Content-Type must be application/json");
        }
        body.parsed = protocol::parse_payload(req.body(), protocol::ParseLimits{opts.max_json_depth});
        body.traceparent = std::string(header(req, "traceparent"));
        if (body.parsed.fatal) {
            return make_json(req, http::status::bad_request,
                             protocol::make_error(body.parsed.fatal->id, body.parsed.fatal->code,
                                                  body.parsed.fatal->message));
        }
        for (const auto& item : body.parsed.items) {
            if (const auto* m = std::get_if<protocol::Message>(&item)) {
                if (const auto* r = std::get_if<protocol::Request>(m)) {
                    body.request_keys.push_back(r->id.dump());
                    if (r->method == "initialize") body.has_initialize = true;
                    if (!body.first_request) body.first_request = r;
                }
            } else if (const auto& e = std::get<protocol::ProtocolError>(item); !e.id.is_null()) {
                body.request_keys.push_back(e.id.dump());
            }
        }
        return std::nullopt;
    }

    void feed(ServerSession& session, PostBody& body) {
        for (auto& item : body.parsed.items) {
            if (auto* error = std::get_if<protocol::ProtocolError>(&item)) {
                session.reject(*error);
            } else {
                auto& message = std::get<protocol::Message>(item);
                http_policy::attach_traceparent(message, body.traceparent);
                session.receive(std::move(message));
            }
        }
    }

    Outcome handle_post(Request& req) {
        PostBody body;
        if (auto error = read_post_body(req, body)) return reply(req, std::move(*error));
        const bool wants_sse = http_policy::accepts(header(req, "Accept"), "text/event-stream");
        const bool wants_json = http_policy::accepts(header(req, "Accept"), "application/json");
        if (!body.request_keys.empty() && !(wants_sse && wants_json)) {
            return reply(req, make_rpc_error(req, http::status::not_acceptable,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Not Acceptable: Accept must list both application/json "
                                                                "and text/event-stream"));
        }

        // The stateless revision: the version travels in the request's _meta.
        if (body.first_request && !body.parsed.is_batch) {
            auto meta = read_stateless_meta(body.first_request->params);
            auto header_version = header(req, "MCP-Protocol-Version");
            if ((meta.present && (!meta.revision || protocol::is_stateless(*meta.revision))) ||
                (!meta.present && protocol::parse_revision(header_version) &&
                 protocol::is_stateless(*protocol::parse_revision(header_version)))) {
                return handle_stateless_post(req, body, meta);
            }
        }

        auto version = http_policy::read_version_header(header(req, "MCP-Protocol-Version"),
                                                        req.find("MCP-Protocol-Version") != req.end());
        if (version.present && !version.revision) {
            return reply(
                req, make_rpc_error(req, http::status::bad_request, protocol::error_code::kInvalidRequest,
                                       fmt::format("Bad Request: unsupported MCP-Protocol-Version \"{}\"; supported: {}",
                                                   util::sanitize_for_message(header(req, "MCP-Protocol-Version"), 40),
                                                   protocol::supported_revisions_list())));
        }

        auto session_id = header(req, "Mcp-Session-Id");
        if (!session_id.empty() && !http_policy::valid_session_id(session_id)) {
            return reply(req, make_rpc_error(req, http::status::bad_request,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Bad Request: malformed Mcp-Session-Id header"));
        }
        std::shared_ptr<HttpSession> session;
        bool created = false;
        if (body.has_initialize) {
            if (body.parsed.is_batch) {
                return reply(req, make_rpc_error(req, http::status::bad_request,
                                                                    protocol::error_code::kInvalidRequest,
                                                                    "Invalid Request: initialize must not be batched"));
            }
            if (!session_id.empty()) {
                auto it = sessions.find(session_id);
                if (it == sessions.end()) {
                    return reply(req, make_rpc_error(req, http::status::not_found,
                                                                        protocol::error_code::kInvalidRequest,
                                                                        "Session not found: initialize without Mcp-Session-Id "
                                                                        "to start a new session"));
                }
                session = it->second;  // the session answers "already initialized"
            } else {
                if (sessions.size() >= opts.max_sessions) {
                    return reply(
                        req, make_rpc_error(req, http::status::service_unavailable,
                                               protocol::error_code::kInvalidRequest,
                                               fmt::format("Service Unavailable: the server already holds {} sessions; "
                                                           "retry later or end unused sessions with DELETE",
                                                           opts.max_sessions)));
                }
                session = create_session(false, http_policy::principal_of(opts, header(req, "Authorization")));
                created = true;
            }
        } else {
            if (session_id.empty()) {
                return reply(req, make_rpc_error(req, http::status::bad_request,
                                                                    protocol::error_code::kInvalidRequest,
                                                                    "Bad Request: Mcp-Session-Id header is required "
                                                                    "(initialize first)"));
            }
            auto it = sessions.find(session_id);
            if (it == sessions.end() || it->second->legacy) {
                return reply(req, make_rpc_error(req, http::status::not_found,
                                                                    protocol::error_code::kInvalidRequest,
                                                                    "Session not found: it expired or was ended; "
                                                                    "initialize a new session"));
            }
            session = it->second;
        }
        session->last_active = std::chrono::steady_clock::now();

        if (body.parsed.is_batch &&
            (!session->mcp->initialized() || !protocol::allows_batches(session->mcp->revision()))) {
            auto refusal = batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision())
                                                                     : std::nullopt);
            return reply(req, make_rpc_error(req, http::status::bad_request, refusal.code, refusal.message));
        }

        if (body.request_keys.empty()) {
            // Only notifications and responses: accepted, nothing to stream back.
            feed(*session->mcp, body);
            return reply(req, make_empty(req, http::status::accepted));
        }

        auto out = session->open_stream(body.request_keys);
        feed(*session->mcp, body);
        std::string sid = session->id();
        // Once the replies are out: a session whose initialize failed is not kept, nor a
        // stream nobody can need to resume.
        auto after = [self = shared_from_this(), session, out, created, sid]() {
            if (created && !session->mcp->initialized()) self->drop_session(sid);
            else if (out->fully_delivered()) session->drop_stream(out->id());
        };
        return write_stream(req, out, body.parsed.is_batch, sid, true, std::move(after));
    }

    Outcome handle_stateless_post(Request& req, PostBody& body,
                                               const StatelessMeta& meta) {
        auto check = validate_stateless_http(req, body, meta);
        if (check) return reply(req, std::move(*check));
        auto out = std::make_shared<OutStream>(1, opts.max_replay_events, opts.max_replay_bytes);
        for (const auto& key : body.request_keys) out->expect_reply(key);
        std::weak_ptr<OutStream> weak = out;
        auto session = mcp.open_session(
            [weak](const Json& message, const protocol::RequestId* related) {
                auto s = weak.lock();
                if (!s) return;
                std::string key = related ? related->dump() : std::string();
                s->push(protocol::serialize(message), related && !message.contains("method") ? &key : nullptr);
            },
            CallerIdentity{http_policy::principal_of(opts, header(req, "Authorization")), "", ""});
        feed(*session, body);
        // Closing the stream early is cancellation in this revision.
        return write_stream(req, out, false, "", false, [session]() { session->close(); });
    }

    // Validates the 2026-07-28 HTTP rules (version header vs _meta, Mcp-Method/Mcp-Name).
    std::optional<Response> validate_stateless_http(const Request& req, const PostBody& body,
                                                    const StatelessMeta& meta) {
        StatelessHeaders h;
        h.protocol_version = std::string(header(req, "MCP-Protocol-Version"));
        h.has_protocol_version = req.find("MCP-Protocol-Version") != req.end();
        h.method = std::string(header(req, "Mcp-Method"));
        h.has_method = req.find("Mcp-Method") != req.end();
        h.name = std::string(header(req, "Mcp-Name"));
        h.has_name = req.find("Mcp-Name") != req.end();
        for (const auto& field : req) {
            auto n = std::string(field.name_string());
            if (n.size() > 10 && strncasecmp(n.c_str(), "Mcp-Param-", 10) == 0) {
                h.params.emplace_back(n.substr(10), std::string(field.value()));
            }
        }
        auto problem = check_stateless_headers(h, *body.first_request, meta, mcp);
        if (!problem) return std::nullopt;
        return make_json(req, static_cast<http::status>(problem->http_status), problem->body);
    }

    // Writes the replies of one POST: a JSON body when everything is ready and nothing
    // but replies was produced, an SSE stream otherwise.
    // `after` runs once the replies are handed over (JSON) or the stream has ended (SSE).
    Outcome write_stream(const Request& req, std::shared_ptr<OutStream> stream, bool batch, std::string session_id,
                         bool resumable, std::function<void()> after) {
        if (!decided(*stream)) {
            Outcome outcome;
            outcome.pending.emplace(wait_then_write(req, std::move(stream), batch, std::move(session_id), resumable,
                                                    std::move(after)));
            return outcome;
        }
        return answer_with(req, std::move(stream), batch, std::move(session_id), resumable, std::move(after));
    }

    // Whether a POST's stream says how to answer: everything replied (JSON), or something
    // other than a reply to send (SSE), or the server wants the response ended (polling).
    static bool decided(const OutStream& out) {
        return out.finished() || out.has_non_response() || out.close_requested();
    }

    net::awaitable<Outcome> wait_then_write(const Request& req, std::shared_ptr<OutStream> stream, bool batch,
                                            std::string session_id, bool resumable, std::function<void()> after) {
        OutStream& out = *stream;
        net::steady_timer wake(io, net::steady_timer::time_point::max());
        out.set_waker([&wake]() { wake.cancel(); });
        struct Detach {
            OutStream& s;
            bool armed = true;
            ~Detach() {
                if (armed) s.clear_waker();
            }
        } detach{out};
        while (!decided(out)) {
            wake.expires_at(net::steady_timer::time_point::max());
            co_await wake.async_wait(use_nothrow);  // woken by a new event (cancel) or never
            if (stopping) {
                after();
                co_return Outcome{};
            }
        }
        out.clear_waker();
        detach.armed = false;  // an event stream may claim `out` below
        co_return answer_with(req, std::move(stream), batch, std::move(session_id), resumable, std::move(after));
    }

    // JSON when every reply is there and nothing else was said, an event stream otherwise.
    Outcome answer_with(const Request& req, std::shared_ptr<OutStream> stream, bool batch, std::string session_id,
                        bool resumable, std::function<void()> after) {
        OutStream& out = *stream;
        if (out.finished() && !out.has_non_response()) {
            Json replies;
            if (batch) {
                replies = Json::array();
                for (const auto& e : out.events()) replies.push_back(Json::parse(e.data));
            }
            auto status = resumable ? http::status::ok : stateless_status(out.events().front().data);
            std::string body = batch ? protocol::serialize(replies) : out.take_single_reply();
            out.mark_delivered(out.last_seq());
            after();
            count_request(req.method(), static_cast<unsigned>(status));
            return json_outcome(req.version(), req.keep_alive(), static_cast<unsigned>(status), session_id,
                                std::move(body));
        }
        return event_stream(req, std::move(stream), std::move(session_id), resumable, 0, {}, std::move(after));
    }

    // The outcome "answer with an event stream of `out` from event `after_seq` on". The stream
    // is claimed now, so no other connection attaches to it while this one is handed over.
    Outcome event_stream(const Request& req, std::shared_ptr<OutStream> out, std::string session_id, bool resumable,
                         std::uint64_t after_seq, std::string prelude, std::function<void()> after) {
        out->set_waker([] {});
        Outcome outcome;
        outcome.stream = [self = shared_from_this(), line = RequestLine{req.method(), req.version()}, out,
                          session_id = std::move(session_id), resumable, after_seq, prelude = std::move(prelude),
                          after = std::move(after)](beast::tcp_stream& stream) {
            return stream_then(self, stream, line, out, session_id, resumable, after_seq, prelude, after);
        };
        return outcome;
    }

    static net::awaitable<void> stream_then(std::shared_ptr<Impl> self, beast::tcp_stream& stream, RequestLine line,
                                            std::shared_ptr<OutStream> out, std::string session_id, bool resumable,
                                            std::uint64_t after_seq, std::string prelude, std::function<void()> after) {
        co_await self->stream_events(stream, line, *out, session_id, resumable, after_seq, std::move(prelude));
        if (after) after();
    }

    // HTTP status for a stateless reply: the 2026-07-28 transport maps some JSON-RPC errors.
    static http::status stateless_status(const std::string& reply) {
        constexpr std::string_view marker = "\"error\":{\"code\":";  // nlohmann writes keys sorted
        auto pos = reply.find(marker);
        if (pos == std::string::npos) return http::status::ok;
        int code = std::atoi(reply.c_str() + pos + marker.size());
        switch (code) {
            case protocol::error_code::kMethodNotFound: return http::status::not_found;
            case protocol::error_code::kHeaderMismatch:
            case protocol::error_code::kMissingRequiredClientCapability:
            case protocol::error_code::kUnsupportedProtocolVersion: return http::status::bad_request;
            default: return http::status::ok;
        }
    }

    // Completes when the client closes the connection (or sends anything, which it must
    // not do while it reads an event stream). `done` tells it the stream ended first, in
    // which case the socket may already be gone and must not be touched.
    struct Watch {
        bool done = false;
        bool client_gone = false;
        std::function<void()> wake;
    };
    static net::awaitable<void> watch_disconnect(tcp::socket& socket, std::shared_ptr<Watch> watch) {
        if (watch->done) co_return;
        char scratch[64];
        co_await socket.async_read_some(net::buffer(scratch), use_nothrow);  // data, EOF or error alike
        watch->client_gone = true;
        if (!watch->done && watch->wake) watch->wake();
    }

    // Streams `out` as SSE from event `after` on, until it finishes, the server closes it
    // for polling, or the client leaves. `prelude` is written first. SSE responses end the
    // connection afterwards.
    net::awaitable<void> stream_events(beast::tcp_stream& stream, RequestLine line, OutStream& out,
                                       const std::string& session_id, bool resumable, std::uint64_t after,
                                       std::string prelude) {
        http::response<http::empty_body> res{http::status::ok, line.version};
        res.set(http::field::content_type, "text/event-stream");
        res.set(http::field::cache_control, "no-cache, no-transform");
        res.set("X-Accel-Buffering", "no");
        if (!session_id.empty()) res.set("Mcp-Session-Id", session_id);
        res.keep_alive(false);
        res.chunked(true);
        http::response_serializer<http::empty_body> sr{res};
        count_request(line.method, res.result_int());
        stream.expires_after(opts.write_timeout);
        if (auto [ec, n] = co_await http::async_write_header(stream, sr, use_nothrow); ec) {
            out.clear_waker();  // release the claim event_stream() made
            co_return;
        }

        net::steady_timer wake(io, net::steady_timer::time_point::max());
        auto watch = std::make_shared<Watch>();
        watch->wake = [&wake]() { wake.cancel(); };
        out.set_waker([&wake]() { wake.cancel(); });
        struct Detach {
            OutStream& s;
            std::shared_ptr<Watch> w;
            ~Detach() {
                s.clear_waker();
                w->done = true;
                w->wake = nullptr;
            }
        } detach{out, watch};
        net::co_spawn(io, watch_disconnect(stream.socket(), watch), net::detached);

        std::uint64_t sent = after;
        std::string chunk = std::move(prelude);
        if (resumable && after == 0) {
            // Priming event: an id to resume from before anything else is said, and how
            // soon to come back if the server closes the stream (SEP-1699).
            chunk = fmt::format("id: {}-0\nretry: {}\ndata: \n\n", out.id(), opts.sse_retry.count());
        }
        for (;;) {
            for (const auto& e : out.events()) {
                if (e.seq <= sent) continue;
                if (resumable) chunk += fmt::format("id: {}-{}\n", out.id(), e.seq);
                chunk += "event: message\ndata: ";
                chunk += e.data;
                chunk += "\n\n";
                sent = e.seq;
            }
            if (!chunk.empty()) {
                stream.expires_after(opts.write_timeout);
                auto [ec, n] = co_await net::async_write(stream, http::make_chunk(net::buffer(chunk)), use_nothrow);
                if (ec) co_return;
                chunk.clear();
                out.mark_delivered(sent);
            }
            if (out.finished() && sent >= out.last_seq()) break;
            if (resumable && out.take_close_request()) break;  // polling: the client comes back
            if (stopping || watch->client_gone) co_return;
            wake.expires_after(15s);
            auto [ec] = co_await wake.async_wait(use_nothrow);
            if (!ec) chunk = ": keep-alive\n\n";  // idle: a comment keeps proxies from timing out
        }
        stream.expires_after(opts.write_timeout);
        co_await net::async_write(stream, http::make_chunk_last(), use_nothrow);
    }

    Outcome handle_get(Request& req) {
        if (!http_policy::accepts(header(req, "Accept"), "text/event-stream")) {
            return reply(req, make_rpc_error(req, http::status::not_acceptable,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Not Acceptable: Accept must include text/event-stream"));
        }
        auto session_id = header(req, "Mcp-Session-Id");
        if (session_id.empty()) {
            return reply(req, make_rpc_error(req, http::status::bad_request,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Bad Request: Mcp-Session-Id header is required"));
        }
        auto it = sessions.find(session_id);
        if (it == sessions.end() || it->second->legacy) {
            return reply(req, make_rpc_error(req, http::status::not_found,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Session not found: initialize a new session"));
        }
        auto session = it->second;
        session->last_active = std::chrono::steady_clock::now();

        std::shared_ptr<OutStream> out;
        std::uint64_t after = 0;
        auto last_event = header(req, "Last-Event-ID");
        if (!last_event.empty()) {
            std::uint64_t stream_id = 0, seq = 0;
            if (!HttpSession::parse_event_id(last_event, &stream_id, &seq) || !(out = session->find_stream(stream_id))) {
                return reply(req, make_rpc_error(req, http::status::not_found,
                                                                    protocol::error_code::kInvalidRequest,
                                                                    "Not Found: unknown Last-Event-ID; the stream is gone"));
            }
            after = seq;
            if (!out->can_replay_after(seq)) {
                spdlog::warn("session {}…: resuming stream {} after event {}, but older events were already "
                             "dropped from its replay log (raise http.max_replay_events/bytes)",
                             session->id().substr(0, 8), stream_id, seq);
            }
        } else {
            out = session->standalone();
        }
        if (out->attached()) {
            return reply(req, make_rpc_error(req, http::status::conflict,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Conflict: this stream is already being read by "
                                                                "another connection"));
        }
        return event_stream(req, out, session->id(), true, after, {}, [session, out]() {
            session->last_active = std::chrono::steady_clock::now();
            if (out->id() != 0 && out->fully_delivered()) session->drop_stream(out->id());
        });
    }

    Outcome handle_delete(Request& req) {
        auto session_id = header(req, "Mcp-Session-Id");
        if (session_id.empty()) {
            return reply(req, make_rpc_error(req, http::status::bad_request,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Bad Request: Mcp-Session-Id header is required"));
        }
        if (sessions.find(session_id) == sessions.end()) {
            return reply(req, make_rpc_error(req, http::status::not_found,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Session not found"));
        }
        drop_session(session_id);
        return reply(req, make_empty(req, http::status::ok));
    }

    // ------------------------------------------------------------ legacy HTTP+SSE

    Outcome handle_legacy_sse(Request& req) {
        if (sessions.size() >= opts.max_sessions) {
            return reply(req, make_rpc_error(req, http::status::service_unavailable,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Service Unavailable: too many sessions"));
        }
        auto session = create_session(true, http_policy::principal_of(opts, header(req, "Authorization")));
        std::string sid = session->id();
        // The first event tells the client where to POST its messages.
        // The legacy session lives exactly as long as its stream.
        return event_stream(req, session->standalone(), "", false, 0,
                            fmt::format("event: endpoint\ndata: /messages?sessionId={}\n\n", sid),
                            [self = shared_from_this(), sid]() { self->drop_session(sid); });
    }

    Outcome handle_legacy_post(Request& req) {
        auto target = std::string_view(req.target());
        std::string sid;
        if (auto q = target.find("sessionId="); q != std::string_view::npos) {
            auto v = target.substr(q + 10);
            sid = std::string(v.substr(0, v.find('&')));
        }
        auto it = sessions.find(sid);
        if (sid.empty() || it == sessions.end() || !it->second->legacy) {
            return reply(req, make_rpc_error(req, http::status::not_found,
                                                                protocol::error_code::kInvalidRequest,
                                                                "Session not found: open GET /sse first"));
        }
        PostBody body;
        if (auto error = read_post_body(req, body)) return reply(req, std::move(*error));
        auto session = it->second;
        session->last_active = std::chrono::steady_clock::now();
        if (body.parsed.is_batch) {
            auto refusal = batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision())
                                                                     : std::nullopt);
            session->mcp->reject(refusal);
        } else {
            feed(*session->mcp, body);
        }
        Response res{http::status::accepted, req.version()};
        res.keep_alive(req.keep_alive());
        res.set(http::field::content_type, "text/plain");
        res.body() = "Accepted";
        res.prepare_payload();
        return reply(req, std::move(res));
    }
};

HttpServer::HttpServer(McpServer& server, HttpOptions options, IoThreads* io_threads)
    : impl_(std::make_shared<Impl>(server, std::move(options))) {
    impl_->io_threads = io_threads && io_threads->size() > 0 ? io_threads : nullptr;
    impl_->bind();
}

HttpServer::~HttpServer() { impl_->stop(); }

unsigned short HttpServer::port() const { return impl_->acceptor ? impl_->acceptor->local_endpoint().port() : 0; }
void HttpServer::start() { impl_->start(); }
void HttpServer::stop() { impl_->stop(); }
std::size_t HttpServer::session_count() const { return impl_->sessions.size(); }

}  // namespace toolport
