// The Streamable HTTP client transport, on the downstream HTTP client (so http and https,
// proxies and pooled connections come from one place). Every message is a POST to the
// server's endpoint; a request's reply comes back as a JSON body or as an SSE stream that
// may also carry the server's notifications and requests about it (and that is resumed
// with Last-Event-ID when the server ends it early). After the handshake a GET stream
// carries messages that belong to no request. In the stateless revision there is no
// session and no GET stream; requests carry the header mirrors of stateless_http_headers.hpp.
#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "async/cancel_token.hpp"
#include "async/control_signal.hpp"
#include "client/client_transport.hpp"
#include "client/http_authorizer.hpp"
#include "client/http_transport_common.hpp"
#include "client/sse_parser.hpp"
#include "client/stateless_http_headers.hpp"
#include "client/wire_payload.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/http_text.hpp"
#include "util/json_release.hpp"
#include "util/sanitize.hpp"
#include "util/session_id.hpp"

namespace toolport::client {

namespace {

namespace hc = toolport::http_client;
using namespace std::chrono_literals;
using util::starts_with_ascii_nocase;

// Connections kept open between requests. A gateway forwards as many calls at once as its
// clients make: with 4 kept, 16 concurrent calls opened a new connection every few calls
// (0.2-0.5 per call) and left thousands in TIME_WAIT (bench/run_gateway_bench.sh).
constexpr std::size_t kMaxIdleConnections = 64;
// Requests in flight each hold a connection while their reply streams (and the GET stream
// one more): the limit is for runaways, not for ordinary concurrency.
constexpr std::size_t kMaxConnections = 256;
constexpr std::size_t kMaxErrorBodyBytes = 64 * 1024;
constexpr auto kDefaultRetry = 1000ms;  // when a stream the server ended named no "retry"
// How often one request is sent again after the authorizer obtained new credentials for
// it: a server that refuses every token must not make the client authorize forever (the
// MCP spec asks clients to bound step-up retries).
constexpr int kMaxAuthorizationRetries = 3;

// The server answered with a non-2xx status.
struct HttpStatusError : TransportError {
    HttpStatusError(unsigned status, const std::string& what) : TransportError(what), status(status) {}
    unsigned status;
};

// A server's session id may be longer than the 256 bytes Toolport's own server allows,
// within reason (util::valid_session_id checks the characters).
constexpr std::size_t kMaxSessionIdBytes = 1024;

hc::ClientOptions downstream_options(const HttpClientOptions& options) {
    hc::ClientOptions o;
    o.ca_file = options.ca_file;
    o.insecure_skip_verify = options.insecure_skip_verify;
    o.connect_timeout = options.connect_timeout;
    o.max_idle_per_origin = kMaxIdleConnections;
    o.max_connections_per_origin = kMaxConnections;
    return o;
}

// One HTTP request and its response: a POST, a GET stream, a DELETE. Firing `cancel`
// (abandon(), close()) closes its connection and ends whatever awaits it with
// OperationCancelled.
struct Exchange {
    CancelToken cancel;
    std::unique_ptr<hc::ResponseStream> response;
    std::string method;         // of the JSON-RPC request a POST carries ("" otherwise)
    HeaderList mirror_headers;  // the stateless revision's Mcp-* headers of that POST

    bool abandoned() const { return cancel.cancelled(); }
    unsigned status() const { return response->head().status; }
    // Valid while `response` is.
    std::string_view header(std::string_view name) const { return response->head().header_view(name).value_or(""); }
};

struct Impl : std::enable_shared_from_this<Impl> {
    Impl(AsioExecutor& executor, HttpClientOptions opts, hc::Url parsed)
        : executor(executor),
          options(std::move(opts)),
          url(std::move(parsed)),
          http(executor, downstream_options(options)) {}

    AsioExecutor& executor;
    HttpClientOptions options;
    hc::Url url;
    hc::HttpClient http;
    ClientTransport::Handlers handlers;
    std::string session_id;
    std::string protocol_version;
    bool stateless = false;
    StatelessHttpHeaders mirrors;
    bool opened = false;
    bool closing = false;
    std::string ended_reason;  // the server ended the session
    // The exchanges in flight, cancelled by stop_all(). A vector, not a set: one is added
    // and removed per message, and a set's node and rebalancing cost more than a scan of
    // the few in flight.
    std::vector<std::shared_ptr<Exchange>> live;
    void forget(const std::shared_ptr<Exchange>& ex) {
        auto it = std::find(live.begin(), live.end(), ex);
        if (it == live.end()) return;
        if (it != live.end() - 1) *it = std::move(live.back());
        live.pop_back();
    }
    std::map<std::string, std::shared_ptr<Exchange>> by_request;  // key: request id as JSON text

    std::string describe() const { return url.display(); }

    // -------------------------------------------------------------- requests

    hc::Request request_for(std::string method, std::string body, const std::string& last_event_id) const {
        hc::Request request;
        request.url = options.url;
        request.method = std::move(method);
        auto& h = request.headers;
        // Room for every field added here and in exchange() (mirrored fields, authorization):
        // growing the vector field by field allocated it four times for a POST.
        h.reserve(8 + options.headers.size());
        if (request.method == "POST") {
            h.emplace_back("Content-Type", "application/json");
            h.emplace_back("Accept", "application/json, text/event-stream");
            request.body = std::move(body);
        } else if (request.method == "GET") {
            h.emplace_back("Accept", "text/event-stream");
        }
        if (!session_id.empty()) h.emplace_back("Mcp-Session-Id", session_id);
        if (!protocol_version.empty()) h.emplace_back("MCP-Protocol-Version", protocol_version);
        if (!last_event_id.empty()) h.emplace_back("Last-Event-ID", last_event_id);
        add_caller_headers(options, h);
        return request;
    }

    // Sends one request on `ex` and waits for the response header (the body is left for
    // the caller). `bounded`: the whole exchange must finish within acknowledge_timeout;
    // otherwise the wait is the client's to bound (request timeouts abandon the exchange).
    Task<void> exchange(Exchange& ex, std::string method, std::string body, const std::string& last_event_id,
                        bool bounded) {
        hc::StreamOptions stream_options;
        stream_options.cancel = &ex.cancel;
        // A JSON reply comes with its length: read with the header, in the same pass. Never
        // more than a caller here would read of any answer (a reply, an error's body).
        stream_options.read_ahead = std::min(options.max_message_bytes, kMaxErrorBodyBytes);
        if (bounded) {
            stream_options.deadline = std::chrono::steady_clock::now() + options.acknowledge_timeout;
            stream_options.body_deadline = stream_options.deadline;
        }
        ex.response.reset();
        hc::Request request = request_for(std::move(method), std::move(body), last_event_id);
        if (request.method == "POST") {
            for (const auto& header : ex.mirror_headers) request.headers.push_back(header);
        }
        if (options.authorizer) {
            // Per request: a DPoP proof names the method and is never reused (RFC 9449 §4.2).
            auto authorization = co_await options.authorizer->request_headers(request.method, options.url);
            for (auto& header : authorization) request.headers.push_back(std::move(header));
        }
        try {
            ex.response = co_await http.open(std::move(request), stream_options);
        } catch (const hc::HttpError& e) {
            if (e.kind == hc::HttpError::Kind::timeout && bounded) {
                throw TransportError(
                    fmt::format("{} did not answer within {} ms", describe(), options.acknowledge_timeout.count()));
            }
            throw TransportError(e.what());
        }
    }

    // The next bytes of the response body; nullopt at its end. An event stream may also
    // end with the connection (servers close SSE streams without the last chunk); any
    // other body cut short is an error.
    Task<std::optional<std::string>> read_piece(Exchange& ex, bool event_stream) {
        try {
            co_return co_await ex.response->read_some();
        } catch (const hc::HttpError& e) {
            if (event_stream && e.kind == hc::HttpError::Kind::connection_reset) co_return std::nullopt;
            throw TransportError(fmt::format("connection to {} lost: {}", describe(), e.what()));
        }
    }

    // The whole body, refused on its announced size before any of it is read and counted
    // while reading otherwise (chunked bodies): ResponseTooLarge.
    Task<std::string> read_body(Exchange& ex, std::size_t limit) {
        try {
            co_return co_await ex.response->read_all(limit);
        } catch (const hc::HttpError& e) {
            throw TransportError(fmt::format("connection to {} lost: {}", describe(), e.what()));
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
            // "method" and "id" each found once, by a view.
            bool has_method = false;
            if (message.is_object()) {
                const auto& members = message.get_ref<const Json::object_t&>();
                has_method = members.find(std::string_view("method")) != members.end();
                if (!awaited.empty() && !has_method) {
                    auto id = members.find(std::string_view("id"));
                    if (id != members.end() && protocol::id_key(id->second) == awaited) {
                        replied = true;
                        learn_tool_headers(awaited, message);
                    }
                }
            }
            if (closing) continue;
            if (!awaited.empty() && handlers.on_message_about && has_method) {
                handlers.on_message_about(std::move(message), awaited);
            } else {
                handlers.on_message(std::move(message));
            }
        }
        return replied;
    }

    // A tools/list result says which tool arguments later tools/call POSTs mirror in headers.
    void learn_tool_headers(const std::string& awaited, const Json& reply) {
        if (!stateless) return;
        auto it = by_request.find(awaited);
        if (it == by_request.end() || it->second->method != "tools/list") return;
        auto result = reply.find("result");
        if (result != reply.end() && result->is_object() && result->contains("tools"))
            mirrors.learn_tools((*result)["tools"]);
    }

    // Reads SSE events until the reply to `awaited` arrived (true) or the stream ended.
    Task<bool> pump_events(Exchange& ex, SseParser& sse, const std::string& awaited, bool& saw_event) {
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
    // client raises it as RpcError); anything else is a TransportError.
    Task<void> reject_status(Exchange& ex, std::string_view method, const std::string& awaited) {
        const unsigned status = ex.status();
        std::string detail;
        try {
            std::string body = co_await read_body(ex, kMaxErrorBodyBytes);
            auto payload = decode_wire_payload(body);
            if (payload.error.empty() && payload.messages.size() == 1) {
                const auto& m = payload.messages.front();
                if (m.is_object() && m.contains("error") && m["error"].is_object() && !awaited.empty() &&
                    m.contains("id") && protocol::id_key(m["id"]) == awaited) {
                    deliver(body, awaited);
                    co_return;
                }
            }
            detail = error_body_detail(body);
        } catch (const TransportError&) {
            // The status is what matters; the body was only a better explanation.
        } catch (const ResponseTooLarge&) {
            // Likewise when the body is over kMaxErrorBodyBytes.
        }
        std::string what = fmt::format("{} answered HTTP {} {}", describe(), status, ex.response->head().reason);
        if (!detail.empty()) what += ": " + util::sanitize_for_message(detail, 300);
        if (status == 401) what += " (is the bearer token right?)";
        if (status == 404 && !session_id.empty() && method != "DELETE") {
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
        auto id = ex.response->head().header_view("Mcp-Session-Id");
        if (!id) return;
        if (!util::valid_session_id(*id, kMaxSessionIdBytes)) {
            throw TransportError(fmt::format("{} sent a malformed Mcp-Session-Id header", describe()));
        }
        if (session_id.empty()) session_id.assign(*id);
    }

    // POSTs one message. For a request (awaited = its id as JSON text), reads its reply:
    // a JSON body, or an SSE stream resumed with Last-Event-ID until the reply arrived.
    static Task<void> post(std::shared_ptr<Impl> self, std::shared_ptr<Exchange> ex, std::string body,
                           std::string awaited) {
        const bool is_request = !awaited.empty();
        for (int retries = 0;; ++retries) {
            co_await self->exchange(*ex, "POST", self->options.authorizer ? body : std::move(body), {}, !is_request);
            const unsigned refused = ex->status();
            if ((refused != 401 && refused != 403) || !self->options.authorizer || retries == kMaxAuthorizationRetries)
                break;
            std::string challenge(ex->header("WWW-Authenticate"));
            std::string nonce(ex->header("DPoP-Nonce"));
            ex->response.reset();  // its body explains nothing the challenge does not
            if (!co_await self->options.authorizer->refused_request(refused, std::move(challenge), std::move(nonce))) {
                throw HttpStatusError(refused, fmt::format("{} answered HTTP {} and authorizing again cannot help",
                                                           self->describe(), refused));
            }
        }
        self->remember_session(*ex);
        const unsigned status = ex->status();
        if (status < 200 || status > 299) {
            co_await self->reject_status(*ex, "POST", awaited);
            co_return;
        }

        const std::string_view type = ex->header("Content-Type");  // the response lives on below
        if (status == 202 || ex->response->content_length() == std::uint64_t{0}) {
            co_await self->read_body(*ex, kMaxErrorBodyBytes);
            co_return;  // accepted; a request's reply (if any) comes on the GET stream
        }
        if (starts_with_ascii_nocase(type, "application/json")) {
            std::string json = co_await self->read_body(*ex, self->options.max_message_bytes);
            if (!self->deliver(json, awaited) && is_request) {
                // Waiting for the timeout would not bring the answer either.
                throw TransportError(
                    fmt::format("{} answered the request with a JSON body that holds no response to it",
                                self->describe()));
            }
            co_return;
        }
        if (!starts_with_ascii_nocase(type, "text/event-stream")) {
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
            ex->response.reset();
            co_await self->executor.sleep(sse.retry().value_or(kDefaultRetry), &ex->cancel);
            co_await self->exchange(*ex, "GET", {}, sse.last_event_id(), false);
            const unsigned resumed = ex->status();
            if (resumed < 200 || resumed > 299) {
                co_await self->reject_status(*ex, "GET", awaited);
                co_return;
            }
            if (!starts_with_ascii_nocase(ex->header("Content-Type"), "text/event-stream")) {
                throw TransportError(
                    fmt::format("{} answered a stream resumption without an event stream", self->describe()));
            }
        }
    }

    // The GET stream for messages outside requests, reopened (with Last-Event-ID) when
    // the server ends it, until close().
    static Task<void> listen(std::shared_ptr<Impl> self) {
        std::string last_event_id;
        int failures = 0;
        while (!self->closing && self->ended_reason.empty()) {
            auto ex = std::make_shared<Exchange>();
            self->live.push_back(ex);
            std::chrono::milliseconds pause = kDefaultRetry;
            bool stop = false;
            try {
                co_await self->exchange(*ex, "GET", {}, last_event_id, false);
                const unsigned status = ex->status();
                if (status == 405) {
                    spdlog::debug("{} offers no stream for messages outside requests (HTTP 405)", self->describe());
                    stop = true;
                } else {
                    if (status < 200 || status > 299) co_await self->reject_status(*ex, "GET", {});
                    if (!starts_with_ascii_nocase(ex->header("Content-Type"), "text/event-stream")) {
                        throw TransportError(fmt::format("{} answered GET without an event stream", self->describe()));
                    }
                    SseParser sse(self->options.max_message_bytes);
                    bool saw_event = false;
                    co_await self->pump_events(*ex, sse, {}, saw_event);
                    if (saw_event) failures = 0;
                    last_event_id = sse.last_event_id();
                    pause = sse.retry().value_or(kDefaultRetry);
                }
            } catch (const OperationCancelled&) {
                stop = true;  // close() or the transport's end
            } catch (const HttpStatusError& e) {
                // A client error (401, 403, 404, ...) will not go away by asking again.
                if (e.status >= 400 && e.status < 500 && e.status != 408 && e.status != 429) {
                    if (!self->closing) spdlog::warn("{}; no stream for server messages", e.what());
                    stop = true;
                } else {
                    ++failures;
                    pause = std::min<std::chrono::milliseconds>(kDefaultRetry * (1 << std::min(failures, 5)), 30s);
                }
            } catch (const std::exception& e) {
                if (self->closing || !self->ended_reason.empty()) {
                    stop = true;
                } else {
                    ++failures;
                    pause = std::min<std::chrono::milliseconds>(kDefaultRetry * (1 << std::min(failures, 5)), 30s);
                    spdlog::debug("{}: stream for server messages failed ({}); retrying in {} ms", self->describe(),
                                  e.what(), pause.count());
                }
            }
            ex->response.reset();
            if (stop || self->closing) {
                self->forget(ex);
                co_return;
            }
            try {
                co_await self->executor.sleep(pause, &ex->cancel);
            } catch (const OperationCancelled&) {
                self->forget(ex);
                co_return;
            }
            self->forget(ex);
        }
    }

    static Task<void> delete_session(std::shared_ptr<Impl> self) {
        Exchange ex;
        try {
            co_await self->exchange(ex, "DELETE", {}, {}, true);
            co_await self->read_body(ex, kMaxErrorBodyBytes);
            // 405: the server does not let clients end sessions; it will expire it.
            spdlog::debug("{}: DELETE of the session answered HTTP {}", self->describe(), ex.status());
        } catch (const std::exception& e) {
            spdlog::debug("{}: could not delete the session: {}", self->describe(), e.what());
        }
    }
};

class HttpTransport final : public ClientTransport {
public:
    HttpTransport(AsioExecutor& executor, HttpClientOptions options, hc::Url url)
        : impl_(std::make_shared<Impl>(executor, std::move(options), std::move(url))) {}
    ~HttpTransport() override {
        impl_->closing = true;
        stop_all(*impl_);
    }

    Task<void> open(Handlers handlers) override {
        impl_->handlers = std::move(handlers);
        impl_->opened = true;
        co_return;
    }

    Task<void> send(Json message) override { return send_impl(impl_, std::move(message)); }

    void abandon(const protocol::RequestId& id) override {
        auto it = impl_->by_request.find(protocol::id_key(id));
        if (it == impl_->by_request.end()) return;
        auto ex = it->second;
        impl_->by_request.erase(it);
        ex->cancel.cancel("abandoned");
    }

    void use_protocol_version(const std::string& version) override { impl_->protocol_version = version; }

    void use_stateless_revision(const std::string& version) override {
        impl_->protocol_version = version;
        impl_->stateless = true;
        impl_->session_id.clear();  // a failed initialize may have left one; it is not ours to use
    }
    bool notifications_reach_server() const override { return !impl_->stateless; }

    void handshake_done() override {
        if (impl_->options.listen && !impl_->closing) spawn(Impl::listen(impl_), [](std::exception_ptr) {});
    }

    Task<void> close() override { return close_impl(impl_); }
    // Every exchange is cancelled now (its connection closed); what awaits them ends when
    // the loop next runs.
    void terminate() override {
        impl_->closing = true;
        stop_all(*impl_);
    }
    std::string describe() const override { return impl_->describe(); }

private:
    // Ends every exchange in flight and closes the pooled connections.
    static void stop_all(Impl& impl) {
        auto live = std::move(impl.live);
        impl.live.clear();
        impl.by_request.clear();
        for (const auto& ex : live) ex->cancel.cancel("closed");
        impl.http.close_idle();
    }

    static Task<void> send_impl(std::shared_ptr<Impl> self, Json message) {
        if (!self->ended_reason.empty()) throw TransportError(self->ended_reason);
        if (self->closing || !self->opened)
            throw TransportError("the connection to " + self->describe() + " is closed");
        std::string awaited;
        const Json* method = nullptr;
        if (message.is_object()) {
            // Each member found once, by a view (every lookup by name is a walk of the tree).
            const auto& members = message.get_ref<const Json::object_t&>();
            auto m = members.find(std::string_view("method"));
            auto id = members.find(std::string_view("id"));
            if (m != members.end() && id != members.end()) {
                method = &m->second;
                awaited = protocol::id_key(id->second);
            }
        }
        auto ex = std::make_shared<Exchange>();
        if (!awaited.empty()) {
            ex->method = method->is_string() ? method->get_ref<const std::string&>() : "";
            if (self->stateless) ex->mirror_headers = self->mirrors.for_request(message);
        }
        self->live.push_back(ex);
        if (!awaited.empty()) self->by_request[awaited] = ex;
        std::string body = protocol::serialize(message);
        util::release_json(message);  // written: freed without nlohmann's heap stack
        std::exception_ptr error;
        try {
            co_await Impl::post(self, ex, std::move(body), awaited);
        } catch (...) {
            error = std::current_exception();
        }
        self->forget(ex);
        if (auto it = self->by_request.find(awaited); it != self->by_request.end() && it->second == ex) {
            self->by_request.erase(it);
        }
        // An abandoned exchange (timeout, cancellation, close) has nothing to report.
        if (error && !ex->abandoned()) std::rethrow_exception(error);
    }

    static Task<void> close_impl(std::shared_ptr<Impl> self) {
        if (self->closing) co_return;
        self->closing = true;
        stop_all(*self);
        if (!self->session_id.empty() && self->ended_reason.empty()) co_await Impl::delete_session(self);
        self->http.close_idle();
    }

    std::shared_ptr<Impl> impl_;
};

}  // namespace

std::unique_ptr<ClientTransport> make_http_transport(AsioExecutor& executor, HttpClientOptions options) {
    hc::Url url = check_http_client_options(options);
    return std::make_unique<HttpTransport>(executor, std::move(options), std::move(url));
}

}  // namespace toolport::client
