// The answers the endpoint hands its connections: ready replies (JSON, errors), event
// streams, a POST still waiting for its requests (PendingPost), and answers decided after
// an asynchronous step (DeferredAnswer, for Redis and token verification).
#include "transports/endpoint_state.hpp"

#include "transports/event_stream.hpp"

namespace toolport {

namespace ec = protocol::error_code;

namespace {

// HTTP status for a stateless reply: the 2026-07-28 transport maps some JSON-RPC errors.
// The reply is one serialized message, its keys sorted: an error response starts with its
// "error" member (before "id" and "jsonrpc"); a result that merely quotes an error (an
// upstream's, in structuredContent) is no error response.
unsigned stateless_status(std::string_view reply) {
    constexpr std::string_view marker = "{\"error\":{\"code\":";
    if (reply.substr(0, marker.size()) != marker) return 200;
    int code = std::atoi(std::string(reply.substr(marker.size(), 12)).c_str());
    switch (code) {
        case ec::kMethodNotFound: return 404;
        case ec::kHeaderMismatch:
        case ec::kMissingRequiredClientCapability:
        case ec::kUnsupportedProtocolVersion: return 400;
        default: return 200;
    }
}

// Whether a POST's stream says how to answer: everything replied (JSON), or something
// other than a reply to send (SSE), or the server wants the response ended (polling).
bool decided(const OutStream& out) { return out.finished() || out.has_non_response() || out.close_requested(); }

}  // namespace

// An answer waiting for the requests of a POST (see PendingAnswer).
class PendingPost final : public PendingAnswer {
public:
    struct Reply {
        HttpMethod method;
        unsigned version;
        bool keep_alive;
        bool batch;
        std::string session_id;
        bool resumable;
    };

    PendingPost(std::shared_ptr<HttpEndpoint::State> endpoint, Reply reply, std::shared_ptr<OutStream> out,
                std::function<void()> after, std::function<void()> on_client_gone)
        : endpoint_(std::move(endpoint)),
          reply_(std::move(reply)),
          out_(std::move(out)),
          after_(std::move(after)),
          on_client_gone_(std::move(on_client_gone)) {
        out_->set_waker([] {});  // claimed: no GET may attach to it meanwhile
    }
    ~PendingPost() override { release(); }

    bool ready() const override { return gone_ || endpoint_->stopping || decided(*out_); }

    void set_waker(std::function<void()> waker) override {
        waker_ = waker;
        out_->set_waker(std::move(waker));
    }

    HttpAnswer take() override {
        // Whatever this holds of the engine's goes now, on its loop: the connection may drop
        // its last reference to this object on an I/O thread.
        waker_ = nullptr;
        on_client_gone_ = nullptr;
        if (!out_) return {};
        out_->clear_waker();
        if (gone_ || endpoint_->stopping) {
            release();
            return {};
        }
        auto out = std::move(out_);
        return endpoint_->decided_answer(reply_.method, reply_.version, reply_.keep_alive, std::move(out), reply_.batch,
                                         std::move(reply_.session_id), reply_.resumable, std::exchange(after_, nullptr));
    }

    void client_gone() override {
        if (gone_) return;
        gone_ = true;
        if (auto gone = std::exchange(on_client_gone_, nullptr)) gone();
        if (waker_) waker_();
    }

private:
    // Lets go of the stream without answering: a stateful client may come back for it
    // with Last-Event-ID.
    void release() {
        if (!out_) return;
        out_->clear_waker();
        out_.reset();
        if (auto after = std::exchange(after_, nullptr)) after();
    }

    std::shared_ptr<HttpEndpoint::State> endpoint_;
    Reply reply_;
    std::shared_ptr<OutStream> out_;
    std::function<void()> after_;
    std::function<void()> on_client_gone_;
    std::function<void()> waker_;
    bool gone_ = false;
};

std::shared_ptr<endpoint::DeferredAnswer> HttpEndpoint::State::make_deferred() {
    std::weak_ptr<State> weak = weak_from_this();
    return std::make_shared<endpoint::DeferredAnswer>([weak] {
        auto self = weak.lock();
        return !self || self->stopping;
    });
}

HttpAnswer HttpEndpoint::State::deferred_answer(std::shared_ptr<endpoint::DeferredAnswer> deferred) {
    HttpAnswer answer;
    answer.pending = std::move(deferred);
    return answer;
}

HttpReply HttpEndpoint::State::json_reply(const HttpRequestView& req, unsigned status, std::string body,
                                          std::string_view session_id) {
    if (session_id.empty()) {
        return format_reply(req.version(), req.keep_alive(), status, {{"Content-Type", "application/json"}},
                            std::move(body));
    }
    return format_reply(req.version(), req.keep_alive(), status,
                        {{"Content-Type", "application/json"}, {"Mcp-Session-Id", session_id}}, std::move(body));
}

// The answer to write: counted now, written by the connection.
HttpAnswer HttpEndpoint::State::answer_with(const HttpRequestView& req, HttpReply reply) {
    count_request(req.method(), reply.status);
    HttpAnswer answer;
    answer.reply = std::move(reply);
    return answer;
}

HttpAnswer HttpEndpoint::State::rpc_error(const HttpRequestView& req, unsigned status, int code,
                                          std::string_view message, const Json& id) {
    return answer_with(req, json_reply(req, status, protocol::serialize(protocol::make_error(id, code, message))));
}

HttpAnswer HttpEndpoint::State::empty(const HttpRequestView& req, unsigned status) {
    return answer_with(req, format_reply(req.version(), req.keep_alive(), status, {}, {}));
}

HttpAnswer HttpEndpoint::State::method_not_allowed(const HttpRequestView& req, std::string_view message,
                                                   std::string_view allow) {
    auto body = protocol::serialize(protocol::make_error(nullptr, ec::kInvalidRequest, message));
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 405,
                                         {{"Content-Type", "application/json"}, {"Allow", allow}}, std::move(body)));
}

// The replies of one POST: a JSON body when everything is ready and nothing but replies
// was produced, an event stream otherwise, or an answer still pending. `after` runs once
// the replies are handed over (JSON) or the stream has ended (SSE); `on_client_gone`
// when the client leaves before.
HttpAnswer HttpEndpoint::State::write_stream(const HttpRequestView& req, std::shared_ptr<OutStream> out, bool batch,
                                             std::string session_id, bool resumable, std::function<void()> after,
                                             std::function<void()> on_client_gone) {
    if (decided(*out)) {
        return decided_answer(req.method(), req.version(), req.keep_alive(), std::move(out), batch,
                              std::move(session_id), resumable, std::move(after));
    }
    HttpAnswer answer;
    answer.pending = std::make_shared<PendingPost>(shared_from_this(),
                                                   PendingPost::Reply{req.method(), req.version(), req.keep_alive(),
                                                                      batch, std::move(session_id), resumable},
                                                   std::move(out), std::move(after), std::move(on_client_gone));
    return answer;
}

// JSON when every reply is there and nothing else was said, an event stream otherwise.
HttpAnswer HttpEndpoint::State::decided_answer(HttpMethod method, unsigned version, bool keep_alive,
                                               std::shared_ptr<OutStream> out, bool batch, std::string session_id,
                                               bool resumable, std::function<void()> after) {
    if (out->finished() && !out->has_non_response()) {
        std::string body = out->take_json_body(batch);
        out->mark_delivered(out->last_seq());
        after();
        unsigned status = resumable ? 200 : stateless_status(body);
        count_request(method, status);
        HttpAnswer answer;
        answer.reply = session_id.empty()
                           ? format_reply(version, keep_alive, status, {{"Content-Type", "application/json"}},
                                          std::move(body))
                           : format_reply(version, keep_alive, status,
                                          {{"Content-Type", "application/json"}, {"Mcp-Session-Id", session_id}},
                                          std::move(body));
        return answer;
    }
    if (resumable && shared && out->id() != 0 && !out->mirrored()) {
        if (auto it = sessions.find(session_id); it != sessions.end() && it->second->shared) {
            mirror_stream(session_id, out);
        }
    }
    EventStreamSettings settings;
    settings.session_id = std::move(session_id);
    settings.resumable = resumable;
    return event_stream(method, version, std::move(out), std::move(settings), std::move(after));
}

HttpAnswer HttpEndpoint::State::event_stream(HttpMethod method, unsigned version, std::shared_ptr<OutStream> out,
                                             EventStreamSettings settings, std::function<void()> after) {
    settings.retry = opts.sse_retry;
    count_request(method, 200);
    HttpAnswer answer;
    answer.stream = std::make_shared<EventStream>(std::move(out), version, std::move(settings), std::move(after));
    return answer;
}

}  // namespace toolport
