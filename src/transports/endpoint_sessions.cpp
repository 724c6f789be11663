// The endpoint's session table: sessions are created (Streamable HTTP and legacy SSE),
// found for a request (only by the credential and URL that created them), and ended, by
// their client, by expiry (the sweep: idle sessions, unfinished handshakes) or at stop.
#include "transports/endpoint_state.hpp"

#include <chrono>
#include <vector>

#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "observability/metrics.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "stores/shared_sessions.hpp"
#include "util/random.hpp"

namespace toolport {

using namespace std::chrono_literals;

namespace {

// 128 bits from the kernel: unguessable, and visible ASCII as the spec requires.
std::string random_session_id() { return util::random_hex(16); }

}  // namespace

void HttpEndpoint::State::sessions_changed() {
    observability::metrics().set(endpoint::kSessionsMetric, {}, static_cast<double>(sessions.size()));
}

void HttpEndpoint::State::schedule_sweep() {
    if (stopping) return;
    auto every = std::min<std::chrono::milliseconds>(opts.session_idle_timeout / 2, 30s);
    if (opts.handshake_timeout.count() > 0)
        every = std::min<std::chrono::milliseconds>(every, opts.handshake_timeout / 2);
    every = std::max<std::chrono::milliseconds>(every, 100ms);
    std::weak_ptr<State> weak = weak_from_this();
    cancel_sweep = executor.schedule_after(every, [weak]() {
        auto self = weak.lock();
        if (!self || self->stopping) return;
        self->sweep();
        self->schedule_sweep();
    });
}

void HttpEndpoint::State::sweep() {
    auto now = executor.now();
    std::vector<std::string> expired;
    for (auto& [id, s] : sessions) {
        s->prune(std::chrono::minutes(5));
        if (!s->legacy && !s->established && opts.handshake_timeout.count() > 0 &&
            now - s->created > opts.handshake_timeout) {
            spdlog::info("session {}… dropped: no message after initialize within {} s", id.substr(0, 8),
                         opts.handshake_timeout.count());
            expired.push_back(id);
        } else if (!s->busy() && now - s->last_active > opts.session_idle_timeout) {
            spdlog::info("session {}… expired after {} s idle", id.substr(0, 8), opts.session_idle_timeout.count());
            expired.push_back(id);
        }
    }
    for (const auto& id : expired) drop_session(id, "it expired");
    if (shared) shared_housekeeping();
}

std::shared_ptr<HttpSession> HttpEndpoint::State::create_session(bool legacy, std::string principal, std::string view,
                                                                 std::string id) {
    auto s = std::make_shared<HttpSession>(id.empty() ? random_session_id() : std::move(id), opts.max_replay_events,
                                           opts.max_replay_bytes);
    s->legacy = legacy;
    s->principal = principal;
    s->view = view;
    s->created = s->last_active = executor.now();
    std::weak_ptr<HttpSession> weak = s;
    s->mcp = mcp.open_session(
        [weak](const Json& message, const protocol::RequestId* related) {
            if (auto hs = weak.lock()) hs->route(message, related);
        },
        CallerIdentity{.principal = std::move(principal), .session_id = s->id(), .view = std::move(view)});
    s->mcp->set_stream_closer([weak](const protocol::RequestId& id) {
        if (auto hs = weak.lock()) hs->close_stream(id);
    });
    s->mcp->set_unanswered_listener([weak](const protocol::RequestId& id, const std::string& reason) {
        if (auto hs = weak.lock()) hs->request_ended(id, reason);
    });
    // Shared from the start while Redis is there; a session created while it is away
    // stays on this replica for its life.
    if (!legacy && shared && shared->ready()) share(*s);
    sessions.emplace(s->id(), s);
    sessions_changed();
    return s;
}

// Ends a session: its open responses are answered with an error naming `reason`, its
// streams end, its requests are cancelled.
void HttpEndpoint::State::drop_session(std::string_view id, const std::string& reason) {
    auto it = sessions.find(id);
    if (it == sessions.end()) return;
    auto session = std::move(it->second);
    sessions.erase(it);
    sessions_changed();
    session->end(reason);
    session->mcp->close();
}

// The session `id` names, if it exists, serves this transport and belongs to the
// caller (a session is bound to the credential that created it; anyone else gets 404,
// as if it did not exist).
std::shared_ptr<HttpSession> HttpEndpoint::State::find_session(std::string_view id, const HttpRequestView& req,
                                                               const Credential& credential, bool legacy) {
    auto it = sessions.find(id);
    if (it == sessions.end() || it->second->legacy != legacy) return nullptr;
    if (!legacy && it->second->view != view_of(req, credential)) return nullptr;  // another URL's session
    if (!it->second->principal.empty() || auth_on()) {
        if (principal_of(req, credential) != it->second->principal) return nullptr;
    }
    return it->second;
}

}  // namespace toolport
