// The legacy HTTP+SSE transport (2024-11-05): GET /sse opens a session that lives as long
// as its event stream, POST /messages?sessionId= feeds it; every reply goes on the stream.
#include "transports/endpoint_state.hpp"

#include <fmt/format.h>

#include "async/executor.hpp"
#include "server/session.hpp"
#include "transports/batch.hpp"
#include "transports/event_stream.hpp"

namespace toolport {

namespace ec = protocol::error_code;

HttpAnswer HttpEndpoint::State::handle_legacy_sse(const HttpRequestView& req, const Credential& credential) {
    if (sessions.size() >= opts.max_sessions) {
        return rpc_error(req, 503, ec::kInvalidRequest, "Service Unavailable: too many sessions");
    }
    auto session = create_session(true, principal_of(req, credential), view_of(req, credential));
    std::string sid = session->id();
    // The first event tells the client where to POST its messages. The legacy session
    // lives exactly as long as its stream.
    EventStreamSettings settings;
    settings.prelude = fmt::format("event: endpoint\ndata: /messages?sessionId={}\n\n", sid);
    std::weak_ptr<State> weak = weak_from_this();
    return event_stream(req.method(), req.version(), session->standalone(), std::move(settings), [weak, sid]() {
        auto self = weak.lock();
        if (self && !self->stopping) self->drop_session(sid, "its event stream closed");
    });
}

HttpAnswer HttpEndpoint::State::handle_legacy_post(const HttpRequestView& req, const Credential& credential) {
    auto target = req.target();
    std::string sid;
    if (auto q = target.find("sessionId="); q != std::string_view::npos) {
        auto v = target.substr(q + 10);
        sid = std::string(v.substr(0, v.find('&')));
    }
    auto session = sid.empty() ? nullptr : find_session(sid, req, credential, true);
    if (!session) return rpc_error(req, 404, ec::kInvalidRequest, "Session not found: open GET /sse first");
    PostBody body;
    if (auto error = read_post_body(req, body)) return std::move(*error);
    if (auto refusal = tool_scope_refusal(req, credential, body)) return std::move(*refusal);
    session->last_active = executor.now();
    take_client_headers(req, credential, session->mcp->caller());
    if (body.parsed.is_batch) {
        session->mcp->reject(
            batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision()) : std::nullopt));
    } else {
        // Every reply, errors included, goes on the session's event stream.
        feed_all(*session->mcp, body);
    }
    return answer_with(req,
                       format_reply(req.version(), req.keep_alive(), 202, {{"Content-Type", "text/plain"}}, "Accepted"));
}

}  // namespace toolport
