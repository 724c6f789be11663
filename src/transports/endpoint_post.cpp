// POST at the MCP path: the body read into messages, the session found, created or taken
// over, the messages sorted (ids in flight, malformed members) and run, the replies
// written (endpoint_answers.cpp); and the stateless 2026-07-28 revision, one request per
// POST with no session.
#include "transports/endpoint_state.hpp"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

#include "async/executor.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "transports/batch.hpp"
#include "transports/http_policy.hpp"
#include "transports/stateless_headers.hpp"
#include "util/http_text.hpp"
#include "util/sanitize.hpp"

namespace toolport {

namespace ec = protocol::error_code;

// Reads the body into messages; on failure returns the answer to send.
std::optional<HttpAnswer> HttpEndpoint::State::read_post_body(const HttpRequestView& req, PostBody& body) {
    if (!http_policy::is_json_content_type(req.header("Content-Type"))) {
        return rpc_error(req, 415, ec::kInvalidRequest, "Unsupported Media Type: Content-Type must be application/json");
    }
    protocol::ParseLimits limits;
    limits.max_depth = opts.max_json_depth;
    limits.max_batch_size = opts.max_batch_size;
    body.parsed = protocol::parse_payload(req.body(), limits);
    body.trace.traceparent = std::string(req.header("traceparent"));
    // tracestate and baggage go with a trace context: looked up only when there is one.
    if (!body.trace.traceparent.empty()) {
        body.trace.tracestate = std::string(req.header("tracestate"));
        body.trace.baggage = std::string(req.header("baggage"));
    }
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
        http_policy::attach_trace_headers(message, body.trace);
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
            http_policy::attach_trace_headers(message, body.trace);
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
    if (session_id.empty() && !body.has_requests && !body.has_errors && !body.has_initialize && version.revision &&
        protocol::is_stateless(*version.revision)) {
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

    if (body.parsed.is_batch && (!session->mcp->initialized() || !protocol::allows_batches(session->mcp->revision()))) {
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

    const bool state_changes = session->shared &&
                               std::any_of(sorted.to_feed.begin(), sorted.to_feed.end(), [](const auto& m) {
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
            // (id_key: the id as dump() writes it, without building a serializer.)
            std::string key = related ? protocol::id_key(*related) : std::string();
            s->push(protocol::serialize(message), related && !message.contains("method") ? &key : nullptr);
        },
        CallerIdentity{.principal = principal_of(req, credential), .view = view_of(req, credential)});
    take_client_headers(req, credential, session->caller());
    session->set_output_serializes();  // (the output above writes each message as it is)
    session->set_unanswered_listener([weak](const protocol::RequestId& id, const std::string& reason) {
        if (auto s = weak.lock()) s->end_request(protocol::id_key(id), cancelled_reply(id, reason));
    });
    // One request, not a batch (handle_post routes only those here), whose _meta is read.
    auto& message = std::get<protocol::Message>(body.parsed.items.front());
    http_policy::attach_trace_headers(message, body.trace);
    session->receive_stateless(std::get<protocol::Request>(std::move(message)), meta);
    // Closing the connection early is cancellation in this revision.
    auto close = [session]() { session->close(); };
    return write_stream(req, out, false, "", false, close, close);
}

// The 2026-07-28 HTTP rules (version header vs _meta, Mcp-Method/Mcp-Name/Mcp-Param-*).
std::optional<HeaderProblem> HttpEndpoint::State::check_headers(const HttpRequestView& req, const PostBody& body,
                                                                const StatelessMeta& meta) {
    // One pass over the fields instead of a lookup per name; as with header(), the first
    // field of a name is the one that counts.
    StatelessHeaders h;
    req.for_each_header([&h](std::string_view name, std::string_view value) {
        const auto take = [&](std::string_view wanted, std::string_view& to, bool& has) {
            // (Clients mostly spell a name as asked: compared as it is before ignoring case.)
            if (has || name.size() != wanted.size() || (name != wanted && !util::iequals_ascii(name, wanted)))
                return false;
            to = value;
            has = true;
            return true;
        };
        if (take("MCP-Protocol-Version", h.protocol_version, h.has_protocol_version) ||
            take("Mcp-Method", h.method, h.has_method) || take("Mcp-Name", h.name, h.has_name)) {
            return;
        }
        if (name.size() > 10 && strncasecmp(name.data(), "Mcp-Param-", 10) == 0)
            h.params.emplace_back(name.substr(10), value);
    });
    return check_stateless_headers(h, *body.first_request, meta, mcp);
}

}  // namespace toolport
