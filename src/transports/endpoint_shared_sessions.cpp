// Sessions shared between replicas through Redis.
//
// With `sessions: shared` a Streamable HTTP session is a record in Redis that any replica
// takes over on its first request there (adopt), and keeps a copy of: changes are saved
// before they are acknowledged and announced to the others, which apply them; messages
// for the GET stream go through the bus to whichever replica holds it, numbered by Redis
// so that Last-Event-ID resumes on any replica. A replica that stops or dies takes
// nothing with it; DELETE ends the session everywhere; idle expiry is Redis's.
#include "transports/endpoint_state.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "server/session.hpp"
#include "stores/shared_sessions.hpp"
#include "util/random.hpp"

namespace toolport {

namespace ec = protocol::error_code;

// The range this replica numbers its requests to shared sessions' clients in
// (request_id_base): chosen once, whether or not sessions are shared.
std::int64_t HttpEndpoint::State::shared_request_id_base() {
    std::uint32_t r = 0;
    util::secure_random(&r, sizeof r);
    return static_cast<std::int64_t>((r & 0xFFFFFu) + 1) << 32;
}

// Methods whose handling changes what a shared session's record holds.
bool HttpEndpoint::State::changes_session_state(std::string_view method) {
    return method == "initialize" || method == "logging/setLevel" || method == "resources/subscribe" ||
           method == "resources/unsubscribe";
}

bool HttpEndpoint::State::may_adopt(const Reentry& reentry) const {
    return shared && !reentry.looked_up && !stopping && shared->ready();
}

void HttpEndpoint::State::share(HttpSession& s) {
    s.shared = true;
    s.touched = executor.now();
    s.mcp->number_requests_after(request_id_base);
    s.number_streams_after(static_cast<std::uint64_t>(request_id_base >> 32) << 24);
    std::weak_ptr<State> weak = weak_from_this();
    s.standalone_sink = [weak, sid = s.id()](std::string data) {
        if (auto self = weak.lock()) self->publish_standalone(sid, std::move(data));
    };
}

stores::SharedSessionState HttpEndpoint::State::snapshot(const HttpSession& s) {
    stores::SharedSessionState st;
    st.id = s.id();
    st.principal = s.principal;
    st.view = s.view;
    st.revision = std::string(protocol::name(s.mcp->revision()));
    st.client_capabilities = s.mcp->client_capabilities();
    st.client_info = s.mcp->client_info();
    st.log_level = std::string(to_string(s.mcp->log_level()));
    st.subscriptions.assign(s.mcp->subscriptions().begin(), s.mcp->subscriptions().end());
    return st;
}

void HttpEndpoint::State::apply(HttpSession& s, const stores::SharedSessionState& st) {
    auto revision = protocol::parse_revision(st.revision);
    auto level = parse_log_level(st.log_level);
    s.mcp->restore(revision ? *revision : protocol::kLatestStateful, st.client_capabilities, st.client_info,
                   level ? *level : LogLevel::debug,
                   std::set<std::string>(st.subscriptions.begin(), st.subscriptions.end()));
}

// The session is not here: look it up in Redis, take it over, and answer the request then.
HttpAnswer HttpEndpoint::State::adopt(const HttpRequestView& req, const Credential& credential, std::string sid,
                                      const Reentry& reentry) {
    auto deferred = make_deferred();
    spawn(adopt_then_answer(shared_from_this(), deferred, std::make_shared<endpoint::OwnedRequest>(req),
                            principal_of(req, credential), view_of(req, credential), std::move(sid), reentry),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

Task<void> HttpEndpoint::State::adopt_then_answer(std::shared_ptr<State> self,
                                                  std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                                  std::shared_ptr<endpoint::OwnedRequest> req, std::string principal,
                                                  std::string view, std::string sid, Reentry reentry) {
    std::optional<stores::SharedSessionState> state;
    try {
        state = co_await self->shared->load(sid);
    } catch (const std::exception& e) {
        spdlog::debug("session {}…: cannot look it up in Redis: {}", sid.substr(0, 8), e.what());
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    // Taken over only by the caller and the URL it belongs to (anyone else gets the 404
    // of a session that does not exist), and not twice by two requests racing here.
    if (state && !self->sessions.count(sid) && self->sessions.size() < self->opts.max_sessions &&
        state->principal == principal && state->view == view) {
        auto session = self->create_session(false, state->principal, state->view, sid);
        if (!session->shared) self->share(*session);
        session->established = true;
        apply(*session, *state);
        spdlog::info("session {}… taken over from the shared store", sid.substr(0, 8));
    }
    reentry.looked_up = true;
    deferred->resolve(self->answer(*req, reentry));
}

// Answers once the session's state is in Redis (or Redis failed: then it is marked to
// be written again when Redis is back).
HttpAnswer HttpEndpoint::State::save_before(std::shared_ptr<HttpSession> session, HttpAnswer answer) {
    auto deferred = make_deferred();
    spawn(save_then_answer(shared_from_this(), deferred, std::move(session), std::move(answer)),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

Task<void> HttpEndpoint::State::save_then_answer(std::shared_ptr<State> self,
                                                 std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                                 std::shared_ptr<HttpSession> session, HttpAnswer answer) {
    try {
        co_await self->shared->save(snapshot(*session), self->opts.session_idle_timeout);
        session->dirty = false;
    } catch (const std::exception& e) {
        if (!session->dirty) {
            spdlog::warn("session {}…: its state could not be shared ({}); other replicas see it once Redis is back",
                         session->id().substr(0, 8), e.what());
        }
        session->dirty = true;
    }
    deferred->resolve(std::move(answer));
}

HttpAnswer HttpEndpoint::State::remove_everywhere(std::string sid, HttpAnswer answer) {
    auto deferred = make_deferred();
    spawn(remove_then_answer(shared_from_this(), deferred, std::move(sid), std::move(answer)),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

Task<void> HttpEndpoint::State::remove_then_answer(std::shared_ptr<State> self,
                                                   std::shared_ptr<endpoint::DeferredAnswer> deferred, std::string sid,
                                                   HttpAnswer answer) {
    try {
        co_await self->shared->remove(sid);
    } catch (const std::exception& e) {
        spdlog::warn(
            "session {}… ended here, but Redis could not be told ({}): other replicas keep it until it "
            "expires",
            sid.substr(0, 8), e.what());
    }
    deferred->resolve(std::move(answer));
}

void HttpEndpoint::State::publish_standalone(const std::string& sid, std::string data) {
    spawn(publish_event(shared_from_this(), sid, std::move(data)), [](std::exception_ptr) {});
}

Task<void> HttpEndpoint::State::publish_event(std::shared_ptr<State> self, std::string sid, std::string data) {
    try {
        co_await self->shared->publish_event(sid, data, self->opts.max_replay_events, self->opts.session_idle_timeout);
        co_return;
    } catch (const std::exception& e) {
        spdlog::debug("session {}…: a message for its GET stream stays here: {}", sid.substr(0, 8), e.what());
    }
    // Redis away: the message goes to a GET stream on this replica, if the client holds one here.
    if (self->stopping) co_return;
    if (auto it = self->sessions.find(sid); it != self->sessions.end()) {
        it->second->standalone()->push(std::move(data), nullptr);
    }
}

// Fills the session's (fresh) GET stream from the event log; live events wait meanwhile.
void HttpEndpoint::State::catch_up(const std::shared_ptr<HttpSession>& session, std::uint64_t after) {
    session->catching_up = true;
    session->held.clear();
    spawn(catch_up_events(shared_from_this(), session, after), [](std::exception_ptr) {});
}

Task<void> HttpEndpoint::State::catch_up_events(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session,
                                                std::uint64_t after) {
    std::vector<stores::SessionEvent> events;
    try {
        events = co_await self->shared->events_after(session->id(), after);
    } catch (const std::exception& e) {
        spdlog::warn("session {}…: its GET stream resumes without the events Redis holds ({})",
                     session->id().substr(0, 8), e.what());
    }
    auto out = session->standalone();
    for (auto& e : events) out->push_numbered(e.seq, std::move(e.data));
    for (auto& [seq, data] : session->held) out->push_numbered(seq, std::move(data));
    session->held.clear();
    session->catching_up = false;
}

// Pushes the session's expiry in Redis (at most every quarter of the idle timeout), or
// writes it again if a change could not be.
void HttpEndpoint::State::keep_alive_shared(HttpSession& s) {
    if (!shared->ready()) return;
    auto now = executor.now();
    if (!s.dirty && now - s.touched < opts.session_idle_timeout / 4) return;
    s.touched = now;
    auto session = sessions.find(s.id());
    if (session == sessions.end()) return;
    spawn(refresh(shared_from_this(), session->second), [](std::exception_ptr) {});
}

Task<void> HttpEndpoint::State::refresh(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session) {
    try {
        if (session->dirty) {
            co_await self->shared->save(snapshot(*session), self->opts.session_idle_timeout);
            session->dirty = false;
        } else {
            co_await self->shared->touch(session->id(), self->opts.session_idle_timeout);
        }
    } catch (const std::exception& e) {
        spdlog::debug("session {}…: Redis not refreshed: {}", session->id().substr(0, 8), e.what());
    }
}

// Checks the local copy against Redis (after the bus missed messages): gone there, it
// goes here; changed there, it changes here.
Task<void> HttpEndpoint::State::revalidate(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session) {
    std::optional<stores::SharedSessionState> state;
    try {
        state = co_await self->shared->load(session->id());
    } catch (const std::exception&) {
        co_return;  // Redis away again: keep the copy
    }
    if (self->stopping || session->mcp->closed()) co_return;
    if (!state) self->drop_session(session->id(), "it was ended on another replica or expired");
    else apply(*session, *state);
}

void HttpEndpoint::State::shared_housekeeping() {
    if (!shared->ready()) return;
    const auto started = shared->subscriptions_started();
    const bool missed = started != subscriptions_seen;
    subscriptions_seen = started;
    std::vector<std::shared_ptr<HttpSession>> shared_sessions;
    for (auto& [id, s] : sessions) {
        if (s->shared) shared_sessions.push_back(s);
    }
    for (auto& s : shared_sessions) {
        if (missed && !s->dirty) spawn(revalidate(shared_from_this(), s), [](std::exception_ptr) {});
        else if (s->dirty || s->busy()) keep_alive_shared(*s);  // a GET stream held here keeps it alive
    }
}

// A client's reply to a request another replica sent, or its cancellation of a request
// another replica serves, goes there through the bus (taken out of `messages`).
void HttpEndpoint::State::relay_foreign(HttpSession& s, std::vector<protocol::Message>& messages) {
    for (auto it = messages.begin(); it != messages.end();) {
        if (s.mcp->owns_client_message(*it)) {
            ++it;
            continue;
        }
        Json json = std::visit(
            [](const auto& m) -> Json {
                using M = std::decay_t<decltype(m)>;
                if constexpr (std::is_same_v<M, protocol::Response>) return protocol::make_response(m.id, m.result);
                else if constexpr (std::is_same_v<M, protocol::ErrorResponse>)
                    return protocol::make_error(m.id, m.code, m.message, m.data);
                else if constexpr (std::is_same_v<M, protocol::Notification>)
                    return protocol::make_notification(m.method, m.params);
                else return nullptr;
            },
            *it);
        spawn(relay_message(shared_from_this(), s.id(), protocol::serialize(json)), [](std::exception_ptr) {});
        it = messages.erase(it);
    }
}

Task<void> HttpEndpoint::State::relay_message(std::shared_ptr<State> self, std::string sid, std::string message) {
    try {
        co_await self->shared->relay_client_message(sid, std::move(message));
    } catch (const std::exception& e) {
        spdlog::warn("session {}…: a client message for another replica was dropped ({})", sid.substr(0, 8), e.what());
    }
}

// A shared session's response stream, once it is an event stream, is mirrored to Redis
// (every event, then its end), so the client can resume it on any replica.
void HttpEndpoint::State::mirror_stream(const std::string& sid, const std::shared_ptr<OutStream>& out) {
    std::weak_ptr<State> weak = weak_from_this();
    out->set_mirror([weak, sid, stream = out->id()](std::uint64_t seq, const std::string& data) {
        auto self = weak.lock();
        if (!self || self->stopping) return;
        spawn(self->shared->publish_stream_event(sid, stream, seq, data, self->opts.max_replay_events,
                                                 self->opts.session_idle_timeout),
              [sid](std::exception_ptr error) {
                  if (error) spdlog::debug("session {}…: a response stream event was not mirrored", sid.substr(0, 8));
              });
    });
}

HttpAnswer HttpEndpoint::State::resume_remote(const HttpRequestView& req, const std::shared_ptr<HttpSession>& session,
                                              std::uint64_t stream, std::uint64_t after, const Reentry& reentry) {
    session->resume_remote_stream(stream, after);  // live events wait in it from now on
    auto deferred = make_deferred();
    spawn(resume_remote_then_answer(shared_from_this(), deferred, std::make_shared<endpoint::OwnedRequest>(req),
                                    session, stream, after, reentry),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

Task<void> HttpEndpoint::State::resume_remote_then_answer(std::shared_ptr<State> self,
                                                          std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                                          std::shared_ptr<endpoint::OwnedRequest> req,
                                                          std::shared_ptr<HttpSession> session, std::uint64_t stream,
                                                          std::uint64_t after, Reentry reentry) {
    stores::SharedSessions::StreamLog log;
    try {
        log = co_await self->shared->stream_events_after(session->id(), stream, after);
    } catch (const std::exception& e) {
        spdlog::warn("session {}…: stream {} cannot be resumed here ({})", session->id().substr(0, 8), stream, e.what());
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    auto out = session->find_stream(stream);
    auto remote = session->remote_streams.find(stream);
    if (!log.exists || !out || remote == session->remote_streams.end()) {
        // No replica mirrored such a stream (or it expired): the answer a local unknown
        // stream gets.
        session->drop_stream(stream);
        session->remote_streams.erase(stream);
        deferred->resolve(
            rpc_error(*req, 404, ec::kInvalidRequest, "Not Found: unknown Last-Event-ID; the stream is gone"));
        co_return;
    }
    bool ended = log.ended;
    for (auto& e : log.events) out->push_numbered(e.seq, std::move(e.data));
    for (auto& [seq, data] : remote->second.held) {
        if (seq == 0) ended = true;
        else out->push_numbered(seq, std::move(data));
    }
    remote->second.held.clear();
    remote->second.catching_up = false;
    if (ended) out->end();
    // Answered again: the stream is here now.
    reentry.looked_up = true;
    deferred->resolve(self->answer(*req, reentry));
}

void HttpEndpoint::State::on_bus(stores::SessionBusMessage m) {
    if (stopping) return;
    auto it = sessions.find(m.session_id);
    if (it == sessions.end() || !it->second->shared) return;
    auto session = it->second;
    switch (m.kind) {
        case stores::SessionBusMessage::Kind::changed:
            if (m.origin == shared->replica()) return;
            if (auto st = stores::SharedSessionState::from_json_text(m.data)) apply(*session, *st);
            return;
        case stores::SessionBusMessage::Kind::ended:
            drop_session(m.session_id, "the session was ended on another replica");
            return;
        case stores::SessionBusMessage::Kind::event:
            if (!session->has_standalone()) return;  // no GET stream was ever opened here
            if (session->catching_up) session->held.emplace_back(m.seq, std::move(m.data));
            else session->standalone()->push_numbered(m.seq, std::move(m.data));
            return;
        case stores::SessionBusMessage::Kind::stream: {
            if (m.origin == shared->replica()) return;
            auto remote = session->remote_streams.find(m.stream);
            auto out = session->find_stream(m.stream);
            if (remote == session->remote_streams.end() || !out) return;  // not resumed here
            if (remote->second.catching_up) remote->second.held.emplace_back(m.seq, std::move(m.data));
            else if (m.seq == 0) out->end();
            else out->push_numbered(m.seq, std::move(m.data));
            return;
        }
        case stores::SessionBusMessage::Kind::relay: {
            if (m.origin == shared->replica()) return;
            auto parsed = protocol::parse_payload(m.data, protocol::ParseLimits{});
            if (parsed.fatal || parsed.is_batch || parsed.items.size() != 1) return;
            auto* message = std::get_if<protocol::Message>(&parsed.items.front());
            if (message && !std::holds_alternative<protocol::Request>(*message) &&
                session->mcp->owns_client_message(*message)) {
                session->mcp->receive(std::move(*message));
            }
            return;
        }
        case stores::SessionBusMessage::Kind::task: return;  // the task engine's (app/serve.cpp)
    }
}

}  // namespace toolport
