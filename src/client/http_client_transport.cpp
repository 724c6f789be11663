// The Streamable HTTP client transport (Boost.Beast). Every message is a POST to the
// server's endpoint; a request's reply comes back as a JSON body or as an SSE stream
// that may also carry the server's notifications and requests about it (and that is
// resumed with Last-Event-ID when the server ends it early). After the handshake a GET
// stream carries messages that belong to no request. Plain http only.
#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "client/client_transport.hpp"
#include "client/http_url.hpp"
#include "client/sse_parser.hpp"
#include "client/wire_payload.hpp"
#include "toolport_version.hpp"
#include "transports/asio_executor.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;
constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

constexpr std::size_t kMaxIdleConnections = 4;
constexpr std::size_t kMaxErrorBodyBytes = 64 * 1024;
constexpr auto kDefaultRetry = 1000ms;  // when a stream the server ended named no "retry"

// Thrown inside an exchange the client gave up on (abandon() or close()): not an error.
struct Abandoned {};

// The server answered with a non-2xx status.
struct HttpStatusError : TransportError {
    HttpStatusError(unsigned status, const std::string& what) : TransportError(what), status(status) {}
    unsigned status;
};

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    }
    return true;
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && iequals(text.substr(0, prefix.size()), prefix);
}

bool is_token_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool has_control_chars(std::string_view text) {
    for (char c : text) {
        if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) return true;
    }
    return false;
}

// Visible ASCII only, as the spec requires of session ids (and a sane length).
bool valid_session_id(std::string_view id) {
    if (id.empty() || id.size() > 1024) return false;
    for (char c : id) {
        if (c < 0x21 || c > 0x7e) return false;
    }
    return true;
}

// One HTTP request/response on one connection: a POST, a GET stream, a DELETE.
struct Exchange {
    explicit Exchange(net::io_context& io) : timer(io) {}
    std::unique_ptr<beast::tcp_stream> stream;
    bool reused = false;  // the connection came from the idle pool
    beast::flat_buffer buffer;
    std::optional<http::response_parser<http::buffer_body>> parser;
    std::array<char, 16384> scratch;
    net::steady_timer timer;  // waits between stream reconnections
    bool abandoned = false;

    void cancel() {
        abandoned = true;
        timer.cancel();
        if (stream) {
            beast::error_code ignored;
            stream->socket().shutdown(tcp::socket::shutdown_both, ignored);
            stream->close();
        }
    }
};

struct Impl : std::enable_shared_from_this<Impl> {
    Impl(net::io_context& io, HttpClientOptions opts, HttpUrl parsed)
        : io(io), options(std::move(opts)), url(std::move(parsed)) {}

    net::io_context& io;
    HttpClientOptions options;
    HttpUrl url;
    ClientTransport::Handlers handlers;
    std::string session_id;
    std::string protocol_version;
    bool opened = false;
    bool closing = false;
    std::string ended_reason;  // the server ended the session
    std::vector<std::unique_ptr<beast::tcp_stream>> idle;
    std::set<std::shared_ptr<Exchange>> live;
    std::map<std::string, std::shared_ptr<Exchange>> by_request;  // key: request id as JSON text

    std::string describe() const { return url.display(); }

    // -------------------------------------------------------------- connections

    net::awaitable<void> connect(Exchange& ex) {
        tcp::resolver resolver(io);
        auto [rec, endpoints] = co_await resolver.async_resolve(url.host, std::to_string(url.port), use_nothrow);
        if (ex.abandoned) throw Abandoned{};
        if (rec) throw TransportError(fmt::format("cannot reach {}: {}", describe(), rec.message()));
        ex.stream = std::make_unique<beast::tcp_stream>(io);
        ex.reused = false;
        ex.stream->expires_after(options.connect_timeout);
        auto [cec, endpoint] = co_await ex.stream->async_connect(endpoints, use_nothrow);
        if (ex.abandoned) throw Abandoned{};
        if (cec == beast::error::timeout) {
            throw TransportError(fmt::format("cannot connect to {}: no answer within {} ms", describe(),
                                             options.connect_timeout.count()));
        }
        if (cec) throw TransportError(fmt::format("cannot connect to {}: {}", describe(), cec.message()));
        beast::error_code ignored;
        ex.stream->socket().set_option(tcp::no_delay(true), ignored);
    }

    void set_headers(http::request<http::string_body>& req, const std::string& last_event_id) const {
        req.set(http::field::host, url.host_header());
        req.set(http::field::user_agent, std::string("toolport/") + kToolportVersion);
        if (!session_id.empty()) req.set("Mcp-Session-Id", session_id);
        if (!protocol_version.empty()) req.set("MCP-Protocol-Version", protocol_version);
        if (!last_event_id.empty()) req.set("Last-Event-ID", last_event_id);
        if (!options.bearer_token.empty()) req.set(http::field::authorization, "Bearer " + options.bearer_token);
        for (const auto& [name, value] : options.headers) req.set(name, value);
    }

    // Sends one request on `ex` and reads the response header (the body is left for the
    // caller). A kept-alive connection the server closed meanwhile is replaced once.
    // `bounded`: the whole exchange must finish within acknowledge_timeout.
    net::awaitable<void> exchange(Exchange& ex, http::verb verb, std::string body, const std::string& last_event_id,
                                  bool bounded) {
        http::request<http::string_body> req{verb, url.path_and_query, 11};
        set_headers(req, last_event_id);
        if (verb == http::verb::post) {
            req.set(http::field::content_type, "application/json");
            req.set(http::field::accept, "application/json, text/event-stream");
            req.body() = std::move(body);
        } else if (verb == http::verb::get) {
            req.set(http::field::accept, "text/event-stream");
        }
        req.keep_alive(true);
        req.prepare_payload();

        for (int attempt = 0;; ++attempt) {
            if (!ex.stream) {
                if (!idle.empty() && attempt == 0) {
                    ex.stream = std::move(idle.back());
                    idle.pop_back();
                    ex.reused = true;
                } else {
                    co_await connect(ex);
                }
            }
            if (bounded) ex.stream->expires_after(options.acknowledge_timeout);
            else ex.stream->expires_never();
            ex.buffer.clear();
            ex.parser.emplace();
            ex.parser->body_limit(boost::none);  // limits are ours: per message, not per stream
            ex.parser->header_limit(64 * 1024);

            auto [wec, wn] = co_await http::async_write(*ex.stream, req, use_nothrow);
            beast::error_code ec = wec;
            if (!ec) {
                auto [rec, rn] = co_await http::async_read_header(*ex.stream, ex.buffer, *ex.parser, use_nothrow);
                ec = rec;
            }
            if (ex.abandoned) throw Abandoned{};
            if (!ec) co_return;
            // An idle connection may have been closed by the server just as we reused it.
            if (ex.reused && attempt == 0 &&
                (ec == http::error::end_of_stream || ec == net::error::connection_reset || ec == net::error::broken_pipe ||
                 ec == net::error::eof)) {
                ex.stream.reset();
                continue;
            }
            if (ec == beast::error::timeout) {
                throw TransportError(fmt::format("{} did not answer within {} ms", describe(),
                                                 options.acknowledge_timeout.count()));
            }
            throw TransportError(fmt::format("connection to {} failed: {}", describe(), ec.message()));
        }
    }

    // The next bytes of the response body; nullopt at its end. An event stream may also
    // end with the connection (servers close SSE streams without the last chunk); any
    // other body cut short is an error.
    net::awaitable<std::optional<std::string>> read_piece(Exchange& ex, bool event_stream = false) {
        for (;;) {
            if (ex.parser->is_done()) co_return std::nullopt;
            ex.parser->get().body().data = ex.scratch.data();
            ex.parser->get().body().size = ex.scratch.size();
            auto [ec, n] = co_await http::async_read_some(*ex.stream, ex.buffer, *ex.parser, use_nothrow);
            if (ex.abandoned) throw Abandoned{};
            if (ec && ec != http::error::need_buffer) {
                if (event_stream && (ec == http::error::partial_message || ec == http::error::end_of_stream ||
                                     ec == net::error::eof)) {
                    co_return std::nullopt;
                }
                throw TransportError(fmt::format("connection to {} lost: {}", describe(), ec.message()));
            }
            std::size_t got = ex.scratch.size() - ex.parser->get().body().size;
            if (got > 0) co_return std::string(ex.scratch.data(), got);
        }
    }

    net::awaitable<std::string> read_body(Exchange& ex, std::size_t limit) {
        // Refused on its announced size before any of it is read; counted while reading
        // otherwise (chunked bodies), and reading stops at the limit.
        if (auto announced = ex.parser->content_length(); announced && *announced > limit) {
            throw ResponseTooLarge(
                fmt::format("{} announced a response body of {} bytes, over the limit of {}", describe(), *announced, limit),
                static_cast<std::size_t>(*announced), limit, false);
        }
        std::string body;
        while (auto piece = co_await read_piece(ex)) {
            body += *piece;
            if (body.size() > limit) {
                throw ResponseTooLarge(fmt::format("{} sent a response body over {} bytes", describe(), limit),
                                       body.size(), limit, true);
            }
        }
        co_return body;
    }

    // Returns a connection whose response was read completely to the pool.
    void recycle(Exchange& ex) {
        if (ex.stream && ex.parser && ex.parser->is_done() && ex.parser->keep_alive() && !closing &&
            idle.size() < kMaxIdleConnections) {
            ex.stream->expires_never();
            idle.push_back(std::move(ex.stream));
        }
    }

    // -------------------------------------------------------------- messages

    // Hands what one payload holds to the client. Returns true when it held the reply
    // to `awaited` (the request id as JSON text).
    bool deliver(std::string_view text, const std::string& awaited) {
        if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return false;  // e.g. a priming event
        auto payload = decode_wire_payload(text);
        if (!payload.error.empty()) {
            spdlog::warn("{} sent a message that is not JSON-RPC ({}); ignored", describe(), payload.error);
            return false;
        }
        bool replied = false;
        for (auto& message : payload.messages) {
            if (!awaited.empty() && message.is_object() && !message.contains("method") && message.contains("id") &&
                message["id"].dump() == awaited) {
                replied = true;
            }
            if (closing) continue;
            handlers.on_message(std::move(message));
        }
        return replied;
    }

    // Reads SSE events until the reply to `awaited` arrived (true) or the stream ended.
    net::awaitable<bool> pump_events(Exchange& ex, SseParser& sse, const std::string& awaited, bool& saw_event) {
        while (auto piece = co_await read_piece(ex, true)) {
            std::vector<SseEvent> events;
            try {
                events = sse.feed(*piece);
            } catch (const SseError& e) {
                throw TransportError(fmt::format("{}: {}", describe(), e.what()));
            }
            for (const auto& event : events) {
                saw_event = true;
                if (event.type != "message") continue;
                if (deliver(event.data, awaited)) co_return true;
            }
        }
        co_return false;
    }

    // Non-2xx answers. A JSON-RPC error about our request is the request's answer (the
    // client raises it as JsonRpcError); anything else is a TransportError.
    net::awaitable<void> reject_status(Exchange& ex, http::verb verb, const std::string& awaited) {
        const unsigned status = ex.parser->get().result_int();
        std::string detail;
        try {
            std::string body = co_await read_body(ex, kMaxErrorBodyBytes);
            auto payload = decode_wire_payload(body);
            if (payload.error.empty() && payload.messages.size() == 1) {
                const auto& m = payload.messages.front();
                if (m.is_object() && m.contains("error") && m["error"].is_object()) {
                    if (!awaited.empty() && m.contains("id") && m["id"].dump() == awaited) {
                        deliver(body, awaited);
                        co_return;
                    }
                    detail = m["error"].value("message", "");
                }
            } else if (!body.empty() && body.size() < 300 && !has_control_chars(body)) {
                detail = body;
            }
        } catch (const TransportError&) {
            // The status is what matters; the body was only a better explanation.
        }
        std::string what = fmt::format("{} answered HTTP {} {}", describe(), status,
                                       std::string(ex.parser->get().reason()));
        if (!detail.empty()) what += ": " + util::sanitize_for_message(detail, 300);
        if (status == 401) what += " (is the bearer token right?)";
        if (status == 404 && !session_id.empty() && verb != http::verb::delete_) {
            end_session(fmt::format("{} ended the session (HTTP 404)", describe()));
        }
        throw HttpStatusError(status, what);
    }

    void end_session(std::string reason) {
        if (!ended_reason.empty() || closing) return;
        ended_reason = std::move(reason);
        if (handlers.on_closed) handlers.on_closed(ended_reason);
    }

    void remember_session(Exchange& ex) {
        auto it = ex.parser->get().find("Mcp-Session-Id");
        if (it == ex.parser->get().end()) return;
        std::string_view id = it->value();
        if (!valid_session_id(id)) {
            throw TransportError(fmt::format("{} sent a malformed Mcp-Session-Id header", describe()));
        }
        if (session_id.empty()) session_id.assign(id);
    }

    std::string content_type(Exchange& ex) const {
        auto it = ex.parser->get().find(http::field::content_type);
        return it == ex.parser->get().end() ? std::string() : std::string(it->value());
    }

    // POSTs one message. For a request (awaited = its id as JSON text), reads its reply:
    // a JSON body, or an SSE stream resumed with Last-Event-ID until the reply arrived.
    static net::awaitable<void> post(std::shared_ptr<Impl> self, std::shared_ptr<Exchange> ex, std::string body,
                                     std::string awaited) {
        const bool is_request = !awaited.empty();
        co_await self->exchange(*ex, http::verb::post, std::move(body), {}, !is_request);
        self->remember_session(*ex);
        const unsigned status = ex->parser->get().result_int();
        if (status < 200 || status > 299) {
            co_await self->reject_status(*ex, http::verb::post, awaited);
            co_return;
        }

        const std::string type = self->content_type(*ex);
        if (status == 202 || (ex->parser->content_length() && *ex->parser->content_length() == 0)) {
            co_await self->read_body(*ex, kMaxErrorBodyBytes);
            self->recycle(*ex);
            co_return;  // accepted; a request's reply (if any) comes on the GET stream
        }
        if (starts_with_nocase(type, "application/json")) {
            std::string json = co_await self->read_body(*ex, self->options.max_message_bytes);
            self->recycle(*ex);
            if (!self->deliver(json, awaited) && is_request) {
                // Waiting for the timeout would not bring the answer either.
                throw TransportError(fmt::format("{} answered the request with a JSON body that holds no response to it",
                                                 self->describe()));
            }
            co_return;
        }
        if (!starts_with_nocase(type, "text/event-stream")) {
            throw TransportError(fmt::format("{} answered with Content-Type \"{}\" (expected JSON or an event stream)",
                                             self->describe(), util::sanitize_for_message(type, 80)));
        }

        SseParser sse(self->options.max_message_bytes);
        int resumptions = 0;
        for (;;) {
            bool saw_event = false;
            if (co_await self->pump_events(*ex, sse, awaited, saw_event)) co_return;
            if (!is_request) co_return;
            // The stream ended before the reply: the server asks us to come back (SSE polling).
            if (saw_event) resumptions = 0;
            if (sse.last_event_id().empty() || ++resumptions > self->options.max_resumptions) {
                throw TransportError(fmt::format("{} ended the response stream without answering the request{}",
                                                 self->describe(),
                                                 sse.last_event_id().empty() ? "" : " (resuming it did not help)"));
            }
            ex->stream.reset();
            ex->timer.expires_after(sse.retry().value_or(kDefaultRetry));
            co_await ex->timer.async_wait(use_nothrow);
            if (ex->abandoned) throw Abandoned{};
            co_await self->exchange(*ex, http::verb::get, {}, sse.last_event_id(), false);
            const unsigned resumed = ex->parser->get().result_int();
            if (resumed < 200 || resumed > 299) {
                co_await self->reject_status(*ex, http::verb::get, awaited);
                co_return;
            }
            if (!starts_with_nocase(self->content_type(*ex), "text/event-stream")) {
                throw TransportError(fmt::format("{} answered a stream resumption without an event stream", self->describe()));
            }
        }
    }

    // The GET stream for messages outside requests, reopened (with Last-Event-ID) when
    // the server ends it, until close().
    static net::awaitable<void> listen(std::shared_ptr<Impl> self) {
        std::string last_event_id;
        int failures = 0;
        while (!self->closing && self->ended_reason.empty()) {
            auto ex = std::make_shared<Exchange>(self->io);
            self->live.insert(ex);
            std::chrono::milliseconds pause = kDefaultRetry;
            try {
                co_await self->exchange(*ex, http::verb::get, {}, last_event_id, false);
                const unsigned status = ex->parser->get().result_int();
                if (status == 405) {
                    spdlog::debug("{} offers no stream for messages outside requests (HTTP 405)", self->describe());
                    self->live.erase(ex);
                    co_return;
                }
                if (status < 200 || status > 299) co_await self->reject_status(*ex, http::verb::get, {});
                if (!starts_with_nocase(self->content_type(*ex), "text/event-stream")) {
                    throw TransportError(fmt::format("{} answered GET without an event stream", self->describe()));
                }
                SseParser sse(self->options.max_message_bytes);
                bool saw_event = false;
                co_await self->pump_events(*ex, sse, {}, saw_event);
                if (saw_event) failures = 0;
                last_event_id = sse.last_event_id();
                pause = sse.retry().value_or(kDefaultRetry);
            } catch (const Abandoned&) {
                self->live.erase(ex);
                co_return;
            } catch (const HttpStatusError& e) {
                // A client error (401, 403, 404, ...) will not go away by asking again.
                if (e.status >= 400 && e.status < 500 && e.status != 408 && e.status != 429) {
                    if (!self->closing) spdlog::warn("{}; no stream for server messages", e.what());
                    self->live.erase(ex);
                    co_return;
                }
                ++failures;
                pause = std::min<std::chrono::milliseconds>(kDefaultRetry * (1 << std::min(failures, 5)), 30s);
            } catch (const std::exception& e) {
                if (self->closing || !self->ended_reason.empty()) {
                    self->live.erase(ex);
                    co_return;
                }
                ++failures;
                pause = std::min<std::chrono::milliseconds>(kDefaultRetry * (1 << std::min(failures, 5)), 30s);
                spdlog::debug("{}: stream for server messages failed ({}); retrying in {} ms", self->describe(),
                              e.what(), pause.count());
            }
            ex->stream.reset();
            if (self->closing) {
                self->live.erase(ex);
                co_return;
            }
            ex->timer.expires_after(pause);
            co_await ex->timer.async_wait(use_nothrow);
            self->live.erase(ex);
        }
    }

    static net::awaitable<void> delete_session(std::shared_ptr<Impl> self) {
        auto ex = std::make_shared<Exchange>(self->io);
        try {
            co_await self->exchange(*ex, http::verb::delete_, {}, {}, true);
            co_await self->read_body(*ex, kMaxErrorBodyBytes);
            const unsigned status = ex->parser->get().result_int();
            // 405: the server does not let clients end sessions; it will expire it.
            spdlog::debug("{}: DELETE of the session answered HTTP {}", self->describe(), status);
        } catch (const std::exception& e) {
            spdlog::debug("{}: could not delete the session: {}", self->describe(), e.what());
        } catch (const Abandoned&) {
        }
    }
};

template <typename Awaitable>
Task<void> await_asio(net::io_context& io, Awaitable operation) {
    Completion<bool> done;
    net::co_spawn(io, std::move(operation), [done](std::exception_ptr error) mutable {
        if (error) done.set_error(error);
        else done.set_value(true);
    });
    co_await done;
}

class HttpTransport final : public ClientTransport {
public:
    HttpTransport(net::io_context& io, HttpClientOptions options, HttpUrl url)
        : impl_(std::make_shared<Impl>(io, std::move(options), std::move(url))) {}
    ~HttpTransport() override {
        impl_->closing = true;
        for (const auto& ex : impl_->live) ex->cancel();
        impl_->idle.clear();
    }

    Task<void> open(Handlers handlers) override {
        impl_->handlers = std::move(handlers);
        impl_->opened = true;
        co_return;
    }

    Task<void> send(Json message) override { return send_impl(impl_, std::move(message)); }

    void abandon(const protocol::RequestId& id) override {
        auto it = impl_->by_request.find(id.dump());
        if (it == impl_->by_request.end()) return;
        it->second->cancel();
        impl_->by_request.erase(it);
    }

    void use_protocol_version(const std::string& version) override { impl_->protocol_version = version; }

    void handshake_done() override {
        if (impl_->options.listen && !impl_->closing) net::co_spawn(impl_->io, Impl::listen(impl_), net::detached);
    }

    Task<void> close() override { return close_impl(impl_); }
    std::string describe() const override { return impl_->describe(); }

private:
    static Task<void> send_impl(std::shared_ptr<Impl> self, Json message) {
        if (!self->ended_reason.empty()) throw TransportError(self->ended_reason);
        if (self->closing || !self->opened) throw TransportError("the connection to " + self->describe() + " is closed");
        std::string awaited;
        if (message.contains("method") && message.contains("id")) awaited = message["id"].dump();
        auto ex = std::make_shared<Exchange>(self->io);
        self->live.insert(ex);
        if (!awaited.empty()) self->by_request[awaited] = ex;
        std::exception_ptr error;
        try {
            co_await await_asio(self->io, Impl::post(self, ex, protocol::serialize(message), awaited));
        } catch (const Abandoned&) {
            // The client stopped waiting (timeout, cancellation, close): nothing to report.
        } catch (...) {
            error = std::current_exception();
        }
        self->live.erase(ex);
        if (auto it = self->by_request.find(awaited); it != self->by_request.end() && it->second == ex) {
            self->by_request.erase(it);
        }
        if (error && !ex->abandoned) std::rethrow_exception(error);
    }

    static Task<void> close_impl(std::shared_ptr<Impl> self) {
        if (self->closing) co_return;
        self->closing = true;
        auto live = std::move(self->live);
        self->live.clear();
        self->by_request.clear();
        for (const auto& ex : live) ex->cancel();
        self->idle.clear();
        if (!self->session_id.empty() && self->ended_reason.empty()) {
            co_await await_asio(self->io, Impl::delete_session(self));
        }
    }

    std::shared_ptr<Impl> impl_;
};

void check_headers(const HttpClientOptions& options) {
    static constexpr std::string_view kReserved[] = {"host", "content-type", "content-length", "accept",
                                                     "transfer-encoding", "connection", "mcp-session-id",
                                                     "mcp-protocol-version", "last-event-id"};
    for (const auto& [name, value] : options.headers) {
        if (name.empty() || !std::all_of(name.begin(), name.end(), is_token_char)) {
            throw std::invalid_argument(fmt::format("\"{}\" is not a valid HTTP header name",
                                                    util::sanitize_for_message(name, 60)));
        }
        for (auto reserved : kReserved) {
            if (iequals(name, reserved)) {
                throw std::invalid_argument(fmt::format("the {} header is set by the MCP client itself", name));
            }
        }
        if (iequals(name, "authorization") && !options.bearer_token.empty()) {
            throw std::invalid_argument("both a bearer token and an Authorization header were given; use one");
        }
        if (has_control_chars(value)) {
            throw std::invalid_argument(fmt::format("the value of header {} contains control characters", name));
        }
    }
    if (has_control_chars(options.bearer_token) || options.bearer_token.find(' ') != std::string::npos) {
        throw std::invalid_argument("the bearer token contains spaces or control characters");
    }
}

}  // namespace

std::unique_ptr<ClientTransport> make_http_transport(AsioExecutor& executor, HttpClientOptions options) {
    HttpUrl url = parse_http_url(options.url);
    check_headers(options);
    return std::make_unique<HttpTransport>(executor.io(), std::move(options), std::move(url));
}

}  // namespace toolport::client
