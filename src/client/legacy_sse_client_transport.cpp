// The legacy HTTP+SSE client transport (MCP 2024-11-05), on the downstream HTTP client
// like the Streamable HTTP one (so http and https, proxies and pooled connections come
// from one place). One GET stream carries everything the server says; its first event
// names the endpoint every client message is POSTed to. See legacy_sse_transport.hpp.
#include "client/legacy_sse_transport.hpp"

#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "client/http_transport_common.hpp"
#include "client/json_id_scanner.hpp"
#include "client/sse_parser.hpp"
#include "client/wire_payload.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/http_text.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

namespace hc = toolport::http_client;

constexpr std::size_t kMaxIdleConnections = 4;
// The stream holds one connection for its lifetime; POSTs hold theirs only until the
// server acknowledges them. The limit is for runaways, not for ordinary concurrency.
constexpr std::size_t kMaxConnections = 64;
// An acknowledgement says nothing useful; an error answer's body is read for its message.
constexpr std::size_t kMaxAnswerBytes = 64 * 1024;
// How much of each event is kept aside in case the event turns out too large: enough to
// read the "id" of the response it carries, which servers write before the result.
constexpr std::size_t kEventHeadBytes = 4096;

// ---------------------------------------------------------------- the stream's events

// One thing the stream delivered: an event, or, once it has ended, one that went over
// the size limit (only its beginning was kept; the rest was read and thrown away).
struct StreamItem {
    SseEvent event;                   // of an oversized event: what its first bytes held
    std::size_t oversized_bytes = 0;  // not 0: the event was too large; its size as counted here
};

// SseParser behind a size check that, unlike the parser's own, lets the stream go on
// after an oversized event: the stream is split into events here too, an event that
// grows past the limit stops being passed to the parser, and a fresh parser takes over
// after the event's end. Bytes are counted as the parser holds them (the event's lines so
// far, comments only while they are being read), never fewer, so the parser, given the
// same limit, never fails on its own. An oversized event is reported at its end, in its
// place among the others.
class BoundedEventReader {
public:
    explicit BoundedEventReader(std::size_t limit) : limit_(limit), parser_(limit) {}

    std::vector<StreamItem> feed(std::string_view bytes) {
        std::vector<StreamItem> out;
        std::size_t pos = 0;
        std::size_t unparsed = 0;  // bytes[unparsed, pos) are still to be given to the parser
        if (after_cr_ && !bytes.empty() && bytes.front() == '\n') pos = 1;  // the LF of a split CRLF
        after_cr_ = false;
        while (pos < bytes.size()) {
            const auto line_end = bytes.find_first_of("\r\n", pos);
            const auto text = bytes.substr(pos, (line_end == std::string_view::npos ? bytes.size() : line_end) - pos);
            if (!text.empty()) {
                if (line_bytes_ == 0) line_is_comment_ = text.front() == ':';
                line_bytes_ += text.size();
                read_bytes_ += text.size();
                keep_head(text);
                if (!skipping_ && event_bytes_ + line_bytes_ > limit_) {
                    parse(bytes.substr(unparsed, pos - unparsed), out);
                    skipping_ = true;
                }
            }
            if (line_end == std::string_view::npos) break;
            std::size_t next = line_end + 1;
            if (bytes[line_end] == '\r') {
                if (next == bytes.size()) {
                    after_cr_ = true;
                } else if (bytes[next] == '\n') {
                    ++next;
                }
            }
            if (line_bytes_ == 0) {  // a blank line ends the event
                if (skipping_) {
                    out.push_back(oversized_item());
                    skipping_ = false;
                    parser_ = SseParser(limit_);
                    unparsed = next;
                }
                event_bytes_ = 0;
                read_bytes_ = 0;
                head_.clear();
            } else {
                if (!line_is_comment_) event_bytes_ += line_bytes_;
                line_bytes_ = 0;
                keep_head("\n");
            }
            pos = next;
        }
        if (!skipping_) parse(bytes.substr(unparsed), out);
        return out;
    }

private:
    void parse(std::string_view bytes, std::vector<StreamItem>& out) {
        if (bytes.empty()) return;
        for (auto& event : parser_.feed(bytes)) out.push_back({std::move(event), 0});
    }

    void keep_head(std::string_view text) {
        if (head_.size() < kEventHeadBytes) head_.append(text.substr(0, kEventHeadBytes - head_.size()));
    }

    // What the kept beginning of the event says, as an event of its own.
    StreamItem oversized_item() const {
        StreamItem item;
        item.oversized_bytes = read_bytes_;
        SseParser head_parser(kEventHeadBytes * 2);
        auto events = head_parser.feed(head_ + "\n\n");  // ends the cut-off line and the event
        if (!events.empty()) item.event = std::move(events.front());
        return item;
    }

    std::size_t limit_;
    SseParser parser_;
    bool skipping_ = false;       // the event being read went over the limit
    bool after_cr_ = false;       // the last chunk ended in CR
    std::size_t line_bytes_ = 0;  // of the line being read
    bool line_is_comment_ = false;
    std::size_t event_bytes_ = 0;  // of the event's finished lines, comments left out
    std::size_t read_bytes_ = 0;   // of all the event's lines (what an oversized one is said to have)
    std::string head_;             // the event's first bytes (line ends as "\n")
};

std::string trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    return std::string(text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1));
}

// ---------------------------------------------------------------- the connection

hc::ClientOptions downstream_options(const HttpClientOptions& options) {
    hc::ClientOptions o;
    o.ca_file = options.ca_file;
    o.insecure_skip_verify = options.insecure_skip_verify;
    o.connect_timeout = options.connect_timeout;
    o.max_idle_per_origin = kMaxIdleConnections;
    o.max_connections_per_origin = kMaxConnections;
    return o;
}

struct Impl : std::enable_shared_from_this<Impl> {
    Impl(AsioExecutor& executor, HttpClientOptions opts, hc::Url url)
        : executor(executor),
          options(std::move(opts)),
          stream_url(std::move(url)),
          http(executor, downstream_options(options)),
          events(options.max_message_bytes) {}

    AsioExecutor& executor;
    HttpClientOptions options;
    hc::Url stream_url;
    hc::HttpClient http;
    ClientTransport::Handlers handlers;

    CancelToken stream_cancel;  // ends the GET stream: close(), or open() taking too long
    std::unique_ptr<hc::ResponseStream> stream;
    BoundedEventReader events;
    std::optional<hc::Url> endpoint;  // where messages go, once the server has said
    std::string endpoint_refusal;     // why the endpoint the server named is not used
    bool open_timed_out = false;
    bool opened = false;
    bool closing = false;
    std::string ended_reason;  // the server ended the stream (and with it the session)
    // Requests sent whose responses have not arrived (ids as JSON text): an oversized
    // event is a response that someone waits for only when its id is here.
    std::set<std::string> awaited;
    std::set<std::shared_ptr<CancelToken>> posts;  // in flight, cancelled by close()

    std::string describe() const { return stream_url.display(); }

    // The connection is over. Before open() has succeeded, open() reports the reason
    // itself; afterwards the client hears it once through on_closed.
    void end(std::string reason) {
        if (!ended_reason.empty() || closing) return;
        ended_reason = std::move(reason);
        stream_cancel.cancel("ended");
        if (opened && handlers.on_closed) handlers.on_closed(ended_reason);
    }

    // -------------------------------------------------------------- reading the stream

    hc::Request stream_request() const {
        hc::Request request;
        request.url = options.url;
        request.headers = {{"Accept", "text/event-stream"}, {"Cache-Control", "no-cache"}};
        add_caller_headers(options, request.headers);
        return request;
    }

    // GET the stream and read it up to the endpoint event. Throws TransportError.
    Task<void> connect_stream() {
        hc::StreamOptions stream_options;
        stream_options.deadline = std::chrono::steady_clock::now() + options.connect_timeout;
        stream_options.cancel = &stream_cancel;
        try {
            stream = co_await http.open(stream_request(), stream_options);
        } catch (const hc::HttpError& e) {
            if (e.kind == hc::HttpError::Kind::timeout) throw TransportError(no_answer_in_time());
            throw TransportError(e.what());
        }
        const auto& head = stream->head();
        if (head.status < 200 || head.status > 299) co_await refuse_status();
        const std::string type = head.header("Content-Type").value_or("");
        if (!util::starts_with_ascii_nocase(type, "text/event-stream")) {
            throw TransportError(fmt::format(
                "{} answered GET with Content-Type \"{}\", not an event stream (is it a legacy HTTP+SSE endpoint?)",
                describe(), util::sanitize_for_message(type, 80)));
        }
        while (!endpoint) {
            if (!ended_reason.empty()) throw TransportError(ended_reason);
            if (!endpoint_refusal.empty()) throw TransportError(endpoint_refusal);
            if (!co_await read_once()) {
                throw TransportError(fmt::format("{} ended the event stream before naming its endpoint", describe()));
            }
        }
    }

    Task<void> refuse_status() {
        const unsigned status = stream->head().status;
        std::string detail;
        try {
            detail = error_body_detail(co_await stream->read_all(kMaxAnswerBytes));
        } catch (const std::exception&) {
            // The status is what matters; the body was only a better explanation.
        }
        std::string what = fmt::format("{} answered HTTP {} {}", describe(), status, stream->head().reason);
        if (!detail.empty()) what += ": " + util::sanitize_for_message(detail, 300);
        if (status == 401) what += " (is the bearer token right?)";
        if (status == 404 || status == 405) what += " (is it a legacy HTTP+SSE endpoint?)";
        throw TransportError(what);
    }

    std::string no_answer_in_time() const {
        return fmt::format("{} {} within {} ms", describe(), stream ? "sent no endpoint event" : "did not answer",
                           options.connect_timeout.count());
    }

    // Reads what the stream has next and acts on it. False once the stream has ended.
    Task<bool> read_once() {
        std::optional<std::string> piece;
        try {
            piece = co_await stream->read_some();
        } catch (const hc::HttpError& e) {
            throw TransportError(fmt::format("connection to {} lost: {}", describe(), e.what()));
        }
        if (!piece) co_return false;
        for (auto& item : events.feed(*piece)) {
            if (closing || !ended_reason.empty()) break;
            take(item);
        }
        co_return true;
    }

    void take(StreamItem& item) {
        if (item.oversized_bytes > 0) {
            take_oversized(item);
        } else if (item.event.type == "endpoint") {
            take_endpoint(item.event.data);
        } else if (item.event.type == "message") {
            deliver(item.event.data);
        }
        // Other event types mean nothing in this transport.
    }

    void take_endpoint(std::string_view data) {
        if (endpoint) {
            spdlog::debug("{} named its endpoint again; the first one stays", describe());
            return;
        }
        const std::string uri = trim(data);
        auto resolved = hc::resolve_location(stream_url, uri);
        if (!resolved) {
            endpoint_refusal = fmt::format("{} named an endpoint that is not a usable http(s) URI: \"{}\"", describe(),
                                           util::sanitize_for_message(uri, 120));
        } else if (resolved->origin() != stream_url.origin()) {
            // Messages (and the bearer token) go only where the stream came from.
            endpoint_refusal = fmt::format(
                "{} named an endpoint of another origin ({}); refused, as the endpoint must "
                "be of the stream's origin ({})",
                describe(), resolved->origin(), stream_url.origin());
        } else {
            endpoint = std::move(resolved);
        }
    }

    void deliver(std::string_view text) {
        if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return;
        auto payload = decode_wire_payload(text);
        if (!payload.error.empty()) {
            spdlog::warn("{} sent a message that is not JSON-RPC ({}); ignored", describe(), payload.error);
            return;
        }
        for (auto& message : payload.messages) {
            if (message.is_object() && !message.contains("method") && message.contains("id")) {
                awaited.erase(protocol::id_key(message["id"]));
            }
            if (closing || !ended_reason.empty()) return;
            handlers.on_message(std::move(message));
        }
    }

    // An event over max_message_bytes. When it is the response to a request we sent, that
    // request fails now rather than at its timeout (through on_oversized; without it, the
    // connection ends). Its id is read from the event's beginning; when that does not tell
    // and requests are waiting, the event may be the answer to one of them, and waiting
    // would not bring it either: the connection ends. Anything else is skipped.
    void take_oversized(const StreamItem& item) {
        const std::size_t limit = options.max_message_bytes;
        const std::string too_large = fmt::format("{} sent an event over the {}-byte message limit ({} bytes)",
                                                  describe(), limit, item.oversized_bytes);
        if (item.event.type != "message") {
            if (!endpoint) {
                end(too_large + " before naming its endpoint");
            } else {
                spdlog::warn("{}: a \"{}\" event; skipped", too_large, util::sanitize_for_message(item.event.type, 40));
            }
            return;
        }
        if (item.event.data.empty()) {
            spdlog::warn("{}: a comment, or no data in its first bytes; skipped", too_large);
            return;
        }
        JsonIdScanner head;
        head.feed(item.event.data);
        const auto& id = head.id();
        if (id && !head.has_method()) {
            if (awaited.erase(id->dump()) == 0) {
                spdlog::debug("{}: a response nobody waits for; skipped", too_large);
            } else if (handlers.on_oversized) {
                handlers.on_oversized(*id, item.oversized_bytes, limit);
            } else {
                end(fmt::format("{}: the response to request {}", too_large, util::sanitize_for_message(id->dump(), 40)));
            }
        } else if (!id && !head.has_method() && !awaited.empty()) {
            end(too_large + ", whose id comes too late in it to tell which request it answers");
        } else {
            spdlog::warn("{}; skipped", too_large);
        }
    }

    // The stream after open(), until it ends or close() ends it.
    static Task<void> pump(std::shared_ptr<Impl> self) {
        std::string reason;
        try {
            while (!self->closing && self->ended_reason.empty()) {
                if (!co_await self->read_once()) {
                    reason = fmt::format("{} ended the event stream (the session is over)", self->describe());
                    break;
                }
            }
        } catch (const OperationCancelled&) {
            // close(), or end() after an oversized response
        } catch (const std::exception& e) {
            reason = e.what();
        }
        self->stream.reset();
        if (!reason.empty()) self->end(std::move(reason));
    }

    // -------------------------------------------------------------- sending

    // POSTs one message to the endpoint and waits for the acknowledgement.
    Task<void> post(std::string body, CancelToken& cancel) {
        hc::Request request;
        request.method = "POST";
        request.url = endpoint->origin() + endpoint->target;
        request.headers = {{"Content-Type", "application/json"}};
        add_caller_headers(options, request.headers);
        request.body = std::move(body);
        hc::CallOptions call;
        call.deadline = std::chrono::steady_clock::now() + options.acknowledge_timeout;
        call.cancel = &cancel;
        call.max_response_bytes = kMaxAnswerBytes;
        hc::Response response;
        try {
            response = co_await http.fetch(std::move(request), call);
        } catch (const hc::HttpError& e) {
            if (e.kind == hc::HttpError::Kind::timeout) {
                throw TransportError(fmt::format("{} did not acknowledge a message within {} ms", endpoint->display(),
                                                 options.acknowledge_timeout.count()));
            }
            throw TransportError(e.what());
        }
        if (response.status >= 200 && response.status <= 299) co_return;
        std::string what = fmt::format("{} answered HTTP {} {}", endpoint->display(), response.status, response.reason);
        if (auto detail = error_body_detail(response.body); !detail.empty()) {
            what += ": " + util::sanitize_for_message(detail, 300);
        }
        if (response.status == 401) what += " (is the bearer token right?)";
        throw TransportError(what);
    }
};

class LegacySseTransport final : public ClientTransport {
public:
    LegacySseTransport(AsioExecutor& executor, HttpClientOptions options, hc::Url url)
        : impl_(std::make_shared<Impl>(executor, std::move(options), std::move(url))) {}
    ~LegacySseTransport() override { stop(*impl_); }

    Task<void> open(Handlers handlers) override { return open_impl(impl_, std::move(handlers)); }
    Task<void> send(Json message) override { return send_impl(impl_, std::move(message)); }
    void abandon(const protocol::RequestId& id) override { impl_->awaited.erase(protocol::id_key(id)); }

    Task<void> close() override {
        stop(*impl_);
        co_return;
    }
    void terminate() override { stop(*impl_); }

    std::string describe() const override { return impl_->describe(); }

private:
    // Ends the stream (the server ends the session with it) and every POST in flight.
    static void stop(Impl& impl) {
        if (impl.closing) return;
        impl.closing = true;
        impl.stream_cancel.cancel("closed");
        auto posts = std::move(impl.posts);
        impl.posts.clear();
        for (const auto& cancel : posts) cancel->cancel("closed");
        impl.http.close_idle();
    }

    static Task<void> open_impl(std::shared_ptr<Impl> self, Handlers handlers) {
        if (self->opened || self->closing || self->stream_cancel.cancelled()) {
            throw TransportError("the connection to " + self->describe() + " can be opened only once");
        }
        self->handlers = std::move(handlers);
        // One limit for everything up to the endpoint event: connecting, the answer's
        // header, and the event itself.
        std::weak_ptr<Impl> weak = self;
        auto stop_timer = self->executor.schedule_after(self->options.connect_timeout, [weak]() {
            auto impl = weak.lock();
            if (!impl || impl->endpoint) return;
            impl->open_timed_out = true;
            impl->stream_cancel.cancel("no endpoint in time");
        });
        std::exception_ptr error;
        try {
            co_await self->connect_stream();
        } catch (...) {
            error = std::current_exception();
        }
        stop_timer();
        if (error) {
            const bool timed_out = self->open_timed_out;
            std::string no_answer = self->no_answer_in_time();
            self->stream.reset();
            self->stream_cancel.cancel("open failed");
            self->http.close_idle();
            if (timed_out) throw TransportError(no_answer);
            if (self->closing) {
                throw TransportError("the connection to " + self->describe() + " was closed while opening");
            }
            std::rethrow_exception(error);
        }
        self->opened = true;
        spdlog::debug("{}: messages go to {}", self->describe(), self->endpoint->display());
        spawn(Impl::pump(self), [](std::exception_ptr) {});
    }

    static Task<void> send_impl(std::shared_ptr<Impl> self, Json message) {
        if (!self->ended_reason.empty()) throw TransportError(self->ended_reason);
        if (self->closing || !self->opened) {
            throw TransportError("the connection to " + self->describe() + " is closed");
        }
        std::string awaited;
        if (message.is_object() && message.contains("method") && message.contains("id")) {
            awaited = protocol::id_key(message["id"]);
            self->awaited.insert(awaited);
        }
        auto cancel = std::make_shared<CancelToken>();
        self->posts.insert(cancel);
        std::exception_ptr error;
        try {
            co_await self->post(protocol::serialize(message), *cancel);
        } catch (...) {
            error = std::current_exception();
        }
        self->posts.erase(cancel);
        if (!error) co_return;
        if (!awaited.empty()) self->awaited.erase(awaited);
        // Cancelled by close(): the client fails what is pending itself.
        if (cancel->cancelled()) co_return;
        std::rethrow_exception(error);
    }

    std::shared_ptr<Impl> impl_;
};

}  // namespace

std::unique_ptr<ClientTransport> make_legacy_sse_transport(AsioExecutor& executor, HttpClientOptions options) {
    hc::Url url = check_http_client_options(options);
    return std::make_unique<LegacySseTransport>(executor, std::move(options), std::move(url));
}

}  // namespace toolport::client
