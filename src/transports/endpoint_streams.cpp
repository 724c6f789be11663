// GET at the MCP path (the session's standalone stream, or a response stream resumed with
// Last-Event-ID, from another replica's mirror for a shared session) and DELETE (the end
// of a session, everywhere when it is shared).
#include "transports/endpoint_state.hpp"

#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "transports/event_stream.hpp"
#include "transports/http_policy.hpp"

namespace toolport {

namespace ec = protocol::error_code;

HttpAnswer HttpEndpoint::State::handle_get(const HttpRequestView& req, const Credential& credential,
                                           const Reentry& reentry) {
    if (!http_policy::accepts(req.header("Accept"), "text/event-stream")) {
        return rpc_error(req, 406, ec::kInvalidRequest, "Not Acceptable: Accept must include text/event-stream");
    }
    auto session_id = req.header("Mcp-Session-Id");
    if (session_id.empty()) {
        return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
    }
    auto session = find_session(session_id, req, credential, false);
    if (!session && may_adopt(reentry)) return adopt(req, credential, std::string(session_id), reentry);
    if (!session) return rpc_error(req, 404, ec::kInvalidRequest, "Session not found: initialize a new session");
    session->last_active = executor.now();
    session->established = true;
    if (session->shared) keep_alive_shared(*session);

    std::shared_ptr<OutStream> out;
    std::uint64_t after = 0;
    auto last_event = req.header("Last-Event-ID");
    if (!last_event.empty()) {
        std::uint64_t stream_id = 0, seq = 0;
        const bool parsed = HttpSession::parse_event_id(last_event, &stream_id, &seq);
        // A shared session's GET stream is numbered by Redis: any replica can resume it.
        if (parsed && stream_id == 0 && session->shared && !session->standalone()->attached()) {
            session->fresh_standalone(seq);
            catch_up(session, seq);
        }
        // A response stream another replica opened: resumed here from its mirror, once
        // Redis has said it exists.
        if (parsed && stream_id != 0 && session->shared && !session->find_stream(stream_id) && !reentry.looked_up) {
            return resume_remote(req, session, stream_id, seq, reentry);
        }
        if (!parsed || !(out = session->find_stream(stream_id))) {
            return rpc_error(req, 404, ec::kInvalidRequest, "Not Found: unknown Last-Event-ID; the stream is gone");
        }
        after = seq;
        if (!out->can_replay_after(seq)) {
            spdlog::warn(
                "session {}…: resuming stream {} after event {}, but older events were already dropped "
                "from its replay log (raise http.max_replay_events/bytes)",
                session->id().substr(0, 8), stream_id, seq);
        }
    } else {
        // A shared session's first GET stream here starts with what the event log holds.
        if (session->shared && !session->has_standalone()) {
            session->fresh_standalone(0);
            catch_up(session, 0);
        }
        out = session->standalone();
    }
    if (out->attached()) {
        return rpc_error(req, 409, ec::kInvalidRequest,
                         "Conflict: this stream is already being read by another connection");
    }
    std::weak_ptr<State> weak = weak_from_this();
    EventStreamSettings settings;
    settings.session_id = session->id();
    settings.resumable = true;
    settings.after_seq = after;
    return event_stream(req.method(), req.version(), out, std::move(settings), [weak, session, out]() {
        auto self = weak.lock();
        if (!self || self->stopping) return;  // at shutdown the executor may be gone
        session->last_active = self->executor.now();
        if (out->id() != 0 && out->fully_delivered()) session->drop_stream(out->id());
    });
}

HttpAnswer HttpEndpoint::State::handle_delete(const HttpRequestView& req, const Credential& credential,
                                              const Reentry& reentry) {
    auto session_id = req.header("Mcp-Session-Id");
    if (session_id.empty()) {
        return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
    }
    auto session = find_session(session_id, req, credential, false);
    if (!session && may_adopt(reentry)) return adopt(req, credential, std::string(session_id), reentry);
    if (!session) return rpc_error(req, 404, ec::kInvalidRequest, "Session not found");
    const bool was_shared = session->shared;
    drop_session(session_id, "the client deleted the session");
    if (was_shared) return remove_everywhere(std::string(session_id), empty(req, 200));
    return empty(req, 200);
}

}  // namespace toolport
