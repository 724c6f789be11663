// HttpClient: the one HTTP/1.1 client of every source that calls a web API (the tango
// pack, REST catalogs, OpenAPI tools), of auth (JWKS, introspection, token endpoints) and
// of the MCP client's HTTP transports. It runs on the engine's event loop and gives:
//
//  - https with OpenSSL: the system CA store (SSL_CERT_FILE / SSL_CERT_DIR honoured, as
//    in other OpenSSL programs) plus an optional CA file, SNI and host name checks;
//    verification is off only when the options say so, with a warning;
//  - a keep-alive pool per origin, bounded (max_connections_per_origin open at once, the
//    rest wait); asynchronous DNS; DNS, connect, TLS and reads bounded by the call's
//    deadline and cancelled with the call's CancelToken;
//  - HTTPS_PROXY / HTTP_PROXY / NO_PROXY (CONNECT tunnels for https);
//  - gzip and deflate bodies decoded, with the size cap counted on the bytes read and on
//    the decoded bytes, stopping as soon as either passes it (ResponseTooLarge);
//  - redirects followed only within the request's origin (anything else is refused, so a
//    tool's arguments cannot steer requests to other hosts);
//  - retries of idempotent requests on a reset connection or 502/503/504, with backoff,
//    jitter and Retry-After, within the deadline; every attempt is counted;
//  - open(): a response read as it arrives (server-sent events), for the MCP client.
//
//   http_client::HttpClient http(executor, options);
//   auto response = co_await http.fetch({.url = "https://tango.makegov.com/api/contracts/?limit=1",
//                                        .headers = {{"X-API-KEY", key}}},
//                                       {.deadline = ctx.deadline(), .cancel = &ctx.cancel_token()});
//
// This header is Asio-free; the network code is in http_client.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "async/task.hpp"
#include "http_client/proxy.hpp"
#include "http_client/response_too_large.hpp"

namespace toolport {
class AsioExecutor;
class CancelToken;
namespace observability {
struct TraceContext;
}
}  // namespace toolport

namespace toolport::http_client {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct Request {
    std::string method = "GET";
    std::string url;  // absolute http:// or https:// URL
    Headers headers;  // Host, Content-Length, Accept-Encoding and Connection are set by the client
    std::string body;
};

struct Response {
    unsigned status = 0;
    std::string reason;
    Headers headers;
    std::string body;  // decoded
    int attempts = 0;  // requests sent for this call: retries and redirects included

    // The first value of header `name` (case-insensitive).
    std::optional<std::string> header(std::string_view name) const;
    // The same without a copy: valid while the headers are neither changed nor destroyed.
    std::optional<std::string_view> header_view(std::string_view name) const;
};

struct CallOptions {
    // The whole call (every attempt, backoff and redirect) ends by then: HttpError timeout.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    // Fired: the connection is closed and the call ends with OperationCancelled.
    CancelToken* cancel = nullptr;
    std::size_t max_response_bytes = 0;  // 0: ClientOptions::max_response_bytes
    int max_attempts = 3;                // retries only for GET, HEAD, PUT, DELETE, OPTIONS
    int max_redirects = 5;
    // Awaited before each request is sent (a source's rate limit pacing).
    std::function<Task<void>()> before_attempt;
    // The trace the call belongs to (the serving request's span context,
    // observability/tracer.hpp; must outlive the call). With tracing on, the call is a
    // CLIENT span under it (a new trace without one); the trace context goes out in the
    // `traceparent` and `tracestate` headers, with `baggage`, tracing on or off.
    const observability::TraceContext* trace_parent = nullptr;
    std::string baggage;
    // false: no span and no trace headers. For the OTLP exporter's own requests, which
    // would otherwise make a span per export, exported in turn, without end.
    bool traced = true;
};

// For open(): a response read as it arrives.
struct StreamOptions {
    // Sending the request and receiving the response header end by then (HttpError
    // timeout). None: no limit but the connect timeout; the caller bounds the wait (for
    // example by firing `cancel`), as an MCP client waiting on a long tool call does.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    // Reading the body ends by then. None: the body may take as long as it likes (event
    // streams stay open for hours).
    std::optional<std::chrono::steady_clock::time_point> body_deadline;
    // Fired: the connection is closed and the pending open() or read ends with
    // OperationCancelled. Must outlive the stream.
    CancelToken* cancel = nullptr;
    // A body with a Content-Length up to this many bytes and no Content-Encoding is read
    // by open() itself, right after the header (0: never): read_some() and read_all() then
    // hand it out, or the error reading it met, without waiting on the connection again.
    // The same bytes and errors, one pass on the loop fewer (an MCP client's JSON replies).
    std::size_t read_ahead = 0;
    // As CallOptions::trace_parent, but a stream is a span only when given one (an MCP
    // client's streams are spans of its own, gateway/upstream_span.hpp); the span ends when
    // the response header has arrived.
    const observability::TraceContext* trace_parent = nullptr;
    std::string baggage;
};

class ResponseStream;

struct ClientOptions {
    std::string ca_file;                // trusted besides the system store
    bool insecure_skip_verify = false;  // never by default; logged as a warning
    std::size_t max_idle_per_origin = 8;
    // Connections open to one origin at once (busy and idle); a request beyond waits for
    // one to come free, within its deadline. Bounds what one busy source can do to an API.
    std::size_t max_connections_per_origin = 32;
    std::chrono::milliseconds connect_timeout{10000};
    std::chrono::milliseconds idle_timeout{60000};     // an idle pooled connection is closed after this
    std::chrono::milliseconds default_timeout{60000};  // for calls without a deadline
    std::size_t max_response_bytes = 64u << 20;
    std::string user_agent;  // empty: "toolport/<version>"
    ProxySettings proxy = ProxySettings::from_environment();
};

// A request that could not be completed. The message names the origin (never the query,
// which may hold keys) and what failed.
struct HttpError : std::runtime_error {
    enum class Kind {
        invalid_request,
        dns,
        connect,
        tls,
        timeout,
        connection_reset,
        protocol,
        redirect_refused,
        proxy
    };
    HttpError(Kind kind, const std::string& message) : std::runtime_error(message), kind(kind) {}
    Kind kind;
    // Worth trying again later (network trouble), as opposed to a request that is wrong.
    bool transient() const {
        return kind == Kind::dns || kind == Kind::connect || kind == Kind::timeout || kind == Kind::connection_reset ||
               kind == Kind::proxy;
    }
};

struct Stats {
    std::uint64_t connections_opened = 0;
    std::uint64_t connections_reused = 0;
    std::uint64_t requests_sent = 0;
};

class HttpClient {
public:
    // Throws std::invalid_argument when the CA file cannot be loaded.
    HttpClient(AsioExecutor& executor, ClientOptions options = {});
    ~HttpClient();
    HttpClient(const HttpClient&) = delete;
    HttpClient& operator=(const HttpClient&) = delete;

    // Sends `request` and reads the whole response. A status of 4xx or 5xx is a response,
    // not an error. Throws HttpError, ResponseTooLarge, OperationCancelled.
    Task<Response> fetch(Request request, CallOptions options = {});

    // Sends `request` once and returns as soon as the response header has arrived; the
    // body is then read piece by piece (server-sent events, bodies too large to hold).
    // No retries and no redirects (the caller sees every status), except that a pooled
    // connection the server had closed is replaced. Throws HttpError, OperationCancelled.
    Task<std::unique_ptr<ResponseStream>> open(Request request, StreamOptions options = {});

    Stats stats() const;
    // Closes the pooled idle connections.
    void close_idle();

private:
    friend class ResponseStream;
    struct Impl;
    // fetch() and open() without their spans (http_client_tracing.cpp).
    Task<Response> fetch_untraced(Request request, CallOptions options);
    Task<Response> fetch_traced(Request request, CallOptions options);
    Task<std::unique_ptr<ResponseStream>> open_untraced(Request request, StreamOptions options);
    Task<std::unique_ptr<ResponseStream>> open_traced(Request request, StreamOptions options);
    std::shared_ptr<Impl> impl_;
};

// A response whose header has arrived and whose body is read as it comes. A body read to
// its end gives the connection back to the pool; dropping the stream before then closes
// the connection.
class ResponseStream {
public:
    ~ResponseStream();
    ResponseStream(const ResponseStream&) = delete;
    ResponseStream& operator=(const ResponseStream&) = delete;

    // Status, reason and headers (`body` is empty; the body is read below).
    const Response& head() const;
    // The announced body length, when the response has a Content-Length.
    std::optional<std::uint64_t> content_length() const;

    // The next decoded bytes of the body (never empty); nullopt once it has ended. Throws
    // HttpError (connection_reset when the connection ends before the body does, timeout
    // past body_deadline, protocol for a corrupt encoding) and OperationCancelled.
    Task<std::optional<std::string>> read_some();
    // The rest of the body. More than `limit` decoded bytes, or an announced length over
    // it, throws ResponseTooLarge (and closes the connection).
    Task<std::string> read_all(std::size_t limit);
    // Bounds the rest of the body to `limit` bytes, counted as they are read and as they
    // are decoded: read_some() then throws ResponseTooLarge (and closes the
    // connection) past it, and a compressed piece is not inflated beyond it.
    void limit(std::size_t limit);

private:
    friend class HttpClient;
    struct State;
    explicit ResponseStream(std::shared_ptr<State> state);
    std::shared_ptr<State> state_;
};

}  // namespace toolport::http_client
