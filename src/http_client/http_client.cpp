// The downstream HTTP client's network half (Boost.Beast over Asio, OpenSSL). One call is
// a toolport Task (fetch) that loops over attempts, redirects and backoff pauses; each
// attempt is one Asio coroutine that finds or opens a connection, writes the request and
// reads the response with the size cap and decoding applied as the bytes arrive.
#include "http_client/http_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <random>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "client/client_errors.hpp"
#include "http_client/body_decoder.hpp"
#include "http_client/retry_policy.hpp"
#include "http_client/url.hpp"
#include "toolport_version.hpp"
#include "transports/asio_executor.hpp"
#include "util/sanitize.hpp"

namespace toolport::http_client {

namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

bool iequals(std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
}

bool has_control_chars(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && c != '\t') || u == 0x7f;
    });
}

bool is_token(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

bool is_ip_literal(const std::string& host) {
    boost::system::error_code ec;
    net::ip::make_address(host, ec);
    return !ec;
}

// One connection, plain or TLS; pooled between requests to the same origin.
struct Connection {
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    Clock::time_point idle_since;

    beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *plain; }
    void close() {
        beast::error_code ignored;
        lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
        lowest().close();
    }
};

// What a failed read or write means for the caller.
HttpError io_error(const beast::error_code& ec, const Url& url, std::string_view doing) {
    if (ec == beast::error::timeout) {
        return HttpError(HttpError::Kind::timeout, fmt::format("{} did not answer in time ({})", url.display(), doing));
    }
    if (ec == http::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
        ec == net::error::broken_pipe || ec == http::error::partial_message || ec == net::ssl::error::stream_truncated) {
        return HttpError(HttpError::Kind::connection_reset,
                         fmt::format("the connection to {} was closed while {} ({})", url.origin(), doing, ec.message()));
    }
    return HttpError(HttpError::Kind::protocol, fmt::format("{} while {}: {}", url.origin(), doing, ec.message()));
}

// Marks an attempt that failed before any byte of a response came back on a connection
// taken from the pool: the server had closed it while idle, so the request may be sent
// again on a new connection whatever its method (nothing of it was processed).
struct StaleConnection {};

}  // namespace

std::optional<std::string> Response::header(std::string_view name) const {
    for (const auto& [n, v] : headers) {
        if (iequals(n, name)) return v;
    }
    return std::nullopt;
}

struct HttpClient::Impl : std::enable_shared_from_this<Impl> {
    Impl(AsioExecutor& executor, ClientOptions opts)
        : executor(executor), io(executor.io()), options(std::move(opts)), tls_context(ssl::context::tls_client) {
        SSL_CTX_set_min_proto_version(tls_context.native_handle(), TLS1_2_VERSION);
        // The system store, which also honours SSL_CERT_FILE and SSL_CERT_DIR.
        tls_context.set_default_verify_paths();
        if (!options.ca_file.empty()) {
            boost::system::error_code ec;
            tls_context.load_verify_file(options.ca_file, ec);
            if (ec) throw std::invalid_argument(fmt::format("cannot load the CA file {}: {}", options.ca_file, ec.message()));
        }
        if (options.insecure_skip_verify) {
            spdlog::warn("downstream HTTPS: certificate verification is OFF (insecure_skip_verify); any server can "
                         "impersonate the APIs Toolport calls");
            tls_context.set_verify_mode(ssl::verify_none);
        } else {
            tls_context.set_verify_mode(ssl::verify_peer);
        }
        if (options.user_agent.empty()) options.user_agent = std::string("toolport/") + kToolportVersion;
    }

    AsioExecutor& executor;
    net::io_context& io;
    ClientOptions options;
    ssl::context tls_context;
    std::map<std::string, std::vector<std::unique_ptr<Connection>>> idle;  // by pool key
    Stats stats;
    std::minstd_rand jitter{std::random_device{}()};

    // ------------------------------------------------------------------ the pool

    static std::string pool_key(const Url& url, const ProxyEndpoint* proxy) {
        return proxy ? url.origin() + " via " + proxy->display() : url.origin();
    }

    std::unique_ptr<Connection> take_idle(const std::string& key) {
        auto it = idle.find(key);
        if (it == idle.end()) return nullptr;
        auto& list = it->second;
        const auto now = Clock::now();
        while (!list.empty()) {
            auto conn = std::move(list.back());
            list.pop_back();
            if (now - conn->idle_since < options.idle_timeout) return conn;
            conn->close();
        }
        return nullptr;
    }

    void give_back(const std::string& key, std::unique_ptr<Connection> conn) {
        auto& list = idle[key];
        // Expired ones first, then the oldest when the pool is full.
        const auto now = Clock::now();
        std::erase_if(list, [&](const auto& c) {
            if (now - c->idle_since < options.idle_timeout) return false;
            c->close();
            return true;
        });
        if (list.size() >= options.max_idle_per_origin) {
            list.front()->close();
            list.erase(list.begin());
        }
        conn->idle_since = now;
        conn->lowest().expires_never();
        list.push_back(std::move(conn));
    }

    // ------------------------------------------------------------------ one attempt

    // Shared by an attempt and its cancellation callback (same thread).
    struct Watch {
        Connection* conn = nullptr;
        tcp::resolver* resolver = nullptr;
        bool cancelled = false;
    };

    static void expire(beast::tcp_stream& stream, Clock::time_point deadline) { stream.expires_at(deadline); }

    net::awaitable<std::unique_ptr<Connection>> open(const Url& url, const ProxyEndpoint* proxy, Clock::time_point deadline,
                                                     Watch& watch) {
        const std::string& host = proxy ? proxy->host : url.host;
        const unsigned short port = proxy ? proxy->port : url.port;
        tcp::resolver resolver(io);
        watch.resolver = &resolver;
        auto [rec, endpoints] = co_await resolver.async_resolve(host, std::to_string(port), use_nothrow);
        watch.resolver = nullptr;
        if (watch.cancelled) throw OperationCancelled();
        if (rec) {
            throw HttpError(proxy ? HttpError::Kind::proxy : HttpError::Kind::dns,
                            fmt::format("cannot resolve {}{}: {}", proxy ? "the proxy " : "", host, rec.message()));
        }
        auto conn = std::make_unique<Connection>();
        conn->plain.emplace(io);
        watch.conn = conn.get();
        const auto started = Clock::now();
        const auto connect_by = std::min(deadline, started + options.connect_timeout);
        expire(*conn->plain, connect_by);
        auto [cec, endpoint] = co_await conn->plain->async_connect(endpoints, use_nothrow);
        if (watch.cancelled) throw OperationCancelled();
        if (cec == beast::error::timeout) {
            const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(connect_by - started);
            throw HttpError(HttpError::Kind::timeout, fmt::format("no connection to {} within {} ms",
                                                                  proxy ? proxy->display() : url.origin(), waited.count()));
        }
        if (cec) {
            throw HttpError(proxy ? HttpError::Kind::proxy : HttpError::Kind::connect,
                            fmt::format("cannot connect to {}: {}", proxy ? "the proxy " + proxy->display() : url.origin(),
                                        cec.message()));
        }
        beast::error_code ignored;
        conn->plain->socket().set_option(tcp::no_delay(true), ignored);
        ++stats.connections_opened;

        if (proxy && url.https) co_await tunnel(*conn, url, *proxy, deadline, watch);
        if (url.https) co_await handshake(*conn, url, deadline, watch);
        co_return conn;
    }

    // CONNECT host:port through the proxy; the TLS session then runs inside the tunnel.
    net::awaitable<void> tunnel(Connection& conn, const Url& url, const ProxyEndpoint& proxy, Clock::time_point deadline,
                                Watch& watch) {
        const std::string authority = (url.ipv6_literal ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port);
        http::request<http::empty_body> req{http::verb::connect, authority, 11};
        req.set(http::field::host, authority);
        req.set(http::field::user_agent, options.user_agent);
        if (!proxy.authorization.empty()) req.set(http::field::proxy_authorization, proxy.authorization);
        expire(*conn.plain, deadline);
        auto [wec, wn] = co_await http::async_write(*conn.plain, req, use_nothrow);
        if (watch.cancelled) throw OperationCancelled();
        if (wec) throw HttpError(HttpError::Kind::proxy, fmt::format("the proxy {} failed: {}", proxy.display(), wec.message()));
        beast::flat_buffer buffer;
        http::response_parser<http::empty_body> parser;
        parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel follows
        auto [rec, rn] = co_await http::async_read_header(*conn.plain, buffer, parser, use_nothrow);
        if (watch.cancelled) throw OperationCancelled();
        if (rec) throw HttpError(HttpError::Kind::proxy, fmt::format("the proxy {} failed: {}", proxy.display(), rec.message()));
        const unsigned status = parser.get().result_int();
        if (status < 200 || status > 299) {
            throw HttpError(HttpError::Kind::proxy, fmt::format("the proxy {} refused the tunnel to {}: HTTP {}{}", proxy.display(),
                                                                url.origin(), status,
                                                                status == 407 ? " (proxy credentials needed)" : ""));
        }
        if (buffer.size() > 0) {
            throw HttpError(HttpError::Kind::proxy, fmt::format("the proxy {} sent data before the tunnel opened", proxy.display()));
        }
    }

    net::awaitable<void> handshake(Connection& conn, const Url& url, Clock::time_point deadline, Watch& watch) {
        conn.tls.emplace(std::move(*conn.plain), tls_context);
        conn.plain.reset();
        watch.conn = &conn;
        SSL* ssl_handle = conn.tls->native_handle();
        // SNI names the host (never an IP literal); the certificate must be for that host.
        if (!is_ip_literal(url.host)) SSL_set_tlsext_host_name(ssl_handle, url.host.c_str());
        if (!options.insecure_skip_verify) conn.tls->set_verify_callback(ssl::host_name_verification(url.host));
        expire(conn.lowest(), deadline);
        auto [ec] = co_await conn.tls->async_handshake(ssl::stream_base::client, use_nothrow);
        if (watch.cancelled) throw OperationCancelled();
        if (!ec) co_return;
        if (ec == beast::error::timeout) {
            throw HttpError(HttpError::Kind::timeout, fmt::format("the TLS handshake with {} did not finish in time", url.origin()));
        }
        std::string detail = ec.message();
        const long verify = SSL_get_verify_result(ssl_handle);
        if (verify != X509_V_OK) {
            detail = fmt::format("certificate verify failed: {}", X509_verify_cert_error_string(verify));
        }
        throw HttpError(HttpError::Kind::tls, fmt::format("TLS handshake with {} failed: {}", url.origin(), detail));
    }

    struct Limits {
        std::size_t max_bytes;
        Clock::time_point deadline;
    };

    // One request and its response on one connection (pooled or new).
    static net::awaitable<Response> attempt(std::shared_ptr<Impl> self, Url url, Request request, Limits limits,
                                            CancelToken* cancel) {
        Watch watch;
        CancelToken::CallbackId cancel_id = 0;
        if (cancel) {
            cancel_id = cancel->on_cancel([&watch]() {
                watch.cancelled = true;
                if (watch.resolver) watch.resolver->cancel();
                if (watch.conn) watch.conn->close();
            });
        }
        struct Unwatch {
            CancelToken* cancel;
            CancelToken::CallbackId id;
            ~Unwatch() {
                if (cancel && id) cancel->remove(id);
            }
        } unwatch{cancel, cancel_id};
        if (watch.cancelled) throw OperationCancelled(cancel->reason());

        for (int fresh_try = 0;; ++fresh_try) {
            try {
                co_return co_await self->exchange(url, request, limits, watch, fresh_try > 0);
            } catch (const StaleConnection&) {
                if (fresh_try > 0) throw HttpError(HttpError::Kind::connection_reset, url.origin() + " closed the connection");
            }
            if (watch.cancelled) throw OperationCancelled(cancel ? cancel->reason() : "cancelled");
        }
    }

    net::awaitable<Response> exchange(const Url& url, const Request& request, const Limits& limits, Watch& watch,
                                      bool fresh_only) {
        const ProxyEndpoint* proxy = options.proxy.proxy_for(url.https, url.host, url.port);
        const std::string key = pool_key(url, proxy);
        std::unique_ptr<Connection> conn = fresh_only ? nullptr : take_idle(key);
        const bool reused = conn != nullptr;
        if (reused) ++stats.connections_reused;
        else conn = co_await open(url, proxy, limits.deadline, watch);
        watch.conn = conn.get();

        http::request<http::string_body> req;
        req.method_string(request.method);
        // Through a plain-http proxy the request line names the whole URL.
        req.target(proxy && !url.https ? url.origin() + url.target : url.target);
        req.version(11);
        req.set(http::field::host, url.authority());
        req.set(http::field::user_agent, options.user_agent);
        req.set(http::field::accept_encoding, "gzip, deflate");
        for (const auto& [name, value] : request.headers) req.set(name, value);
        if (req.find(http::field::accept) == req.end()) req.set(http::field::accept, "*/*");
        if (proxy && !url.https && !proxy->authorization.empty()) req.set(http::field::proxy_authorization, proxy->authorization);
        req.keep_alive(true);
        req.body() = request.body;
        if (!request.body.empty() || request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
            req.prepare_payload();
        }

        expire(conn->lowest(), limits.deadline);
        beast::flat_buffer buffer;
        http::response_parser<http::buffer_body> parser;
        parser.body_limit(boost::none);  // the cap is ours, counted on raw and decoded bytes
        parser.header_limit(64 * 1024);
        if (request.method == "HEAD") parser.skip(true);

        ++stats.requests_sent;
        beast::error_code ec;
        if (conn->tls) std::tie(ec, std::ignore) = co_await http::async_write(*conn->tls, req, use_nothrow);
        else std::tie(ec, std::ignore) = co_await http::async_write(*conn->plain, req, use_nothrow);
        if (!ec) {
            if (conn->tls) std::tie(ec, std::ignore) = co_await http::async_read_header(*conn->tls, buffer, parser, use_nothrow);
            else std::tie(ec, std::ignore) = co_await http::async_read_header(*conn->plain, buffer, parser, use_nothrow);
        }
        if (watch.cancelled) throw OperationCancelled();
        if (ec) {
            conn->close();
            const bool nothing_back = buffer.size() == 0 && !parser.got_some();
            if (reused && nothing_back && ec != beast::error::timeout) throw StaleConnection{};
            throw io_error(ec, url, "sending the request or reading the response header");
        }

        Response response;
        response.status = parser.get().result_int();
        response.reason = std::string(parser.get().reason());
        for (const auto& field : parser.get()) {
            response.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
        }
        if (auto announced = parser.content_length(); announced && *announced > limits.max_bytes) {
            conn->close();
            throw client::ResponseTooLarge(fmt::format("{} announced a response of {} bytes, over the limit of {}",
                                                       url.display(), *announced, limits.max_bytes),
                                           static_cast<std::size_t>(*announced), limits.max_bytes, false);
        }
        std::unique_ptr<BodyDecoder> decoder;
        try {
            decoder = std::make_unique<BodyDecoder>(response.header("Content-Encoding").value_or(""), limits.max_bytes);
        } catch (const DecodeError& e) {
            conn->close();
            throw HttpError(HttpError::Kind::protocol, fmt::format("{}: {}", url.display(), e.what()));
        }
        std::array<char, 16384> scratch;
        std::size_t raw = 0;
        while (!parser.is_done()) {
            parser.get().body().data = scratch.data();
            parser.get().body().size = scratch.size();
            if (conn->tls) std::tie(ec, std::ignore) = co_await http::async_read_some(*conn->tls, buffer, parser, use_nothrow);
            else std::tie(ec, std::ignore) = co_await http::async_read_some(*conn->plain, buffer, parser, use_nothrow);
            if (watch.cancelled) throw OperationCancelled();
            if (ec && ec != http::error::need_buffer) {
                conn->close();
                throw io_error(ec, url, "reading the response body");
            }
            const std::size_t got = scratch.size() - parser.get().body().size;
            raw += got;
            bool within = raw <= limits.max_bytes;
            try {
                if (within) within = decoder->feed(std::string_view(scratch.data(), got), response.body);
            } catch (const DecodeError& e) {
                conn->close();
                throw HttpError(HttpError::Kind::protocol, fmt::format("{}: {}", url.display(), e.what()));
            }
            if (!within) {
                conn->close();
                throw client::ResponseTooLarge(fmt::format("{} sent a response over {} bytes", url.display(), limits.max_bytes),
                                               std::max(raw, decoder->decoded_bytes()), limits.max_bytes, true);
            }
        }
        try {
            decoder->finish();
        } catch (const DecodeError& e) {
            conn->close();
            throw HttpError(HttpError::Kind::protocol, fmt::format("{}: {}", url.display(), e.what()));
        }
        watch.conn = nullptr;
        if (parser.keep_alive()) give_back(key, std::move(conn));
        else conn->close();
        co_return response;
    }
};

namespace {

template <typename T>
Task<T> run_on(net::io_context& io, net::awaitable<T> operation) {
    Completion<T> done;
    net::co_spawn(io, std::move(operation), [done](std::exception_ptr error, T value) mutable {
        if (error) done.set_error(error);
        else done.set_value(std::move(value));
    });
    co_return co_await done;
}

bool is_redirect(unsigned status) { return status == 301 || status == 302 || status == 303 || status == 307 || status == 308; }

void check_request(const Request& request) {
    if (!is_token(request.method)) throw HttpError(HttpError::Kind::invalid_request, "invalid HTTP method");
    for (const auto& [name, value] : request.headers) {
        if (!is_token(name)) {
            throw HttpError(HttpError::Kind::invalid_request,
                            fmt::format("\"{}\" is not a valid header name", util::sanitize_for_message(name, 60)));
        }
        if (has_control_chars(value)) {
            throw HttpError(HttpError::Kind::invalid_request, fmt::format("the value of header {} has control characters", name));
        }
        for (std::string_view reserved : {"host", "content-length", "transfer-encoding", "connection"}) {
            if (iequals(name, reserved)) {
                throw HttpError(HttpError::Kind::invalid_request, fmt::format("the {} header is set by the client", name));
            }
        }
    }
}

}  // namespace

HttpClient::HttpClient(AsioExecutor& executor, ClientOptions options)
    : impl_(std::make_shared<Impl>(executor, std::move(options))) {}

HttpClient::~HttpClient() { close_idle(); }

Stats HttpClient::stats() const { return impl_->stats; }

void HttpClient::close_idle() {
    for (auto& [key, list] : impl_->idle) {
        for (auto& c : list) c->close();
    }
    impl_->idle.clear();
}

Task<Response> HttpClient::fetch(Request request, CallOptions options) {
    auto self = impl_;
    check_request(request);
    Url url;
    try {
        url = parse_url(request.url);
    } catch (const std::invalid_argument& e) {
        throw HttpError(HttpError::Kind::invalid_request, fmt::format("cannot use the URL: {}", e.what()));
    }
    const auto deadline = options.deadline.value_or(Clock::now() + self->options.default_timeout);
    const Impl::Limits limits{options.max_response_bytes ? options.max_response_bytes : self->options.max_response_bytes,
                              deadline};
    const std::string origin = url.origin();
    int attempts = 0;
    int failures = 0;
    int redirects = 0;
    for (;;) {
        if (options.cancel && options.cancel->cancelled()) throw OperationCancelled(options.cancel->reason());
        if (Clock::now() >= deadline) {
            throw HttpError(HttpError::Kind::timeout, fmt::format("{}: the call's time ran out", url.display()));
        }
        if (options.before_attempt) co_await options.before_attempt();
        ++attempts;
        Response response;
        std::optional<HttpError> failure;
        try {
            response = co_await run_on(self->io, Impl::attempt(self, url, request, limits, options.cancel));
        } catch (const HttpError& e) {
            if (e.kind != HttpError::Kind::connection_reset && e.kind != HttpError::Kind::timeout) throw;
            failure = e;
        }
        std::optional<std::chrono::milliseconds> pause;
        if (failure || retryable_status(response.status)) {
            ++failures;
            const bool may_retry = idempotent(request.method) && failures < options.max_attempts &&
                                   !(failure && failure->kind == HttpError::Kind::timeout && Clock::now() >= deadline);
            if (may_retry) {
                std::optional<std::chrono::milliseconds> retry_after;
                if (!failure) {
                    if (auto h = response.header("Retry-After")) retry_after = parse_retry_after(*h, std::chrono::system_clock::now());
                }
                std::uniform_real_distribution<double> unit(0.0, 1.0);
                pause = backoff(failures + 1, unit(self->jitter), retry_after);
                // A pause that would end past the deadline is not taken: the answer we have
                // (or the failure) is the call's.
                if (Clock::now() + *pause >= deadline) pause.reset();
            }
            if (!pause) {
                if (failure) throw *failure;
                response.attempts = attempts;
                co_return response;
            }
            co_await self->executor.sleep(*pause, options.cancel);
            continue;
        }
        if (is_redirect(response.status) && redirects < options.max_redirects) {
            auto location = response.header("Location");
            auto next = location ? resolve_location(url, *location) : std::nullopt;
            if (!next) {
                throw HttpError(HttpError::Kind::protocol,
                                fmt::format("{} answered HTTP {} without a usable Location", url.display(), response.status));
            }
            if (next->origin() != origin) {
                throw HttpError(HttpError::Kind::redirect_refused,
                                fmt::format("{} redirected to {}, another host: not followed", url.display(), next->origin()));
            }
            ++redirects;
            url = *next;
            if (response.status == 303 ||
                ((response.status == 301 || response.status == 302) && request.method != "GET" && request.method != "HEAD")) {
                request.method = request.method == "HEAD" ? "HEAD" : "GET";
                request.body.clear();
            }
            continue;
        }
        response.attempts = attempts;
        co_return response;
    }
}

}  // namespace toolport::http_client
