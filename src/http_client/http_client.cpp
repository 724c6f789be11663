// The downstream HTTP client's network half (Boost.Beast over Asio, OpenSSL). One call is
// a toolport Task (fetch) that loops over attempts, redirects and backoff pauses; each
// attempt finds or opens a connection, writes the request and reads the response with the
// size cap and decoding applied as the bytes arrive. Every step is a Task too, awaiting
// the Asio operations through use_task (async/use_task.hpp): their handlers resume it
// directly, with no Asio coroutine and no co_spawn per request.
#include "http_client/http_client.hpp"

#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <map>
#include <random>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "async/use_task.hpp"
#include "http_client/body_decoder.hpp"
#include "http_client/retry_policy.hpp"
#include "http_client/url.hpp"
#include "toolport_version.hpp"
#include "util/http_text.hpp"
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

// The request line and header block, written by hand rather than by Beast's serializer,
// which took ~24,000 instructions to write a 250-byte POST (callgrind, the gateway's hop
// to its upstream: the largest single cost of the client side). The fields are those
// Beast was given, in the same order and with the same rule: a header the request names
// replaces the client's own of that name (User-Agent, Accept-Encoding), Accept defaults
// to */*. Names and values passed check_request (tokens; no control characters).
// Content-Length, the last field, and the blank line are content_length_and_end()'s:
// between an MCP client's POSTs to its server only they change (HttpClient::Impl::LastHead).
std::string request_head(const Request& request, std::string_view target, std::string_view authority,
                         std::string_view user_agent, std::string_view proxy_authorization) {
    std::vector<std::pair<std::string_view, std::string_view>> fields;
    fields.reserve(request.headers.size() + 6);  // one allocation for all of them
    fields.emplace_back("Host", authority);
    fields.emplace_back("User-Agent", user_agent);
    fields.emplace_back("Accept-Encoding", "gzip, deflate");
    const auto named = [&fields](std::string_view name) {
        return std::find_if(fields.begin(), fields.end(),
                            [name](const auto& field) { return util::iequals_ascii(field.first, name); });
    };
    for (const auto& header : request.headers) {
        // Beast's set(): every earlier field of that name goes, this one comes last.
        const std::string_view name = header.first;
        fields.erase(std::remove_if(fields.begin(), fields.end(),
                                    [name](const auto& field) { return util::iequals_ascii(field.first, name); }),
                     fields.end());
        fields.emplace_back(name, header.second);
    }
    if (named("Accept") == fields.end()) fields.emplace_back("Accept", "*/*");
    if (!proxy_authorization.empty()) fields.emplace_back("Proxy-Authorization", proxy_authorization);
    std::string head;
    head.reserve(256);
    head.append(request.method).append(" ").append(target).append(" HTTP/1.1\r\n");
    for (const auto& [name, value] : fields) head.append(name).append(": ").append(value).append("\r\n");
    return head;
}

// The end of request_head(): the Content-Length field (a body, or a method that has one)
// and the blank line.
std::string content_length_and_end(const Request& request) {
    if (!request.body.empty() || request.method == "POST" || request.method == "PUT" || request.method == "PATCH") {
        // By hand: fmt::format took 500 instructions more for this line.
        char digits[24];
        const auto printed = std::to_chars(std::begin(digits), std::end(digits), request.body.size());
        std::string end;
        end.reserve(48);
        end.append("Content-Length: ").append(digits, printed.ptr).append("\r\n\r\n");
        return end;
    }
    return "\r\n";
}

bool is_ip_literal(const std::string& host) {
    boost::system::error_code ec;
    net::ip::make_address(host, ec);
    return !ec;
}

// One connection, plain or TLS; pooled between requests to the same origin. `slot` is its
// place in the origin's connection limit, given back when the connection is destroyed.
// How much one read of a response asks the socket for.
constexpr std::size_t kReadChunk = 16 * 1024;

struct Connection {
    std::shared_ptr<void> slot;
    std::optional<beast::tcp_stream> plain;
    std::optional<beast::ssl_stream<beast::tcp_stream>> tls;
    Clock::time_point idle_since;
    // Where body bytes land before decoding: one per connection, not a 16 KiB allocation
    // per request.
    std::unique_ptr<std::array<char, 16384>> read_buffer;

    std::array<char, 16384>& scratch() {
        if (!read_buffer) read_buffer = std::make_unique<std::array<char, 16384>>();
        return *read_buffer;
    }
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
        return HttpError(HttpError::Kind::connection_reset, fmt::format("the connection to {} was closed while {} ({})",
                                                                        url.origin(), doing, ec.message()));
    }
    return HttpError(HttpError::Kind::protocol, fmt::format("{} while {}: {}", url.origin(), doing, ec.message()));
}

// A response's parser: Beast's HTTP/1 parser with the status and fields stored straight
// into our Response and the body copied into the caller's buffer, as
// http::response_parser<buffer_body> did, without Beast's field container (an allocation
// and a tree insertion per field, only for us to copy the fields out of it). What it
// stores is what that parser gave: the reason, or the status's standard phrase when the
// server sent none; the fields in Beast's order (a repeated field right after the last one
// of its name); the trailer fields of a chunked body left out of the head.
class ResponseParser final : public http::basic_parser<false> {
public:
    explicit ResponseParser(Response& head) : head_(head) {}

    // Where the next body bytes go (buffer_body's data and size). None: need_buffer.
    char* body_data = nullptr;
    std::size_t body_size = 0;

private:
    void on_request_impl(http::verb, beast::string_view, beast::string_view, int, beast::error_code&) override {}
    void on_response_impl(int code, beast::string_view reason, int, beast::error_code&) override {
        head_.status = static_cast<unsigned>(code);
        if (reason.empty()) reason = http::obsolete_reason(static_cast<http::status>(code));
        head_.reason.assign(reason.data(), reason.size());
    }
    void on_field_impl(http::field, beast::string_view name, beast::string_view value, beast::error_code&) override {
        if (is_header_done()) return;  // a trailer
        auto& fields = head_.headers;
        if (fields.capacity() == 0) fields.reserve(8);
        auto at = fields.end();
        for (auto it = fields.rbegin(); it != fields.rend(); ++it) {
            if (util::iequals_ascii(it->first, std::string_view(name.data(), name.size()))) {
                at = it.base();
                break;
            }
        }
        fields.emplace(at, std::string(name.data(), name.size()), std::string(value.data(), value.size()));
    }
    void on_header_impl(beast::error_code& ec) override { ec = {}; }
    void on_body_init_impl(const boost::optional<std::uint64_t>&, beast::error_code& ec) override { ec = {}; }
    std::size_t on_body_impl(beast::string_view body, beast::error_code& ec) override { return put_body(body, ec); }
    void on_chunk_header_impl(std::uint64_t, beast::string_view, beast::error_code&) override {}
    std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view body, beast::error_code& ec) override {
        return put_body(body, ec);
    }
    void on_finish_impl(beast::error_code& ec) override { ec = {}; }

    // buffer_body's reader: as much as fits, need_buffer when not all of it did.
    std::size_t put_body(beast::string_view body, beast::error_code& ec) {
        if (!body_data) {
            ec = http::error::need_buffer;
            return 0;
        }
        const std::size_t n = std::min(body.size(), body_size);
        std::memcpy(body_data, body.data(), n);
        body_data += n;
        body_size -= n;
        if (n == body.size()) ec = {};
        else ec = http::error::need_buffer;
        return n;
    }

    Response& head_;
};

// Marks an attempt that failed before any byte of a response came back on a connection
// taken from the pool: the server had closed it while idle, so the request may be sent
// again on a new connection whatever its method (nothing of it was processed).
struct StaleConnection {};

// The last request checked (checked_url): a client sends its requests to one URL with the
// same method and fields over and over (an MCP client to its server's endpoint), and
// parsing the URL and checking each field's characters again cost more than comparing
// them with the last ones. On the engine's loop, as every call of the client.
struct LastChecked {
    bool checked = false;  // method and headers hold a request that passed check_request
    std::string method;
    Headers headers;
    std::string url_text;
    Url url;
};

}  // namespace

std::optional<std::string> Response::header(std::string_view name) const {
    if (auto value = header_view(name)) return std::string(*value);
    return std::nullopt;
}

std::optional<std::string_view> Response::header_view(std::string_view name) const {
    for (const auto& [n, v] : headers) {
        if (util::iequals_ascii(n, name)) return std::string_view(v);
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
            if (ec)
                throw std::invalid_argument(fmt::format("cannot load the CA file {}: {}", options.ca_file, ec.message()));
        }
        if (options.insecure_skip_verify) {
            spdlog::warn(
                "downstream HTTPS: certificate verification is OFF (insecure_skip_verify); any server can "
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
    LastChecked last_checked;
    // Connections open per pool key (busy and idle), and the attempts waiting for one.
    struct OriginSlots {
        std::size_t open = 0;
        std::vector<net::steady_timer*> waiting;
    };
    std::map<std::string, OriginSlots> slots;
    Stats stats;
    std::minstd_rand jitter{std::random_device{}()};

    // ------------------------------------------------------------------ the pool

    // Shared by an attempt and its cancellation callback (same thread).
    struct Watch {
        Connection* conn = nullptr;
        tcp::resolver* resolver = nullptr;
        net::steady_timer* timer = nullptr;  // waiting for a connection or for DNS
        bool cancelled = false;
        std::uint64_t reads = 0;  // reads of the body that waited on the connection (read_piece)
    };

    static std::string pool_key(const Url& url, const ProxyEndpoint* proxy) {
        return proxy ? url.origin() + " via " + proxy->display() : url.origin();
    }

    // The pool key and Host field of the last origin requested (through which proxy): a
    // client sends to one origin over and over, and building both strings per request
    // cost more than comparing the URL's parts with the last ones.
    struct LastOrigin {
        bool valid = false;
        bool https = false;
        bool ipv6_literal = false;
        unsigned short port = 0;
        std::string host;
        const ProxyEndpoint* proxy = nullptr;
        std::string pool_key;
        std::string authority;
    };
    LastOrigin last_origin;

    // The request line and fields (request_head) of the last request, and what they were
    // built from: an MCP client POSTs to its server with the same ones over and over, and
    // comparing them cost less than building the text again. The text is shared with the
    // requests still being written.
    struct LastHead {
        std::string method;
        std::string target;
        std::string authority;
        std::string proxy_authorization;
        Headers headers;
        std::shared_ptr<const std::string> text;
    };
    LastHead last_head;

    std::shared_ptr<const std::string> head_for(const Request& request, std::string_view target,
                                                std::string_view authority, std::string_view proxy_authorization) {
        auto& last = last_head;
        if (last.text && last.method == request.method && last.target == target && last.authority == authority &&
            last.proxy_authorization == proxy_authorization && last.headers == request.headers)
            return last.text;
        last.text.reset();
        auto text = std::make_shared<const std::string>(
            request_head(request, target, authority, options.user_agent, proxy_authorization));
        last.method = request.method;
        last.target = target;
        last.authority = authority;
        last.proxy_authorization = proxy_authorization;
        last.headers = request.headers;
        last.text = text;
        return text;
    }

    // Valid until the next call (on the loop's thread, between two awaits).
    const LastOrigin& origin_of(const Url& url, const ProxyEndpoint* proxy) {
        auto& last = last_origin;
        if (last.valid && last.https == url.https && last.port == url.port && last.proxy == proxy &&
            last.ipv6_literal == url.ipv6_literal && last.host == url.host)
            return last;
        last.valid = false;
        last.pool_key = pool_key(url, proxy);
        last.authority = url.authority();
        last.https = url.https;
        last.ipv6_literal = url.ipv6_literal;
        last.port = url.port;
        last.host = url.host;
        last.proxy = proxy;
        last.valid = true;
        return last;
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

    // Wakes one attempt waiting for a connection to `key` (it looks again at the pool and
    // the count).
    void wake_one(const std::string& key) {
        auto it = slots.find(key);
        if (it == slots.end() || it->second.waiting.empty()) return;
        it->second.waiting.front()->cancel();
        it->second.waiting.erase(it->second.waiting.begin());
    }

    // A place in `key`'s limit, released (and a waiter woken) when the last owner lets go.
    std::shared_ptr<void> take_slot(const std::string& key) {
        ++slots[key].open;
        std::weak_ptr<Impl> owner = weak_from_this();
        return std::shared_ptr<void>(nullptr, [owner, key](void*) {
            auto self = owner.lock();
            if (!self) return;
            auto it = self->slots.find(key);
            if (it == self->slots.end()) return;
            --it->second.open;
            if (it->second.open == 0 && it->second.waiting.empty()) self->slots.erase(it);
            else self->wake_one(key);
        });
    }

    // A pooled connection, or a place to open a new one (and nothing in the other).
    using Acquired = std::pair<std::unique_ptr<Connection>, std::shared_ptr<void>>;

    // What the pool has at once; nullopt when `key` has max_connections_per_origin open and
    // none idle.
    std::optional<Acquired> try_acquire(const std::string& key, bool fresh_only) {
        if (!fresh_only) {
            if (auto conn = take_idle(key)) return Acquired(std::move(conn), nullptr);
        }
        if (slots[key].open < std::max<std::size_t>(options.max_connections_per_origin, 1)) {
            return Acquired(nullptr, take_slot(key));
        }
        return std::nullopt;
    }

    // try_acquire(), waiting (within the deadline) until it has something.
    Task<Acquired> acquire(const std::string& key, const Url& url, bool fresh_only, Clock::time_point deadline,
                           Watch& watch) {
        for (;;) {
            if (auto acquired = try_acquire(key, fresh_only)) co_return std::move(*acquired);
            net::steady_timer timer(io);
            if (deadline == Clock::time_point::max()) timer.expires_at(net::steady_timer::time_point::max());
            else timer.expires_at(deadline);
            slots[key].waiting.push_back(&timer);
            watch.timer = &timer;
            auto [ec] = co_await timer.async_wait(use_task);
            watch.timer = nullptr;
            std::erase(slots[key].waiting, &timer);
            if (watch.cancelled) throw OperationCancelled();
            if (!ec) {
                throw HttpError(HttpError::Kind::timeout,
                                fmt::format("{}: all {} connections to {} stayed busy until the deadline",
                                            url.display(), options.max_connections_per_origin, url.origin()));
            }
        }
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
        wake_one(key);
    }

    // ------------------------------------------------------------------ one attempt

    // Clock::time_point::max() stands for "no deadline" (streams).
    static void expire(beast::tcp_stream& stream, Clock::time_point deadline) {
        if (deadline == Clock::time_point::max()) stream.expires_never();
        else stream.expires_at(deadline);
    }

    Task<std::unique_ptr<Connection>> open(const Url& url, const ProxyEndpoint* proxy, Clock::time_point deadline,
                                           std::shared_ptr<void> slot, Watch& watch) {
        const std::string& host = proxy ? proxy->host : url.host;
        const unsigned short port = proxy ? proxy->port : url.port;
        const auto started = Clock::now();
        // Name lookup, connect, tunnel and TLS handshake: setting up the connection, bounded
        // by the connect timeout and the call's deadline.
        const auto connect_by = std::min(deadline, started + options.connect_timeout);
        tcp::resolver resolver(io);
        watch.resolver = &resolver;
        // getaddrinfo cannot be interrupted; cancelling the resolver abandons its answer.
        net::steady_timer dns_timer(io, connect_by);
        bool dns_timed_out = false;
        dns_timer.async_wait([&resolver, &dns_timed_out](const boost::system::error_code& ec) {
            if (ec) return;
            dns_timed_out = true;
            resolver.cancel();
        });
        auto [rec, endpoints] = co_await resolver.async_resolve(host, std::to_string(port), use_task);
        dns_timer.cancel();
        watch.resolver = nullptr;
        if (watch.cancelled) throw OperationCancelled();
        if (dns_timed_out) {
            throw HttpError(HttpError::Kind::timeout,
                            fmt::format("cannot resolve {}{} in time", proxy ? "the proxy " : "", host));
        }
        if (rec) {
            throw HttpError(proxy ? HttpError::Kind::proxy : HttpError::Kind::dns,
                            fmt::format("cannot resolve {}{}: {}", proxy ? "the proxy " : "", host, rec.message()));
        }
        auto conn = std::make_unique<Connection>();
        conn->slot = std::move(slot);
        conn->plain.emplace(io);
        watch.conn = conn.get();
        conn->plain->expires_at(connect_by);
        auto [cec, endpoint] = co_await resume_with<beast::error_code, tcp::endpoint>(
            [stream = &*conn->plain, results = endpoints](auto handler) {
                stream->async_connect(results, std::move(handler));
            });
        if (watch.cancelled) throw OperationCancelled();
        if (cec == beast::error::timeout) {
            const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(connect_by - started);
            throw HttpError(HttpError::Kind::timeout,
                            fmt::format("no connection to {} within {} ms", proxy ? proxy->display() : url.origin(),
                                        waited.count()));
        }
        if (cec) {
            throw HttpError(proxy ? HttpError::Kind::proxy : HttpError::Kind::connect,
                            fmt::format("cannot connect to {}: {}",
                                        proxy ? "the proxy " + proxy->display() : url.display(), cec.message()));
        }
        beast::error_code ignored;
        conn->plain->socket().set_option(tcp::no_delay(true), ignored);
        ++stats.connections_opened;

        if (proxy && url.https) co_await tunnel(*conn, url, *proxy, connect_by, watch);
        if (url.https) co_await handshake(*conn, url, connect_by, watch);
        co_return conn;
    }

    // CONNECT host:port through the proxy; the TLS session then runs inside the tunnel.
    Task<void> tunnel(Connection& conn, const Url& url, const ProxyEndpoint& proxy, Clock::time_point deadline,
                      Watch& watch) {
        const std::string authority = (url.ipv6_literal ? "[" + url.host + "]" : url.host) + ":" +
                                      std::to_string(url.port);
        http::request<http::empty_body> req{http::verb::connect, authority, 11};
        req.set(http::field::host, authority);
        req.set(http::field::user_agent, options.user_agent);
        if (!proxy.authorization.empty()) req.set(http::field::proxy_authorization, proxy.authorization);
        expire(*conn.plain, deadline);
        auto [wec, wn] = co_await http::async_write(*conn.plain, req, use_task);
        if (watch.cancelled) throw OperationCancelled();
        if (wec)
            throw HttpError(HttpError::Kind::proxy,
                            fmt::format("the proxy {} failed: {}", proxy.display(), wec.message()));
        beast::flat_buffer buffer;
        http::response_parser<http::empty_body> parser;
        parser.skip(true);  // a 2xx answer to CONNECT has no body: the tunnel follows
        auto [rec, rn] = co_await http::async_read_header(*conn.plain, buffer, parser, use_task);
        if (watch.cancelled) throw OperationCancelled();
        if (rec)
            throw HttpError(HttpError::Kind::proxy,
                            fmt::format("the proxy {} failed: {}", proxy.display(), rec.message()));
        const unsigned status = parser.get().result_int();
        if (status < 200 || status > 299) {
            throw HttpError(HttpError::Kind::proxy,
                            fmt::format("the proxy {} refused the tunnel to {}: HTTP {}{}", proxy.display(),
                                        url.origin(), status, status == 407 ? " (proxy credentials needed)" : ""));
        }
        if (buffer.size() > 0) {
            throw HttpError(HttpError::Kind::proxy,
                            fmt::format("the proxy {} sent data before the tunnel opened", proxy.display()));
        }
    }

    Task<void> handshake(Connection& conn, const Url& url, Clock::time_point deadline, Watch& watch) {
        conn.tls.emplace(std::move(*conn.plain), tls_context);
        conn.plain.reset();
        watch.conn = &conn;
        SSL* ssl_handle = conn.tls->native_handle();
        // SNI names the host (never an IP literal); the certificate must be for that host.
        if (!is_ip_literal(url.host)) SSL_set_tlsext_host_name(ssl_handle, url.host.c_str());
        if (!options.insecure_skip_verify) conn.tls->set_verify_callback(ssl::host_name_verification(url.host));
        expire(conn.lowest(), deadline);
        auto [ec] = co_await resume_with<beast::error_code>([stream = &*conn.tls](auto handler) {
            stream->async_handshake(ssl::stream_base::client, std::move(handler));
        });
        if (watch.cancelled) throw OperationCancelled();
        if (!ec) co_return;
        if (ec == beast::error::timeout) {
            throw HttpError(HttpError::Kind::timeout,
                            fmt::format("the TLS handshake with {} did not finish in time", url.origin()));
        }
        std::string detail = ec.message();
        const long verify = SSL_get_verify_result(ssl_handle);
        if (verify != X509_V_OK) {
            detail = fmt::format("certificate verify failed: {}", X509_verify_cert_error_string(verify));
        }
        throw HttpError(HttpError::Kind::tls, fmt::format("TLS handshake with {} failed: {}", url.origin(), detail));
    }

    struct Limits {
        std::size_t max_bytes;  // 0: none (streams count on their own)
        Clock::time_point deadline;
    };

    // One request and its whole response on one connection (pooled or new): fetch's attempt.
    static Task<Response> attempt(std::shared_ptr<Impl> self, Url url, Request request, Limits limits,
                                  CancelToken* cancel) {
        Watch watch;
        WatchRegistration registration(cancel, watch);
        auto reader = co_await self->start(url, request, limits, watch);
        Response response = std::move(reader->head);
        while (co_await self->read_piece(*reader, response.body, watch)) {}
        self->release(std::move(reader), watch);
        co_return response;
    }

    // Ties a cancel token to a Watch for as long as it lives: firing the token closes
    // whatever the attempt is waiting on.
    struct WatchRegistration {
        WatchRegistration(CancelToken* cancel, Watch& watch) : cancel(cancel) {
            if (!cancel) return;
            id = cancel->on_cancel([&watch]() {
                watch.cancelled = true;
                if (watch.resolver) watch.resolver->cancel();
                if (watch.timer) watch.timer->cancel();
                if (watch.conn) watch.conn->close();
            });
            if (watch.cancelled) throw OperationCancelled(cancel->reason());
        }
        ~WatchRegistration() {
            if (cancel && id) cancel->remove(id);
        }
        WatchRegistration(const WatchRegistration&) = delete;
        WatchRegistration& operator=(const WatchRegistration&) = delete;
        CancelToken* cancel;
        CancelToken::CallbackId id = 0;
    };

    // A response on its connection: the header has been read, the body is read piece by
    // piece with the size cap and decoding applied as the bytes arrive.
    struct BodyReader {
        Url url;
        std::string pool_key;
        std::unique_ptr<Connection> conn;
        beast::flat_buffer buffer;
        Response head;  // before the parser, which fills it
        ResponseParser parser{head};
        std::unique_ptr<BodyDecoder> decoder;
        std::size_t max_bytes = 0;
        std::size_t raw = 0;
        bool done = false;
        bool timed = false;  // the connection's stream has an expiry (read_parsed)
    };

    // Reads into the parser as Beast's http::async_read_some does (`header`: as
    // async_read_header, until the header is done): the bytes in the buffer parsed first,
    // the socket read while the parser needs more, the end of the stream mapped alike. On
    // a plain connection without a deadline it reads the socket itself: Beast's tcp_stream
    // would add a composed operation, its executors' work and a posted completion to each
    // read, for a timeout there is none of. With a deadline, or TLS, Beast reads.
    Task<beast::error_code> read_parsed(Connection& conn, BodyReader& reader, bool header) {
        auto& buffer = reader.buffer;
        auto& parser = reader.parser;
        beast::error_code ec;
        if (conn.tls || reader.timed) {
            if (header) {
                if (conn.tls)
                    std::tie(ec, std::ignore) = co_await http::async_read_header(*conn.tls, buffer, parser, use_task);
                else
                    std::tie(ec, std::ignore) = co_await http::async_read_header(*conn.plain, buffer, parser, use_task);
            } else {
                if (conn.tls)
                    std::tie(ec, std::ignore) = co_await http::async_read_some(*conn.tls, buffer, parser, use_task);
                else std::tie(ec, std::ignore) = co_await http::async_read_some(*conn.plain, buffer, parser, use_task);
            }
            co_return ec;
        }
        auto& socket = conn.plain->socket();
        do {
            ec = http::error::need_more;
            if (buffer.size() > 0) buffer.consume(parser.put(buffer.data(), ec));
            while (ec == http::error::need_more) {
                const std::size_t size = beast::read_size(buffer, 65536);
                if (size == 0) co_return http::error::buffer_overflow;
                std::optional<beast::flat_buffer::mutable_buffers_type> room;
                try {
                    room = buffer.prepare(size);
                } catch (const std::length_error&) {
                    co_return http::error::buffer_overflow;
                }
                auto [rec, n] = co_await socket.async_read_some(*room, use_task);
                buffer.commit(n);
                if (rec == net::error::eof) {
                    if (!parser.got_some()) co_return http::error::end_of_stream;
                    beast::error_code eof;  // the body ends with the connection
                    parser.put_eof(eof);
                    co_return eof;
                }
                if (rec) co_return rec;
                buffer.consume(parser.put(buffer.data(), ec));
            }
        } while (header && !ec && !parser.is_header_done());
        co_return ec;
    }

    // Sends the request and reads the response header. A pooled connection the server
    // closed while it was idle is replaced once.
    Task<std::unique_ptr<BodyReader>> start(const Url& url, const Request& request, const Limits& limits, Watch& watch) {
        for (int fresh_try = 0;; ++fresh_try) {
            try {
                co_return co_await send_request(url, request, limits, watch, fresh_try > 0);
            } catch (const StaleConnection&) {
                if (fresh_try > 0)
                    throw HttpError(HttpError::Kind::connection_reset, url.origin() + " closed the connection");
            }
            if (watch.cancelled) throw OperationCancelled();
        }
    }

    Task<std::unique_ptr<BodyReader>> send_request(const Url& url, const Request& request, const Limits& limits,
                                                   Watch& watch, bool fresh_only) {
        const ProxyEndpoint* proxy = options.proxy.proxy_for(url.https, url.host, url.port);
        auto reader = std::make_unique<BodyReader>();
        // Beast reads as much as the buffer has room for, and an empty one only 512 bytes:
        // a 2 KiB answer took five reads, each a pass through the event loop.
        reader->buffer.reserve(kReadChunk);
        reader->url = url;
        reader->pool_key = origin_of(url, proxy).pool_key;
        reader->max_bytes = limits.max_bytes;
        // Mostly the pool has a connection at once: no coroutine for acquire() then.
        auto acquired = try_acquire(reader->pool_key, fresh_only);
        if (!acquired) acquired = co_await acquire(reader->pool_key, url, fresh_only, limits.deadline, watch);
        auto [pooled, slot] = std::move(*acquired);
        const bool reused = pooled != nullptr;
        if (reused) {
            ++stats.connections_reused;
            reader->conn = std::move(pooled);
        } else {
            reader->conn = co_await open(url, proxy, limits.deadline, std::move(slot), watch);
        }
        Connection& conn = *reader->conn;
        watch.conn = &conn;

        // Through a plain-http proxy the request line names the whole URL.
        const bool via_proxy = proxy && !url.https;
        const auto request_line_and_fields = head_for(request, via_proxy ? url.origin() + url.target : url.target,
                                                      origin_of(url, proxy).authority,
                                                      via_proxy ? std::string_view(proxy->authorization)
                                                                : std::string_view());
        const std::string end_of_head = content_length_and_end(request);
        const std::array<net::const_buffer, 3> message = {net::buffer(*request_line_and_fields),
                                                          net::buffer(end_of_head), net::buffer(request.body)};

        expire(conn.lowest(), limits.deadline);
        reader->timed = limits.deadline != Clock::time_point::max();
        auto& parser = reader->parser;
        parser.body_limit(boost::none);  // the cap is ours, counted on raw and decoded bytes
        parser.header_limit(64 * 1024);
        if (request.method == "HEAD") parser.skip(true);

        ++stats.requests_sent;
        beast::error_code ec;
        // (A deadline already past is left to the asynchronous write, which reports it.)
        if (conn.tls || (limits.deadline != Clock::time_point::max() && Clock::now() >= limits.deadline)) {
            if (conn.tls) std::tie(ec, std::ignore) = co_await net::async_write(*conn.tls, message, use_task);
            else std::tie(ec, std::ignore) = co_await net::async_write(*conn.plain, message, use_task);
        } else {
            // What the socket takes at once is written here, without waiting: a request is
            // small and the socket's buffer mostly empty, and an asynchronous write costs a
            // pass through the loop and its handlers even when it completes at once. The rest
            // (if any) is written asynchronously, within the deadline as before. The errors
            // are those the asynchronous write reports (Asio's sockets do not raise SIGPIPE).
            auto& socket = conn.plain->socket();
            if (!socket.non_blocking()) socket.non_blocking(true, ec);
            std::size_t written = 0;
            if (!ec) written = socket.write_some(message, ec);
            if (ec == net::error::would_block || ec == net::error::try_again) ec = {};
            if (!ec && written < net::buffer_size(message)) {
                beast::buffers_suffix<std::array<net::const_buffer, 3>> rest(message);
                rest.consume(written);
                std::tie(ec, std::ignore) = co_await net::async_write(*conn.plain, rest, use_task);
            }
        }
        if (!ec) ec = co_await read_parsed(conn, *reader, true);
        if (watch.cancelled) throw OperationCancelled();
        if (ec) {
            conn.close();
            const bool nothing_back = reader->buffer.size() == 0 && !parser.got_some();
            if (reused && nothing_back && ec != beast::error::timeout) throw StaleConnection{};
            throw io_error(ec, url, "sending the request or reading the response header");
        }

        Response& head = reader->head;  // status, reason and fields: the parser's
        head.attempts = 1;
        if (auto announced = parser.content_length(); limits.max_bytes && announced && *announced > limits.max_bytes) {
            conn.close();
            throw too_large_announced(url, *announced, limits.max_bytes);
        }
        try {
            reader->decoder = std::make_unique<BodyDecoder>(head.header_view("Content-Encoding").value_or(""),
                                                            limits.max_bytes ? limits.max_bytes : SIZE_MAX);
        } catch (const DecodeError& e) {
            conn.close();
            throw HttpError(HttpError::Kind::protocol, fmt::format("{}: {}", url.display(), e.what()));
        }
        co_return reader;
    }

    static ResponseTooLarge too_large_announced(const Url& url, std::uint64_t announced, std::size_t limit) {
        return ResponseTooLarge(fmt::format("{} announced a response of {} bytes, over the limit of {}", url.display(),
                                            announced, limit),
                                static_cast<std::size_t>(announced), limit, false);
    }

    // Reads what the connection has of the body and appends it, decoded, to `out`.
    // Returns false once the body has ended.
    Task<bool> read_piece(BodyReader& reader, std::string& out, Watch& watch) {
        if (reader.done) co_return false;
        Connection& conn = *reader.conn;
        auto& parser = reader.parser;
        if (!parser.is_done()) {
            auto& scratch = conn.scratch();
            parser.body_data = scratch.data();
            parser.body_size = scratch.size();
            beast::error_code ec = http::error::need_more;
            if (reader.buffer.size() > 0) {
                // Bytes already read (with the header, mostly the whole body) are parsed here,
                // as Beast's read would parse them first; Beast would then post its
                // completion, a pass through the loop for bytes we had.
                const std::size_t used = parser.put(reader.buffer.data(), ec);
                reader.buffer.consume(used);
            }
            if (ec == http::error::need_more) {
                ++watch.reads;
                ec = co_await read_parsed(conn, reader, false);
            }
            if (watch.cancelled) throw OperationCancelled();
            if (ec && ec != http::error::need_buffer) {
                conn.close();
                throw io_error(ec, reader.url, "reading the response body");
            }
            const std::size_t got = scratch.size() - parser.body_size;
            reader.raw += got;
            bool within = !reader.max_bytes || reader.raw <= reader.max_bytes;
            try {
                if (within) within = reader.decoder->feed(std::string_view(scratch.data(), got), out);
            } catch (const DecodeError& e) {
                conn.close();
                throw HttpError(HttpError::Kind::protocol, fmt::format("{}: {}", reader.url.display(), e.what()));
            }
            if (!within) {
                conn.close();
                throw ResponseTooLarge(fmt::format("{} sent a response over {} bytes", reader.url.display(),
                                                   reader.max_bytes),
                                       std::max(reader.raw, reader.decoder->decoded_bytes()), reader.max_bytes, true);
            }
            if (!parser.is_done()) co_return true;
        }
        try {
            reader.decoder->finish();
        } catch (const DecodeError& e) {
            conn.close();
            throw HttpError(HttpError::Kind::protocol, fmt::format("{}: {}", reader.url.display(), e.what()));
        }
        reader.done = true;
        co_return false;
    }

    // One pass through the loop. read_some() and read_all() end with it when they did not
    // wait on the connection (the body's end or its error were known already): they have
    // always completed from the loop, never inside the call, as an Asio operation does,
    // and their callers' order of events depends on it (a stream that ended with the bytes
    // open() read is noticed after what the caller does next).
    Task<void> next_turn() { co_await net::post(io, use_task); }

    // A reader whose body was read to the end gives its connection back to the pool (when
    // the server keeps it alive); any other is closed.
    void release(std::unique_ptr<BodyReader> reader, Watch& watch) {
        watch.conn = nullptr;
        if (!reader || !reader->conn) return;
        if (reader->done && reader->parser.keep_alive()) give_back(reader->pool_key, std::move(reader->conn));
        else reader->conn->close();
    }
};

namespace {

bool is_redirect(unsigned status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

void check_request(const Request& request) {
    if (!util::is_http_token(request.method)) throw HttpError(HttpError::Kind::invalid_request, "invalid HTTP method");
    for (const auto& [name, value] : request.headers) {
        if (!util::is_http_token(name)) {
            throw HttpError(HttpError::Kind::invalid_request,
                            fmt::format("\"{}\" is not a valid header name", util::sanitize_for_message(name, 60)));
        }
        if (util::has_control_chars(value)) {
            throw HttpError(HttpError::Kind::invalid_request,
                            fmt::format("the value of header {} has control characters", name));
        }
        for (std::string_view reserved : {"host", "content-length", "transfer-encoding", "connection"}) {
            if (util::iequals_ascii(name, reserved)) {
                throw HttpError(HttpError::Kind::invalid_request,
                                fmt::format("the {} header is set by the client", name));
            }
        }
    }
}

// The request's URL, parsed, once its method and headers passed check_request; `last` keeps
// the last method and headers that passed and the last URL parsed (HttpClient::Impl::last_checked).
Url checked_url(const Request& request, LastChecked& last) {
    if (!last.checked || request.method != last.method || request.headers != last.headers) {
        last.checked = false;
        check_request(request);
        last.method = request.method;
        last.headers = request.headers;
        last.checked = true;
    }
    if (!last.url_text.empty() && request.url == last.url_text) return last.url;
    try {
        Url url = parse_url(request.url);
        last.url_text = request.url;
        last.url = url;
        return url;
    } catch (const std::invalid_argument& e) {
        throw HttpError(HttpError::Kind::invalid_request, fmt::format("cannot use the URL: {}", e.what()));
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

Task<Response> HttpClient::fetch_untraced(Request request, CallOptions options) {
    auto self = impl_;
    Url url = checked_url(request, self->last_checked);
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
            response = co_await Impl::attempt(self, url, request, limits, options.cancel);
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
                    if (auto h = response.header("Retry-After"))
                        retry_after = parse_retry_after(*h, std::chrono::system_clock::now());
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
                throw HttpError(HttpError::Kind::protocol, fmt::format("{} answered HTTP {} without a usable Location",
                                                                       url.display(), response.status));
            }
            if (next->origin() != origin) {
                throw HttpError(HttpError::Kind::redirect_refused,
                                fmt::format("{} redirected to {}, another host: not followed", url.display(),
                                            next->origin()));
            }
            ++redirects;
            url = *next;
            if (response.status == 303 || ((response.status == 301 || response.status == 302) &&
                                           request.method != "GET" && request.method != "HEAD")) {
                request.method = request.method == "HEAD" ? "HEAD" : "GET";
                request.body.clear();
            }
            continue;
        }
        response.attempts = attempts;
        co_return response;
    }
}

// ---------------------------------------------------------------------- streams

struct ResponseStream::State {
    State(std::shared_ptr<HttpClient::Impl> client, CancelToken* cancel) : client(std::move(client)), cancel(cancel) {}
    ~State() {
        if (reader) client->release(std::move(reader), watch);
    }
    std::shared_ptr<HttpClient::Impl> client;
    CancelToken* cancel;
    HttpClient::Impl::Watch watch;
    std::optional<HttpClient::Impl::WatchRegistration> registration;
    std::unique_ptr<HttpClient::Impl::BodyReader> reader;
    Response head;
    std::optional<std::uint64_t> content_length;
    // StreamOptions::read_ahead: the body open() read (or the error it met), not handed out
    // yet; and the URL for messages once the reader is gone.
    bool has_ahead = false;
    std::string ahead;
    std::exception_ptr ahead_error;
    Url ahead_url;

    // What was read ahead, all at once (read_all): the body, or its error rethrown.
    std::string take_ahead() {
        has_ahead = false;
        if (auto error = std::exchange(ahead_error, nullptr)) std::rethrow_exception(error);
        return std::move(ahead);
    }
};

ResponseStream::ResponseStream(std::shared_ptr<State> state) : state_(std::move(state)) {}
ResponseStream::~ResponseStream() = default;
const Response& ResponseStream::head() const { return state_->head; }
std::optional<std::uint64_t> ResponseStream::content_length() const { return state_->content_length; }

Task<std::unique_ptr<ResponseStream>> HttpClient::open_untraced(Request request, StreamOptions options) {
    Url url = checked_url(request, impl_->last_checked);
    auto state = std::make_shared<ResponseStream::State>(impl_, options.cancel);
    state->registration.emplace(options.cancel, state->watch);
    const Impl::Limits limits{0, options.deadline.value_or(Clock::time_point::max())};
    state->reader = co_await state->client->start(url, request, limits, state->watch);
    auto& reader = *state->reader;
    state->head = std::move(reader.head);  // the reader is done with it
    if (auto length = reader.parser.content_length()) state->content_length = *length;
    if (options.body_deadline) reader.conn->lowest().expires_at(*options.body_deadline);
    else reader.conn->lowest().expires_never();
    reader.timed = options.body_deadline.has_value();
    if (state->content_length && *state->content_length <= options.read_ahead && reader.decoder->identity()) {
        // Read as read_some() would (the body's deadline, cancellation), its error kept
        // for the reads: open() succeeded whatever the body does.
        state->has_ahead = true;
        try {
            while (state->reader) {
                const bool more = co_await state->client->read_piece(*state->reader, state->ahead, state->watch);
                if (more) continue;
                state->ahead_url = std::move(state->reader->url);
                state->client->release(std::move(state->reader), state->watch);
            }
        } catch (...) {
            state->ahead_error = std::current_exception();
        }
    }
    co_return std::unique_ptr<ResponseStream>(new ResponseStream(std::move(state)));
}

Task<std::optional<std::string>> ResponseStream::read_some() {
    if (state_->watch.cancelled) throw OperationCancelled(state_->cancel ? state_->cancel->reason() : "cancelled");
    if (state_->has_ahead) {
        // The bytes read ahead first, then the error that ended them (as pieces would come).
        if (!state_->ahead.empty()) co_return std::exchange(state_->ahead, std::string());
        state_->take_ahead();  // empty by now: rethrows the error, if any
        co_return std::nullopt;
    }
    // The state is held while the piece is read: the stream may be dropped meanwhile.
    const auto state = state_;
    const auto reads = state->watch.reads;
    std::string piece;
    std::exception_ptr error;
    try {
        while (state->reader && piece.empty()) {
            const bool more = co_await state->client->read_piece(*state->reader, piece, state->watch);
            if (!more) state->client->release(std::move(state->reader), state->watch);
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (state->watch.reads == reads) co_await state->client->next_turn();
    if (error) std::rethrow_exception(error);
    if (piece.empty()) co_return std::nullopt;
    co_return piece;
}

void ResponseStream::limit(std::size_t limit) {
    if (auto& reader = state_->reader) {
        reader->max_bytes = reader->raw + limit;
        if (reader->decoder) reader->decoder->set_limit(reader->decoder->decoded_bytes() + limit);
    }
}

Task<std::string> ResponseStream::read_all(std::size_t limit) {
    const auto url = state_->reader ? state_->reader->url : state_->ahead_url;
    if (state_->content_length && *state_->content_length > limit) {
        state_->client->release(std::move(state_->reader), state_->watch);  // unread: closed
        throw HttpClient::Impl::too_large_announced(url, *state_->content_length, limit);
    }
    // The cap is applied while the bytes are read and decoded, not to what they became: one
    // piece of a gzip body (16 KiB on the wire) can inflate to megabytes, which would all be
    // in memory before a check on the assembled body saw them.
    this->limit(limit);
    if (state_->watch.cancelled) throw OperationCancelled(state_->cancel ? state_->cancel->reason() : "cancelled");
    // Read ahead: its length was announced, and checked against `limit` above.
    if (state_->has_ahead) co_return state_->take_ahead();
    const auto state = state_;  // held while reading, as in read_some()
    const auto reads = state->watch.reads;
    std::string body;
    std::optional<std::size_t> over;  // set once the body passed the limit
    std::exception_ptr error;
    try {
        while (state->reader) {
            const bool more = co_await state->client->read_piece(*state->reader, body, state->watch);
            if (!more) state->client->release(std::move(state->reader), state->watch);
            if (body.size() > limit) {
                over = body.size();
                break;
            }
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (state->watch.reads == reads) co_await state->client->next_turn();
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const ResponseTooLarge& e) {
            over = e.size;
        }
    }
    if (over) {
        state->client->release(std::move(state->reader), state->watch);  // unread: closed
        throw ResponseTooLarge(fmt::format("{} sent a response over {} bytes", url.display(), limit), *over, limit,
                               true);
    }
    co_return body;
}

}  // namespace toolport::http_client
