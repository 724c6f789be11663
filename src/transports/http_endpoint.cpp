// HttpEndpoint (http_endpoint.hpp): routing, the checks every request passes before it
// reaches a handler (Host, Origin, authentication, scopes, a profile token's and an end
// user's limits), and the endpoint's lifetime (start, stop). What the handlers share is
// HttpEndpoint::State (endpoint_state.hpp); each concern has its own file (listed there).
#include "transports/http_endpoint.hpp"

#include <strings.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "auth/authenticator.hpp"
#include "auth/resource_metadata.hpp"
#include "auth/scope_policy.hpp"
#include "observability/metrics.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "stores/shared_sessions.hpp"
#include "transports/batch.hpp"
#include "transports/endpoint_state.hpp"
#include "transports/event_stream.hpp"
#include "transports/http_policy.hpp"
#include "transports/stateless_headers.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using protocol::Json;
namespace ec = protocol::error_code;

void HttpEndpoint::count_request(HttpMethod method, unsigned status) {
    // Series handles cached per thread (connections may answer on I/O threads).
    thread_local std::unordered_map<unsigned, observability::Counter> counters;
    unsigned key = static_cast<unsigned>(method) * 1000u + status;
    auto it = counters.find(key);
    if (it == counters.end()) {
        observability::Labels labels{{"method", std::string(method_label(method))}, {"status", std::to_string(status)}};
        it = counters.emplace(key, observability::metrics().counter(endpoint::kRequestsMetric, labels)).first;
    }
    it->second.increment();
}

HttpEndpoint::State::State(McpServer& server, Executor& executor, HttpOptions options)
    : mcp(server),
      executor(executor),
      opts(std::move(options)),
      metadata_url(authn ? auth::resource_metadata_url(opts.oauth.resource) : std::string()),
      metadata_paths(authn ? oauth_metadata_paths() : std::vector<std::string>{}),
      request_id_base(shared_request_id_base()) {
    auto& m = observability::metrics();
    m.describe(endpoint::kRequestsMetric, "HTTP requests answered, by method and status code.");
    m.describe(endpoint::kSessionsMetric, "MCP sessions open on the HTTP transports (Streamable HTTP and legacy SSE).");
    sessions_changed();
}

HttpAnswer HttpEndpoint::State::answer(const HttpRequestView& req, const Reentry& reentry) {
    if (stopping) return {};
    auto target = req.target();
    auto path = target.substr(0, target.find('?'));
    // The MCP endpoint wins if it was configured at one of these paths.
    const bool is_metrics = opts.metrics_endpoint && path == "/metrics" && path != opts.path;
    const bool is_health = opts.health_endpoint && opts.health_report && path == "/health" && path != opts.path;
    const bool is_reload = opts.reload && path == "/admin/reload" && path != opts.path;

    // RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400, and so is any
    // request with more than one Host, or with an empty one (which no check could pass).
    if (req.version() >= 11 && !req.has_header("Host")) {
        return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: HTTP/1.1 requests need a Host header");
    }
    if (auto refusal = host_header_refusal(req)) return rpc_error(req, 400, ec::kInvalidRequest, *refusal);
    // DNS-rebinding protection applies to every endpoint, authentication to every
    // endpoint but a public /health.
    if (!http_policy::host_allowed(opts, req.header("Host"))) {
        return rpc_error(req, 403, ec::kInvalidRequest, "Forbidden: Host header not allowed");
    }
    if (!http_policy::origin_allowed(opts, req.header("Origin"))) {
        return rpc_error(req, 403, ec::kInvalidRequest, "Forbidden: Origin not allowed");
    }
    if (is_metadata_path(path)) return metadata_answer(req);
    const auto credential =
        auth_on() ? credential_of(req.header("Authorization"), reentry) : Credential{.valid = true};
    if (!(is_health && opts.public_health) && !credential.valid) {
        // An OAuth token seen for the first time: answered once it is verified.
        if (credential.unverified) return verify_then_answer(req, reentry);
        return unauthorized(req, req.has_header("Authorization"),
                            "Unauthorized: send Authorization: Bearer <token>");
    }
    if (!(is_health && opts.public_health) && credential.oauth) {
        // The server's required scopes, and a profile's at its URL.
        auto needed = scopes_for_path(req);
        if (auto missing = auth::missing_scopes(credential.oauth->scopes, needed); !missing.empty()) {
            return insufficient_scope(req, *credential.oauth, needed,
                                      "Forbidden: the access token lacks the needed scope(s): " +
                                          auth::join_scopes(missing));
        }
    }
    if (!(is_health && opts.public_health)) {
        if (auto refusal = profile_refusal(credential, path)) {
            return rpc_error(req, 403, ec::kInvalidRequest, *refusal);
        }
    }
    if ((is_metrics || is_reload) && credential.oauth) {
        if (auto refusal = admin_refusal(req, *credential.oauth, path)) return std::move(*refusal);
    }

    if (is_metrics || is_health) return observability_answer(req, is_metrics);
    if (is_reload) return reload_answer(req);
    if (path == opts.path || is_view_path(path)) {
        switch (req.method()) {
            case HttpMethod::post: return handle_post(req, credential, reentry);
            case HttpMethod::get: return handle_get(req, credential, reentry);
            case HttpMethod::delete_: return handle_delete(req, credential, reentry);
            default: return method_not_allowed(req, "Method Not Allowed", "GET, POST, DELETE");
        }
    }
    if (opts.legacy_sse && path == "/sse" && req.method() == HttpMethod::get) return handle_legacy_sse(req, credential);
    if (opts.legacy_sse && path == "/messages" && req.method() == HttpMethod::post) return handle_legacy_post(req, credential);
    return rpc_error(req, 404, ec::kInvalidRequest, fmt::format("Not Found: the MCP endpoint is {}", opts.path));
}

// Why a request's Host header fields are not one non-empty value, or nullopt when they
// are (or there is none: HTTP/1.0).
std::optional<std::string_view> HttpEndpoint::State::host_header_refusal(const HttpRequestView& req) {
    int hosts = 0;
    bool empty = false;
    req.for_each_header([&](std::string_view name, std::string_view value) {
        if (name.size() != 4 || strncasecmp(name.data(), "host", 4) != 0) return;
        ++hosts;
        empty = empty || value.find_first_not_of(" \t") == std::string_view::npos;
    });
    if (hosts > 1) return "Bad Request: more than one Host header";
    if (empty) return "Bad Request: the Host header is empty";
    return std::nullopt;
}

// ------------------------------------------------------------------------------------------------ POST

// Reads the body into messages; on failure returns the answer to send.
std::optional<HttpAnswer> HttpEndpoint::State::read_post_body(const HttpRequestView& req, PostBody& body) {
    if (!http_policy::is_json_content_type(req.header("Content-Type"))) {
        return rpc_error(req, 415, ec::kInvalidRequest,
                         "Unsupported Media Type: Content-Type must be application/json");
    }
    protocol::ParseLimits limits;
    limits.max_depth = opts.max_json_depth;
    limits.max_batch_size = opts.max_batch_size;
    body.parsed = protocol::parse_payload(req.body(), limits);
    body.traceparent = std::string(req.header("traceparent"));
    if (body.parsed.fatal) {
        return rpc_error(req, 400, body.parsed.fatal->code, body.parsed.fatal->message, body.parsed.fatal->id);
    }
    for (const auto& item : body.parsed.items) {
        const auto* m = std::get_if<protocol::Message>(&item);
        if (!m) body.has_errors = true;
        const auto* r = m ? std::get_if<protocol::Request>(m) : nullptr;
        if (!r) continue;
        body.has_requests = true;
        if (r->method == "initialize") body.has_initialize = true;
        if (!body.first_request) body.first_request = r;
    }
    return std::nullopt;
}

// Splits a Streamable HTTP POST for `session`: a request whose id is already waiting
// for a reply (earlier in this batch, or from another POST) is answered here with an
// error instead of being run, as is every malformed member of a batch.
HttpEndpoint::State::SortedPost HttpEndpoint::State::sort_post(PostBody& body, const HttpSession& session) {
    SortedPost sorted;
    std::unordered_set<std::string> seen;
    for (auto& item : body.parsed.items) {
        if (auto* error = std::get_if<protocol::ProtocolError>(&item)) {
            sorted.local_replies.push_back(
                protocol::serialize(protocol::make_error(error->id, error->code, error->message)));
            continue;
        }
        auto& message = std::get<protocol::Message>(item);
        if (auto* r = std::get_if<protocol::Request>(&message)) {
            auto key = protocol::id_key(r->id);
            const bool in_batch = body.parsed.is_batch && seen.count(key) > 0;
            if (in_batch || session.awaits_reply(key)) {
                sorted.local_replies.push_back(protocol::serialize(protocol::make_error(
                    r->id, ec::kInvalidRequest,
                    in_batch ? "Invalid Request: another request in this batch has the same id"
                             : "Invalid Request: a request with this id is still in progress; use a new id")));
                continue;
            }
            if (body.parsed.is_batch) seen.insert(std::move(key));  // one message: nothing to repeat
            sorted.request_ids.push_back(r->id);
        }
        http_policy::attach_traceparent(message, body.traceparent);
        sorted.to_feed.push_back(std::move(message));
    }
    return sorted;
}

// Hands every message of `body` to `session` as it is (malformed ones are answered by
// the session, on its own stream: the legacy transport and the stateless revision).
void HttpEndpoint::State::feed_all(ServerSession& session, PostBody& body) {
    for (auto& item : body.parsed.items) {
        if (auto* error = std::get_if<protocol::ProtocolError>(&item)) {
            session.reject(*error);
        } else {
            auto& message = std::get<protocol::Message>(item);
            http_policy::attach_traceparent(message, body.traceparent);
            session.receive(std::move(message));
        }
    }
}

HttpAnswer HttpEndpoint::State::handle_post(const HttpRequestView& req, const Credential& credential,
                                            const Reentry& reentry) {
    PostBody body;
    if (auto error = read_post_body(req, body)) return std::move(*error);
    // One message that is not JSON-RPC: answered on this POST (a GET stream may not exist).
    if (!body.parsed.is_batch) {
        if (auto* error = std::get_if<protocol::ProtocolError>(&body.parsed.items.front())) {
            return rpc_error(req, 400, error->code, error->message, error->id);
        }
    }
    if (auto refusal = tool_scope_refusal(req, credential, body)) return std::move(*refusal);
    const bool answers_needed = body.has_requests || body.has_errors;
    if (answers_needed && !(http_policy::accepts(req.header("Accept"), "text/event-stream") &&
                            http_policy::accepts(req.header("Accept"), "application/json"))) {
        return rpc_error(req, 406, ec::kInvalidRequest,
                         "Not Acceptable: Accept must list both application/json and text/event-stream");
    }

    // The stateless revision: the version travels in the request's _meta.
    if (body.first_request && !body.parsed.is_batch) {
        auto meta = read_stateless_meta(body.first_request->params);
        auto header_version = protocol::parse_revision(req.header("MCP-Protocol-Version"));
        if ((meta.present && (!meta.revision || protocol::is_stateless(*meta.revision))) ||
            (!meta.present && header_version && protocol::is_stateless(*header_version))) {
            return handle_stateless_post(req, credential, body, meta);
        }
    }

    auto version = http_policy::read_version_header(req.header("MCP-Protocol-Version"),
                                                    req.has_header("MCP-Protocol-Version"));
    if (version.present && !version.revision) {
        return rpc_error(req, 400, ec::kInvalidRequest,
                         fmt::format("Bad Request: unsupported MCP-Protocol-Version \"{}\"; supported: {}",
                                     util::sanitize_for_message(req.header("MCP-Protocol-Version"), 40),
                                     protocol::supported_revisions_list()));
    }

    auto session_id = req.header("Mcp-Session-Id");
    if (!session_id.empty() && !http_policy::valid_session_id(session_id)) {
        return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: malformed Mcp-Session-Id header");
    }
    if (session_id.empty() && !body.has_requests && !body.has_errors && !body.has_initialize &&
        version.revision && protocol::is_stateless(*version.revision)) {
        // A notification in the stateless revision has no session to reach; over HTTP it
        // means nothing (a client cancels by closing the request's stream), so it is
        // accepted and dropped, as JSON-RPC lets a receiver do with a notification.
        return empty(req, 202);
    }
    std::shared_ptr<HttpSession> session;
    bool created = false;
    if (body.has_initialize) {
        if (body.parsed.is_batch) {
            return rpc_error(req, 400, ec::kInvalidRequest, "Invalid Request: initialize must not be batched");
        }
        if (!session_id.empty()) {
            session = find_session(session_id, req, credential, false);
            if (!session && may_adopt(reentry)) return adopt(req, credential, std::string(session_id), reentry);
            if (!session) {
                return rpc_error(req, 404, ec::kInvalidRequest,
                                 "Session not found: initialize without Mcp-Session-Id to start a new session");
            }
            // The session answers "already initialized".
        } else {
            if (sessions.size() >= opts.max_sessions) {
                return rpc_error(req, 503, ec::kInvalidRequest,
                                 fmt::format("Service Unavailable: the server already holds {} sessions; retry "
                                             "later or end unused sessions with DELETE",
                                             opts.max_sessions));
            }
            session = create_session(false, principal_of(req, credential), view_of(req, credential));
            created = true;
        }
    } else {
        if (session_id.empty()) {
            return rpc_error(req, 400, ec::kInvalidRequest,
                             "Bad Request: Mcp-Session-Id header is required (initialize first)");
        }
        session = find_session(session_id, req, credential, false);
        if (!session && may_adopt(reentry)) return adopt(req, credential, std::string(session_id), reentry);
        if (!session) {
            return rpc_error(req, 404, ec::kInvalidRequest,
                             "Session not found: it expired or was ended; initialize a new session");
        }
    }
    session->last_active = executor.now();
    if (!created) session->established = true;
    if (session->shared) keep_alive_shared(*session);
    take_client_headers(req, credential, session->mcp->caller());

    if (body.parsed.is_batch &&
        (!session->mcp->initialized() || !protocol::allows_batches(session->mcp->revision()))) {
        auto refusal = batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision())
                                                                 : std::nullopt);
        return rpc_error(req, 400, refusal.code, refusal.message);
    }

    auto sorted = sort_post(body, *session);
    if (session->shared) relay_foreign(*session, sorted.to_feed);
    if (sorted.request_ids.empty()) {
        for (auto& message : sorted.to_feed) session->mcp->receive(std::move(message));
        if (sorted.local_replies.empty()) return empty(req, 202);  // only notifications and responses
        // Nothing to run, only errors to answer: the request id reused, or a batch of
        // malformed members.
        std::string reply = std::move(sorted.local_replies.front());
        if (body.parsed.is_batch) {
            for (std::size_t i = 1; i < sorted.local_replies.size(); ++i) reply += "," + sorted.local_replies[i];
            reply = "[" + reply + "]";
        }
        return answer_with(req, json_reply(req, 400, std::move(reply)));
    }

    const bool state_changes =
        session->shared && std::any_of(sorted.to_feed.begin(), sorted.to_feed.end(), [](const auto& m) {
            const auto* r = std::get_if<protocol::Request>(&m);
            return r && changes_session_state(r->method);
        });
    auto out = session->open_stream(sorted.request_ids);
    for (auto& reply : sorted.local_replies) out->push_local_reply(std::move(reply));
    for (auto& message : sorted.to_feed) session->mcp->receive(std::move(message));
    std::string sid = session->id();
    // Once the replies are out: a session whose initialize failed is not kept, nor a
    // stream nobody can need to resume.
    std::weak_ptr<State> weak = weak_from_this();
    auto after = [weak, session, out, created, sid]() {
        auto self = weak.lock();
        if (!self || self->stopping) return;
        if (created && !session->mcp->initialized()) self->drop_session(sid, "its initialize failed");
        else if (out->fully_delivered()) session->drop_stream(out->id());
    };
    auto answer = write_stream(req, out, body.parsed.is_batch, sid, true, std::move(after), nullptr);
    // A new or changed shared session is answered once Redis has its state, so the
    // client's next request finds it on any replica.
    if (state_changes && session->mcp->initialized()) return save_before(session, std::move(answer));
    return answer;
}

HttpAnswer HttpEndpoint::State::handle_stateless_post(const HttpRequestView& req, const Credential& credential,
                                                      PostBody& body, const StatelessMeta& meta) {
    if (auto problem = check_headers(req, body, meta)) {
        return answer_with(req, json_reply(req, static_cast<unsigned>(problem->http_status),
                                           protocol::serialize(problem->body)));
    }
    auto out = std::make_shared<OutStream>(1, opts.max_replay_events, opts.max_replay_bytes);
    out->expect_reply(protocol::id_key(body.first_request->id));
    std::weak_ptr<OutStream> weak = out;
    auto session = mcp.open_session(
        [weak](const Json& message, const protocol::RequestId* related) {
            auto s = weak.lock();
            if (!s) return;
            std::string key = related ? related->dump() : std::string();
            s->push(protocol::serialize(message), related && !message.contains("method") ? &key : nullptr);
        },
        CallerIdentity{.principal = principal_of(req, credential), .view = view_of(req, credential)});
    take_client_headers(req, credential, session->caller());
    session->set_unanswered_listener([weak](const protocol::RequestId& id, const std::string& reason) {
        if (auto s = weak.lock()) s->end_request(protocol::id_key(id), cancelled_reply(id, reason));
    });
    feed_all(*session, body);
    // Closing the connection early is cancellation in this revision.
    auto close = [session]() { session->close(); };
    return write_stream(req, out, false, "", false, close, close);
}

// The 2026-07-28 HTTP rules (version header vs _meta, Mcp-Method/Mcp-Name/Mcp-Param-*).
std::optional<HeaderProblem> HttpEndpoint::State::check_headers(const HttpRequestView& req, const PostBody& body,
                                                                const StatelessMeta& meta) {
    StatelessHeaders h;
    h.protocol_version = std::string(req.header("MCP-Protocol-Version"));
    h.has_protocol_version = req.has_header("MCP-Protocol-Version");
    h.method = std::string(req.header("Mcp-Method"));
    h.has_method = req.has_header("Mcp-Method");
    h.name = std::string(req.header("Mcp-Name"));
    h.has_name = req.has_header("Mcp-Name");
    req.for_each_header([&h](std::string_view name, std::string_view value) {
        if (name.size() > 10 && strncasecmp(name.data(), "Mcp-Param-", 10) == 0) {
            h.params.emplace_back(std::string(name.substr(10)), std::string(value));
        }
    });
    return check_stateless_headers(h, *body.first_request, meta, mcp);
}

// ----------------------------------------------------------------------------------------- GET, DELETE

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
        if (parsed && stream_id != 0 && session->shared && !session->find_stream(stream_id) &&
            !reentry.looked_up) {
            return resume_remote(req, session, stream_id, seq, reentry);
        }
        if (!parsed || !(out = session->find_stream(stream_id))) {
            return rpc_error(req, 404, ec::kInvalidRequest, "Not Found: unknown Last-Event-ID; the stream is gone");
        }
        after = seq;
        if (!out->can_replay_after(seq)) {
            spdlog::warn("session {}…: resuming stream {} after event {}, but older events were already dropped "
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

// ------------------------------------------------------------------------------------- legacy HTTP+SSE

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
        session->mcp->reject(batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision())
                                                                       : std::nullopt));
    } else {
        // Every reply, errors included, goes on the session's event stream.
        feed_all(*session->mcp, body);
    }
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 202, {{"Content-Type", "text/plain"}},
                                         "Accepted"));
}

// ---------------------------------------------------------------------------------- operator endpoints

// GET /metrics (Prometheus text format 0.0.4) and GET /health (the health report).
HttpAnswer HttpEndpoint::State::observability_answer(const HttpRequestView& req, bool metrics) {
    if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
    // Both describe this moment: a cached copy would be wrong.
    if (metrics) {
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                             {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"},
                                              {"Cache-Control", "no-store"}},
                                             observability::metrics().render()));
    }
    auto [status, body] = health_response();
    return answer_with(req, format_reply(req.version(), req.keep_alive(), static_cast<unsigned>(status),
                                         {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                         std::move(body)));
}

// POST /admin/reload. Without authentication the check above let everyone in: then only
// a loopback listener serves it, so an open port is never an unauthenticated admin door.
// 202 when this request started a reload; 200 with Retry-After when it was answered with
// the running (or last) one's outcome instead (reload.min_interval_s).
HttpAnswer HttpEndpoint::State::reload_answer(const HttpRequestView& req) {
    if (req.method() != HttpMethod::post) return method_not_allowed(req, "Method Not Allowed: use POST", "POST");
    if (!auth_on() && !http_policy::is_loopback_host(opts.host)) {
        return rpc_error(req, 403, ec::kInvalidRequest,
                         "Forbidden: /admin/reload needs bearer authentication when not listening on loopback");
    }
    AdminReload outcome;
    try {
        outcome = opts.reload();
    } catch (const std::exception& e) {
        spdlog::error("reload failed: {}", util::sanitize_for_message(e.what()));
        return rpc_error(req, 500, ec::kInternalError, "the reload could not be started");
    }
    if (outcome.started) {
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 202,
                                             {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                             std::move(outcome.body)));
    }
    const auto retry_after = std::to_string(std::max<long long>(outcome.retry_after.count(), 1));
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                         {{"Content-Type", "application/json"},
                                          {"Cache-Control", "no-store"},
                                          {"Retry-After", retry_after}},
                                         std::move(outcome.body)));
}

// /health is public (http.public_health): the states sources report are free text, and a
// URL in one (an upstream's, a document's) loses its userinfo and query, where keys go.
std::string HttpEndpoint::State::public_report(std::string body) {
    auto report = Json::parse(body, nullptr, false);
    if (report.is_discarded()) return body;
    auto scrub = [](auto& self, Json& value) -> void {
        if (value.is_string()) value = http_policy::public_text(value.get_ref<const std::string&>());
        else if (value.is_structured())
            for (auto& child : value) self(self, child);
    };
    scrub(scrub, report);
    return report.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The health report from the application; a report that cannot be made is itself a
// sign of trouble (500), never a reason to drop the connection.
std::pair<int, std::string> HttpEndpoint::State::health_response() {
    try {
        auto [status, body] = opts.health_report();
        if (status < 100 || status > 599) throw std::runtime_error(fmt::format("HTTP status {} out of range", status));
        return {status, public_report(std::move(body))};
    } catch (const std::exception& e) {
        spdlog::error("health report failed: {}", util::sanitize_for_message(e.what()));
    } catch (...) {
        spdlog::error("health report failed with a non-standard exception");
    }
    return {500, R"({"status":"unhealthy","error":"the health report failed"})"};
}

// --------------------------------------------------------------------------------------------- answers

namespace {

// HTTP status for a stateless reply: the 2026-07-28 transport maps some JSON-RPC errors.
unsigned stateless_status(std::string_view reply) {
    constexpr std::string_view marker = "\"error\":{\"code\":";  // nlohmann writes keys sorted
    auto pos = reply.find(marker);
    if (pos == std::string::npos) return 200;
    int code = std::atoi(std::string(reply.substr(pos + marker.size(), 12)).c_str());
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
        return endpoint_->decided_answer(reply_.method, reply_.version, reply_.keep_alive, std::move(out),
                                         reply_.batch, std::move(reply_.session_id), reply_.resumable,
                                         std::exchange(after_, nullptr));
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
    answer.pending = std::make_shared<PendingPost>(
        shared_from_this(),
        PendingPost::Reply{req.method(), req.version(), req.keep_alive(), batch, std::move(session_id), resumable},
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

HttpEndpoint::HttpEndpoint(McpServer& server, Executor& executor, HttpOptions options)
    : state_(std::make_shared<State>(server, executor, std::move(options))) {}

HttpEndpoint::~HttpEndpoint() { stop(); }

HttpAnswer HttpEndpoint::answer(const HttpRequestView& request) { return state_->answer(request, State::Reentry{}); }

void HttpEndpoint::start() {
    for (const auto& [token, view] : state_->mcp.view_tokens()) {
        if (http_policy::token_listed(state_->opts.bearer_tokens, token)) {
            spdlog::warn("a token of the server's bearer tokens is also the gateway profile {}'s: it is served as that "
                         "profile only",
                         view);
        }
    }
    if (state_->shared) {
        std::weak_ptr<State> weak = state_;
        state_->shared->set_listener([weak](stores::SessionBusMessage message) {
            if (auto self = weak.lock()) self->on_bus(std::move(message));
        });
    }
    state_->schedule_sweep();
}

void HttpEndpoint::stop() {
    auto& s = *state_;
    if (s.stopping) return;
    s.stopping = true;
    if (s.cancel_sweep) s.cancel_sweep();
    std::vector<std::string> ids;
    for (auto& [id, session] : s.sessions) ids.push_back(id);
    for (const auto& id : ids) s.drop_session(id, "the server is shutting down");
}

std::size_t HttpEndpoint::session_count() const { return state_->sessions.size(); }

}  // namespace toolport
