#include "server/session.hpp"

#include <fmt/format.h>

#include "async/executor.hpp"
#include "observability/mcp_metrics.hpp"
#include "server/input_required.hpp"
#include "server/request_span.hpp"
#include "server/stateless.hpp"
#include "server/tasks.hpp"
#include "util/json_release.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using namespace protocol;

ServerSession::ServerSession(McpServer& server, SessionOutput output, CallerIdentity caller)
    : server_(server),
      output_(std::move(output)),
      caller_(std::move(caller)),
      peer_(
          server.executor(),
          {.on_give_up =
               [this](std::int64_t id, const std::string&, const std::string& reason) {
                   send(make_notification("notifications/cancelled", {{"requestId", id}, {"reason", reason}}), nullptr);
               },
           .timeout_error =
               [](const std::string& method, std::chrono::milliseconds after) {
                   return std::make_exception_ptr(std::runtime_error(
                       fmt::format("the client did not answer {} within {} ms", method, after.count())));
               }}) {}

ServerSession::~ServerSession() {
    // A closed session is already off the server's list, and the server may be gone (its
    // destructor closes every session; coroutine frames can outlive it at shutdown).
    if (!closed_) {
        record_duration();
        server_.session_closed(this);
    }
}

void ServerSession::record_duration() const {
    // Sessions that went through the handshake: a stateless request's throw-away session
    // is no session to its client.
    if (!initialized()) return;
    observability::record_server_session(
        name(revision_), std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count());
}

void ServerSession::close() {
    if (closed_) return;
    closed_ = true;
    record_duration();
    server_.session_closed(this);
    peer_.stop_serving_all("session closed");
    if (peer_.pending() > 0) peer_.fail_all(std::make_exception_ptr(OperationCancelled("session closed")));
}

void ServerSession::send(const Json& message, const RequestId* related) {
    if (closed_) return;
    output_(message, related);
}

void ServerSession::notify(std::string_view method, Json params) {
    if (closed_ || state_ != State::operating) return;
    send(make_notification(method, std::move(params)), nullptr);
}

void ServerSession::reject(const ProtocolError& error) {
    send(make_error(error.id, error.code, error.message), error.id.is_null() ? nullptr : &error.id);
}

void ServerSession::receive(Message message) {
    if (closed_) return;
    std::visit(
        [this](auto&& m) {
            using M = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<M, Request>) on_request(std::move(m));
            else if constexpr (std::is_same_v<M, Notification>) on_notification(m);
            // A late or unknown reply is dropped.
            else if constexpr (std::is_same_v<M, Response>) peer_.receive_reply(std::move(m));
            else peer_.receive_error(m);
        },
        std::move(message));
}

const Json& ServerSession::or_empty(const Json& object) {
    static const Json empty = Json::object();
    return object.is_null() ? empty : object;
}

const std::unordered_map<std::string_view, ServerSession::Handler>& ServerSession::method_table() {
    static const std::unordered_map<std::string_view, Handler> table = {
        {"ping", &ServerSession::ping},
        {"logging/setLevel", &ServerSession::set_log_level},
        {"tools/list", &ServerSession::list_tools},
        {"tools/call", &ServerSession::call_tool},
        {"resources/list", &ServerSession::list_resources},
        {"resources/templates/list", &ServerSession::list_resource_templates},
        {"resources/read", &ServerSession::read_resource},
        {"resources/subscribe", &ServerSession::subscribe},
        {"resources/unsubscribe", &ServerSession::unsubscribe},
        {"prompts/list", &ServerSession::list_prompts},
        {"prompts/get", &ServerSession::get_prompt},
        {"completion/complete", &ServerSession::complete},
        {"server/discover", &ServerSession::discover},
        {"subscriptions/listen", &ServerSession::listen},
    };
    return table;
}

bool ServerSession::method_allowed(std::string_view method, Revision revision) {
    if (is_stateless(revision)) {
        // Removed in 2026-07-28 (ping, setLevel, subscribe: replaced by _meta and
        // subscriptions/listen).
        return method != "ping" && method != "logging/setLevel" && method != "resources/subscribe" &&
               method != "resources/unsubscribe";
    }
    if (method == "server/discover" || method == "subscriptions/listen") return false;
    if (method == "completion/complete") return has_completions(revision);
    return true;
}

void ServerSession::receive_stateless(Request request, const StatelessMeta& meta) {
    if (!closed_) on_request(std::move(request), &meta);
}

void ServerSession::on_request(Request request, const StatelessMeta* known_meta) {
    const RequestId id = request.id;
    if (!request.params.is_null() && !request.params.is_object()) {
        refuse(request, revision_,
               make_error(id, error_code::kInvalidParams, "Invalid params: \"params\" must be an object"));
        return;
    }

    // Which revision governs this request: its own _meta (stateless revision) or the
    // session's handshake.
    StatelessMeta read_meta;
    if (!known_meta) read_meta = read_stateless_meta(request.params);
    const StatelessMeta& stateless = known_meta ? *known_meta : read_meta;
    if (stateless.present && !stateless.revision) {
        refuse(request, revision_, unsupported_version_error(id, stateless.requested));
        return;
    }
    Revision revision = revision_;
    if (stateless.present && is_stateless(*stateless.revision)) {
        revision = *stateless.revision;
        if (request.method == "initialize") {
            refuse(request, revision,
                   make_error(id, error_code::kMethodNotFound,
                              fmt::format("Method not found: initialize is not part of protocol {}; "
                                          "call server/discover instead",
                                          name(revision))));
            return;
        }
    } else {
        if (request.method == "initialize") {
            RequestTrace trace;
            if (observability::tracer().enabled()) {
                trace = start_request_span(request.method, request.params, id, caller_, revision_);
            }
            Json reply = handle_initialize(request);
            if (auto error = reply.find("error"); error != reply.end()) {
                end_request_span_with_error(trace.span, error->value("code", 0), error->value("message", ""));
            } else if (trace.span.recording()) {
                trace.span.set_attribute("mcp.protocol.version", protocol::name(revision_));  // as negotiated
            }
            trace.span.end();
            send(reply, &id);
            return;
        }
        if (state_ == State::fresh && request.method != "ping") {
            refuse(request, revision_,
                   make_error(id, error_code::kInvalidRequest,
                              fmt::format("Invalid Request: \"{}\" before initialize; send initialize first "
                                          "(or, for protocol {}, put the version in _meta)",
                                          util::sanitize_for_message(request.method, 100), name(kLatest))));
            return;
        }
    }

    const auto& table = method_table();
    auto it = table.find(request.method);
    Handler handler = nullptr;
    if (it != table.end()) {
        if (method_allowed(request.method, revision)) handler = it->second;
    } else if (const auto* method = server_.extension_method(request.method);
               method && server_.source_visible(caller_, method->source)) {
        // (An extension of a source the caller does not see is as unknown as any method.)
        handler = &ServerSession::call_extension;
    }
    if (!handler) {
        refuse(request, revision,
               make_error(id, error_code::kMethodNotFound,
                          fmt::format("Method not found: {}", util::sanitize_for_message(request.method, 100))));
        return;
    }
    if (is_stateless(revision)) {
        if (auto missing = check_required_capabilities(request, stateless); !missing.is_null()) {
            refuse(request, revision, std::move(missing));
            return;
        }
    }

    if (peer_.serving(id)) {
        send(make_error(id, error_code::kInvalidRequest, "Invalid Request: a request with this id is still in progress"),
             &id);
        return;
    }
    // (One relaxed load when tracing is off.)
    RequestTrace trace;
    if (observability::tracer().enabled()) {
        trace = start_request_span(request.method, request.params, id, caller_, revision);
    }
    auto ctx = std::make_unique<RequestContext>(shared_from_this(), id, std::move(request.method),
                                                std::move(request.params), revision);
    if (trace.span.context().valid()) ctx->set_trace(std::move(trace.span), std::move(trace.baggage));
    peer_.begin_serving(id, [raw = ctx.get()](const std::string& reason) { raw->abandon(reason); });
    // The request's log lines carry its trace and span ids, wherever its coroutines resume
    // (tracing off: it has none).
    if (observability::tracer().enabled()) {
        LogIdsScope log_ids(observability::log_ids_of(ctx->trace_context()));
        spawn(run(std::move(ctx), handler), [](std::exception_ptr) {});
        return;
    }
    spawn(run(std::move(ctx), handler), [](std::exception_ptr) {});
}

void ServerSession::refuse(const Request& request, Revision revision, Json reply) {
    // Refused before any handler ran: still a request served, with its span and metric.
    int code = 0;
    std::string message;
    if (auto error = reply.find("error"); error != reply.end() && error->is_object()) {
        code = error->value("code", 0);
        message = error->value("message", "");
    }
    if (observability::tracer().enabled()) {
        auto trace = start_request_span(request.method, request.params, request.id, caller_, revision);
        end_request_span_with_error(trace.span, code, message);
    }
    observability::record_server_operation(request.method, nullptr, std::to_string(code), 0.0);
    send(reply, &request.id);
}

Task<void> ServerSession::run(std::unique_ptr<RequestContext> ctx, Handler handler) {
    // Keep the session alive until this request is fully answered.
    auto self = shared_from_this();
    Json reply;
    const RequestId& id = ctx->request_id();
    auto& span = ctx->span();
    const auto started = std::chrono::steady_clock::now();
    // For the operation metric (observability/mcp_metrics.hpp): "" for success, or the
    // JSON-RPC code. A tools/call answered with a result is the pipeline's to record (its
    // observe stage knows the tool and the outcome without looking them up again).
    std::string error_type;
    bool record = true;
    try {
        Json result = co_await (this->*handler)(*ctx);
        record = ctx->method() != "tools/call";
        end_request_span_with_result(span, result);
        reply = make_response(id, finish_result(std::move(result), *ctx));
    } catch (const RpcError& e) {
        reply = make_error(id, e.code, util::sanitize_for_message(e.what(), 2000), e.data);
        error_type = std::to_string(e.code);
        end_request_span_with_error(span, e.code, e.what());
    } catch (const InputRequired& e) {
        reply = make_response(id, finish_result(input_required_result(e, *ctx), *ctx));
        span.add_event("mcp.input_required");
    } catch (const OperationCancelled&) {
        // A cancelled request gets no response (the client has forgotten it).
        span.add_event("mcp.cancelled");
        record = false;
    } catch (const std::exception& e) {
        reply = make_error(id, error_code::kInternalError,
                           "Internal error: " + util::sanitize_for_message(e.what(), 2000));
        error_type = std::to_string(error_code::kInternalError);
        end_request_span_with_error(span, error_code::kInternalError, "internal error");
    }
    span.end();
    if (record) {
        observability::record_server_operation(
            ctx->method(), error_type.empty() ? nullptr : tool_name_of(ctx->method(), ctx->params()), error_type,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    peer_.end_serving(id);
    if (!reply.is_null() && !ctx->abandoned()) {
        send(reply, &id);
    } else if (unanswered_) {
        unanswered_(id, ctx->abandoned() ? ctx->abandon_reason() : std::string("cancelled"));
    }
    util::release_json(reply);  // sent: freed without nlohmann's heap stack (util/json_release.hpp)
}

Json ServerSession::finish_result(Json result, const RequestContext& ctx) const {
    if (is_stateless(ctx.revision())) decorate_stateless_result(result, server_, output_serializes_);
    return result;
}

Json ServerSession::handle_initialize(const Request& request) {
    const Json& params = request.params;
    if (state_ != State::fresh) {
        return make_error(request.id, error_code::kInvalidRequest,
                          "Invalid Request: the session is already initialized");
    }
    if (!params.is_object() || !params.contains("protocolVersion") || !params["protocolVersion"].is_string()) {
        return make_error(request.id, error_code::kInvalidParams,
                          "Invalid params: initialize needs a string \"protocolVersion\"");
    }
    if (auto caps = params.find("capabilities"); caps != params.end()) {
        if (!caps->is_object()) {
            return make_error(request.id, error_code::kInvalidParams,
                              "Invalid params: \"capabilities\" must be an object");
        }
        client_capabilities_ = *caps;
    }
    if (auto info = params.find("clientInfo"); info != params.end() && info->is_object()) client_info_ = *info;

    // Negotiation: accept the client's revision when we speak it and it uses the handshake;
    // otherwise offer our latest handshake revision and let the client decide.
    auto requested = parse_revision(params["protocolVersion"].get<std::string>());
    revision_ = (requested && !is_stateless(*requested)) ? *requested : kLatestStateful;
    state_ = State::initializing;

    Json capabilities = server_.capabilities(revision_, &caller_);
    // Tasks of the 2025-11-25 model (server/tasks.hpp), when the server runs tasks.
    if (server_.tasks()) {
        if (Json tasks = TaskEngine::capability(revision_); !tasks.is_null()) capabilities["tasks"] = std::move(tasks);
    }
    Json result = {{"protocolVersion", std::string(name(revision_))},
                   {"capabilities", std::move(capabilities)},
                   {"serverInfo", server_.server_info()}};
    if (!server_.options().instructions.empty()) result["instructions"] = server_.options().instructions;
    return make_response(request.id, std::move(result));
}

void ServerSession::on_notification(const Notification& n) {
    if (n.method == "notifications/initialized") {
        if (state_ == State::initializing) state_ = State::operating;
        return;
    }
    if (n.method == "notifications/cancelled") {
        // One that finished already, or never existed, is ignored.
        peer_.receive_cancelled(n.params, "cancelled by client");
        return;
    }
    // notifications/roots/list_changed, notifications/progress and unknown notifications
    // need no answer; providers that care subscribe through the session later.
}

Task<Json> ServerSession::request_client(std::string method, Json params, const RequestId& related, CancelToken& token,
                                         Revision revision) {
    if (closed_) throw OperationCancelled("session closed");
    if (!has_server_requests(revision)) {
        throw std::runtime_error(fmt::format("{} is not available in protocol {}", method, name(revision)));
    }
    if (method == "elicitation/create" && !has_elicitation(revision)) {
        throw std::runtime_error(
            fmt::format("elicitation needs protocol 2025-06-18 or later; this session uses {}", name(revision)));
    }
    const char* capability = client_capability_for(method);
    if (capability && !client_capabilities_.contains(capability)) {
        throw std::runtime_error(
            fmt::format("the client did not declare the \"{}\" capability, so {} cannot be used", capability, method));
    }
    // Timed out or cancelled, the client is told to stop (Hooks::on_give_up above); an
    // error answer ends it with RpcError.
    auto request = peer_.begin({.method = method, .timeout = server_.options().client_request_timeout, .cancel = &token});
    send(make_request(request.id, method, std::move(params)), &related);
    co_return co_await request.reply;
}

bool ServerSession::should_log(LogLevel level, const RequestContext& ctx) const {
    if (is_stateless(ctx.revision())) {
        auto requested = stateless_log_level(ctx.meta());
        return requested && level >= *requested;
    }
    return level >= min_log_level_;
}

void ServerSession::restore(Revision revision, Json client_capabilities, Json client_info, LogLevel level,
                            std::set<std::string> subscriptions) {
    revision_ = revision;
    client_capabilities_ = client_capabilities.is_object() ? std::move(client_capabilities) : Json::object();
    client_info_ = client_info.is_object() ? std::move(client_info) : Json::object();
    min_log_level_ = level;
    state_ = State::operating;
    for (const auto& uri : subscriptions_) {
        if (!subscriptions.count(uri)) server_.subscription_changed(uri, false);
    }
    for (const auto& uri : subscriptions) {
        if (!subscriptions_.count(uri)) server_.subscription_changed(uri, true);
    }
    subscriptions_ = std::move(subscriptions);
}

bool ServerSession::owns_client_message(const Message& message) const {
    if (const auto* r = std::get_if<Response>(&message)) return peer_.pending_id(r->id).has_value();
    if (const auto* e = std::get_if<ErrorResponse>(&message)) return peer_.pending_id(e->id).has_value();
    if (const auto* n = std::get_if<Notification>(&message); n && n->method == "notifications/cancelled") {
        if (!n->params.is_object()) return true;
        auto id = n->params.find("requestId");
        return id == n->params.end() || peer_.serving(*id);
    }
    return true;
}

}  // namespace toolport
