#include "client/mcp_client.hpp"

#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "async/executor.hpp"
#include "client/mcp_client_listening.hpp"
#include "client/stateless_http_headers.hpp"
#include "protocol/raw_json.hpp"
#include "protocol/versions.hpp"
#include "toolport_version.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

using protocol::RequestId;

namespace {

// The revision ClientOptions::protocol_version names; nullopt for "auto" (empty).
std::optional<protocol::Revision> chosen_revision(const std::string& text) {
    if (text.empty()) return std::nullopt;
    auto revision = protocol::parse_revision(text);
    if (!revision) {
        throw ClientError(fmt::format("protocol version \"{}\" is not one this client speaks ({}, or empty for auto)",
                                      util::sanitize_for_message(text, 40), protocol::supported_revisions_list()));
    }
    return revision;
}

// A server's answer to initialize saying it does not do the handshake at all (a server of
// the stateless revision only), rather than that something about ours was wrong.
bool refuses_handshake(const RpcError& e) {
    return e.code == protocol::error_code::kMethodNotFound ||
           e.code == protocol::error_code::kUnsupportedProtocolVersion;
}

}  // namespace

McpClient::McpClient(Executor& executor, std::unique_ptr<ClientTransport> transport, ClientOptions options)
    : executor_(executor),
      transport_(std::move(transport)),
      options_(std::move(options)),
      peer_(executor, {.on_give_up = [this](std::int64_t id, const std::string& method,
                                            const std::string& reason) { give_up(id, method, reason); },
                       .timeout_error =
                           [](const std::string& method, std::chrono::milliseconds after) {
                               return std::make_exception_ptr(RequestTimeout(method, after));
                           }}) {
    if (options_.client_version.empty()) options_.client_version = kToolportVersion;
}

McpClient::~McpClient() {
    // Callbacks still scheduled (timers, transport handlers, finishing sends) check this.
    alive_.reset();
    if (listening_) listening_->stop_retrying();
    end_all(std::make_exception_ptr(ClientError("the MCP client was destroyed")), "client destroyed");
    // The transport's destructor ends the connection at once (kills a child process).
}

// ------------------------------------------------------------------ handshake

Task<Json> McpClient::connect() {
    if (state_ != State::fresh) throw ClientError("connect() may be called only once per client");
    state_ = State::connecting;
    std::weak_ptr<bool> alive = alive_;
    ClientTransport::Handlers handlers;
    handlers.on_message = [this, alive](Json message) {
        if (!alive.expired()) receive(std::move(message));
    };
    handlers.on_message_about = [this, alive](Json message, const std::string& request_id) {
        if (alive.expired()) return;
        std::uint64_t tag = 0;
        try {
            tag = peer_.tag_of(std::stoll(request_id));
        } catch (const std::exception&) {}
        receive(std::move(message), tag);
    };
    handlers.on_closed = [this, alive](const std::string& reason) {
        if (!alive.expired()) transport_closed(reason);
    };
    // The reply to a request was too large to read: fail that request now rather than at
    // its timeout (the server has answered; nothing to cancel).
    handlers.on_oversized = [this, alive](const RequestId& raw_id, std::size_t bytes_read, std::size_t limit) {
        if (alive.expired()) return;
        auto id = peer_.pending_id(raw_id);
        if (!id) return;
        const std::string message = fmt::format("{} answered {} with a message over {} bytes ({} bytes read)",
                                                describe_server(), *peer_.method_of(*id), limit, bytes_read);
        peer_.fail(*id, std::make_exception_ptr(ResponseTooLarge(message, bytes_read, limit, /*read_so_far=*/true)));
    };

    std::exception_ptr error;
    Json result;
    try {
        // Checked before anything is opened: a typo must not start a server.
        const auto chosen = chosen_revision(options_.protocol_version);
        co_await transport_->open(std::move(handlers));
        if (chosen && protocol::is_stateless(*chosen)) {
            result = co_await discover();
        } else {
            const bool may_fall_back = !chosen;
            std::optional<RpcError> refusal;
            try {
                result = co_await initialize(std::string(protocol::name(chosen.value_or(protocol::kLatestStateful))));
            } catch (const RpcError& e) {
                if (!may_fall_back || !refuses_handshake(e)) throw;
                refusal = e;
            }
            if (refusal) {
                spdlog::debug("MCP client: {} refused initialize ({} {}); trying the stateless revision",
                              describe_server(), refusal->code, util::sanitize_for_message(refusal->message, 200));
                try {
                    result = co_await discover();
                } catch (const RpcError& e) {
                    throw RpcError(e.code,
                                   fmt::format("{} refused initialize ({}) and server/discover: {}", describe_server(),
                                               util::sanitize_for_message(refusal->message, 200), e.message),
                                   e.data);
                }
            }
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (error) {
        // Never leave a half-open connection behind (a child process, an HTTP session).
        co_await close();
        std::rethrow_exception(error);
    }
    state_ = State::ready;
    if (stateless_) {
        start_listening();
    } else {
        transport_->handshake_done();
    }
    co_return result;
}

Task<Json> McpClient::initialize(const std::string& offered) {
    Json result = co_await round_trip("initialize",
                                      {{"protocolVersion", offered},
                                       {"capabilities", options_.capabilities},
                                       {"clientInfo",
                                        {{"name", options_.client_name}, {"version", options_.client_version}}}});
    if (!result.is_object() || !result.contains("protocolVersion") || !result["protocolVersion"].is_string()) {
        throw ClientError(fmt::format("{} answered initialize without a \"protocolVersion\"", describe_server()));
    }
    const std::string version = result["protocolVersion"].get<std::string>();
    auto revision = protocol::parse_revision(version);
    if (!revision || protocol::is_stateless(*revision)) {
        throw ClientError(
            fmt::format("{} negotiated protocol version \"{}\", which this client cannot use (it speaks {} with the "
                        "initialize handshake)",
                        describe_server(), util::sanitize_for_message(version, 40),
                        protocol::supported_revisions_list()));
    }
    protocol_version_ = version;
    accept_server_description(result);
    transport_->use_protocol_version(version);
    co_await notify("notifications/initialized");
    co_return result;
}

void McpClient::accept_server_description(const Json& result) {
    if (auto caps = result.find("capabilities"); caps != result.end() && caps->is_object())
        server_capabilities_ = *caps;
    if (auto info = result.find("serverInfo"); info != result.end() && info->is_object()) server_info_ = *info;
    if (auto text = result.find("instructions"); text != result.end() && text->is_string()) instructions_ = *text;
}

// ------------------------------------------------------------------ requests

Task<Json> McpClient::request(std::string method, Json params, RequestOptions options) {
    if (state_ == State::closed) throw TransportError(closed_reason_);
    if (state_ == State::fresh) throw ClientError("connect() first: the client has not done the handshake");
    if (!params.is_null() && !params.is_object()) throw ClientError(method + " params must be a JSON object");
    if (!stateless_) {
        // round_trip() in place: a coroutine frame less on every forwarded call.
        auto request = send_request(std::move(method), std::move(params), options, true);
        Json result = co_await request.reply;
        if (!options.raw_result) protocol::expand_raw_result_parts(result);
        co_return result;
    }
    if (removed_in_stateless(method)) {
        co_return co_await stand_in_for_removed(std::move(method), std::move(params), std::move(options));
    }
    co_return co_await stateless_request(std::move(method), std::move(params), std::move(options));
}

Task<Json> McpClient::round_trip(std::string method, Json params, RequestOptions options, bool timed) {
    auto request = send_request(std::move(method), std::move(params), options, timed);
    Json result = co_await request.reply;
    if (!options.raw_result) protocol::expand_raw_result_parts(result);
    co_return result;
}

protocol::RpcPeer::Started McpClient::send_request(std::string method, Json params, const RequestOptions& options,
                                                   bool timed, const std::function<void(std::int64_t id)>& registered) {
    if (state_ == State::closed) throw TransportError(closed_reason_);
    auto request = peer_.begin(
        {.method = method,
         .timeout = timed ? options.timeout.value_or(options_.request_timeout) : std::chrono::milliseconds(0),
         .cancel = options.cancel,
         .on_progress = options.on_progress,
         .tag = options.tag});
    if (options.on_progress) {
        if (params.is_null()) params = Json::object();
        if (!params.contains("_meta") || !params["_meta"].is_object()) params["_meta"] = Json::object();
        params["_meta"]["progressToken"] = request.id;  // unique among this client's requests
    }
    if (registered) registered(request.id);
    std::weak_ptr<bool> alive = alive_;
    spawn(transport_->send(protocol::make_request(request.id, method, std::move(params))),
          [this, alive, id = request.id](std::exception_ptr error) {
              if (error && !alive.expired()) peer_.fail(id, error);
          });
    return request;
}

Task<void> McpClient::notify(std::string method, Json params) {
    if (state_ == State::closed) throw TransportError(closed_reason_);
    if (state_ == State::fresh) throw ClientError("connect() first: the client has not done the handshake");
    if (!transport_->notifications_reach_server()) {
        throw ClientError(
            fmt::format("{} cannot be sent {}: notifications have no way to the server in the "
                        "stateless revision over HTTP",
                        method, describe_server()));
    }
    co_await transport_->send(protocol::make_notification(method, std::move(params)));
}

Task<std::vector<Json>> McpClient::list_tools(RequestOptions options) {
    std::vector<Json> tools;
    std::map<std::string, std::string> excluded;
    std::set<std::string> cursors_seen;
    std::string cursor;
    for (;;) {
        Json params = Json::object();
        if (!cursor.empty()) params["cursor"] = cursor;
        Json page = co_await request("tools/list", std::move(params), options);
        if (!page.is_object() || !page.contains("tools") || !page["tools"].is_array()) {
            throw ClientError(fmt::format("{} answered tools/list without a \"tools\" array", describe_server()));
        }
        for (auto& tool : page["tools"]) {
            if (stateless_) {
                if (auto problem = x_mcp_header_problem(tool)) {
                    const std::string name = tool.is_object() ? tool.value("name", std::string()) : std::string();
                    spdlog::warn("MCP client: {} lists tool {}, which is left out: {}", describe_server(),
                                 util::sanitize_for_message(name, 100), *problem);
                    excluded.emplace(name, *problem);
                    continue;
                }
            }
            tools.push_back(std::move(tool));
        }
        auto next = page.find("nextCursor");
        if (next == page.end() || next->is_null() || (next->is_string() && next->get<std::string>().empty())) break;
        if (!next->is_string()) {
            throw ClientError(
                fmt::format("{} answered tools/list with a \"nextCursor\" that is not a string", describe_server()));
        }
        cursor = next->get<std::string>();
        // A server that hands out a cursor twice would keep us paging forever.
        if (!cursors_seen.insert(cursor).second) {
            throw ClientError(fmt::format("{} repeated a tools/list cursor after {} tools; stopped paging",
                                          describe_server(), tools.size()));
        }
    }
    excluded_tools_ = std::move(excluded);
    co_return tools;
}

Task<Json> McpClient::call_tool(std::string name, Json arguments, RequestOptions options) {
    if (arguments.is_null()) arguments = Json::object();
    if (!arguments.is_object()) throw ClientError("tool arguments must be a JSON object");
    if (auto excluded = excluded_tools_.find(name); excluded != excluded_tools_.end()) {
        throw ClientError(fmt::format("{} lists tool {} with a definition this client cannot use ({}); not called",
                                      describe_server(), util::sanitize_for_message(name, 100), excluded->second));
    }
    Json params = {{"name", name}, {"arguments", std::move(arguments)}};
    Json result = co_await request("tools/call", std::move(params), std::move(options));
    if (!result.is_object()) {
        throw ClientError(
            fmt::format("{} answered tools/call for {} with a result that is not an object", describe_server(), name));
    }
    co_return result;
}

void McpClient::terminate() {
    close_called_ = true;
    state_ = State::closed;
    closed_reason_ = "the client was terminated";
    if (listening_) listening_->stop_retrying();
    end_all(std::make_exception_ptr(TransportError(closed_reason_)), "client terminated");
    transport_->terminate();
}

Task<void> McpClient::close() {
    if (close_called_) co_return;
    close_called_ = true;
    const bool was_ready = state_ == State::ready;
    std::vector<std::int64_t> listens;
    if (listening_) listens = stop_listening();
    state_ = State::closed;
    closed_reason_ = "the client was closed";
    end_all(std::make_exception_ptr(TransportError(closed_reason_)), "client closed");
    // A stdio server finishes its requests before it exits, and a subscriptions/listen
    // never finishes by itself: it is cancelled first, or the server would wait for it
    // until it is signalled. (Over HTTP closing its stream is what cancels it.)
    if (was_ready && transport_->notifications_reach_server()) {
        for (auto id : listens) {
            try {
                co_await transport_->send(
                    protocol::make_notification("notifications/cancelled",
                                                {{"requestId", id}, {"reason", "the client is closing"}}));
            } catch (...) {
                break;  // the connection is gone already
            }
        }
    }
    // Also after the transport ended by itself: closing again is harmless and reaps what is left.
    co_await transport_->close();
}

void McpClient::give_up(std::int64_t id, const std::string& method, const std::string& reason) {
    if (state_ == State::closed) return;
    // Over stateless HTTP abandoning the request's stream is what tells the server; the
    // spec forbids cancelling initialize.
    transport_->abandon(RequestId(id));
    if (method != "initialize" && transport_->notifications_reach_server()) {
        spawn(transport_->send(
                  protocol::make_notification("notifications/cancelled", {{"requestId", id}, {"reason", reason}})),
              [](std::exception_ptr) {});
    }
}

void McpClient::end_all(const std::exception_ptr& error, const std::string& reason) {
    peer_.fail_all(error);
    peer_.stop_serving_all(reason);
}

void McpClient::transport_closed(const std::string& reason) {
    if (state_ == State::closed) return;
    state_ = State::closed;
    closed_reason_ = reason;
    if (listening_) listening_->stop_retrying();
    spdlog::debug("MCP client: {}: {}", describe_server(), reason);
    end_all(std::make_exception_ptr(TransportError(reason)), "connection closed");
    if (on_disconnect_) on_disconnect_(reason);
}

// ------------------------------------------------------------------ incoming

void McpClient::receive(Json raw, std::uint64_t related_tag) {
    // Whether the server meant it as a reply: then a malformed one still answers our request.
    const bool reply_shaped = raw.is_object() && !raw.contains("method");
    auto parsed = protocol::classify(std::move(raw));
    if (auto* bad = std::get_if<protocol::ProtocolError>(&parsed)) {
        malformed_message(*bad, reply_shaped);
        return;
    }
    auto& message = std::get<protocol::Message>(parsed);
    // A reply to no pending request of ours (late after a timeout, or never ours) is dropped.
    if (auto* response = std::get_if<protocol::Response>(&message)) {
        // The id only for the log line of an unknown reply: its text is built then.
        protocol::RequestId id = response->id;
        if (!peer_.receive_reply(std::move(*response))) {
            spdlog::debug("MCP client: {} answered id {}, which no pending request of ours has (ignored)",
                          describe_server(), util::sanitize_for_message(protocol::id_text(id), 100));
        }
    } else if (auto* error = std::get_if<protocol::ErrorResponse>(&message)) {
        if (!peer_.receive_error(*error)) {
            spdlog::debug("MCP client: {} reported an error about no pending request of ours: {} {}", describe_server(),
                          error->code, util::sanitize_for_message(error->message, 300));
        }
    } else if (auto* notification = std::get_if<protocol::Notification>(&message)) {
        related_tag_ = related_tag;
        on_server_notification(*notification);
        related_tag_ = 0;
    } else {
        answer_server_request(std::move(std::get<protocol::Request>(message)), related_tag);
    }
}

void McpClient::malformed_message(const protocol::ProtocolError& problem, bool reply_shaped) {
    auto id = peer_.pending_id(problem.id);
    if (!reply_shaped || !id) {
        spdlog::warn("MCP client: {} sent a malformed message (ignored): {}", describe_server(),
                     util::sanitize_for_message(problem.message, 300));
        return;
    }
    // That was the answer to one of our requests, so no proper one will come: fail it now
    // rather than at its timeout.
    const std::string method = *peer_.method_of(*id);
    spdlog::warn("MCP client: {} answered {} with a malformed reply: {}", describe_server(), method,
                 util::sanitize_for_message(problem.message, 300));
    peer_.fail(*id, std::make_exception_ptr(
                        ClientError(fmt::format("{} answered {} with a malformed reply: {}", describe_server(), method,
                                                util::sanitize_for_message(problem.message, 300)))));
}

void McpClient::on_server_notification(const protocol::Notification& n) {
    const Json& params = n.params;
    if (n.method == "notifications/progress") {
        peer_.receive_progress(params);
    } else if (n.method == "notifications/cancelled") {
        peer_.receive_cancelled(params, "cancelled by the server");
    }
    if (stateless_ && !note_listen_notification(n.method, params)) return;
    if (on_notification_) on_notification_(n.method, params);
}

void McpClient::answer_server_request(protocol::Request request, std::uint64_t related_tag) {
    auto token = std::make_shared<CancelToken>();
    if (!peer_.begin_serving(request.id, [token](const std::string& reason) { token->cancel(reason); })) {
        spawn(send_reply(protocol::make_error(request.id, protocol::error_code::kInvalidRequest,
                                              "Invalid Request: a request with this id is still in progress"),
                         request.method),
              [](std::exception_ptr) {});
        return;
    }
    spawn(serve_request(std::move(request), token, related_tag), [](std::exception_ptr) {});
}

Task<void> McpClient::serve_request(protocol::Request request, std::shared_ptr<CancelToken> cancel,
                                    std::uint64_t related_tag) {
    std::weak_ptr<bool> alive = alive_;
    Json reply;
    try {
        Json result;
        if (request.method == "ping") {
            result = Json::object();  // either side may ping; the answer is always empty
        } else if (!on_request_) {
            throw RpcError(protocol::error_code::kMethodNotFound, "Method not found: " + request.method);
        } else {
            result = co_await on_request_(
                ServerRequest{request.id, request.method, request.params, *cancel, related_tag});
            if (!result.is_object()) throw std::runtime_error("the client's answer is not a JSON object");
        }
        reply = protocol::make_response(request.id, std::move(result));
    } catch (const RpcError& e) {
        reply = protocol::make_error(request.id, e.code, e.message, e.data);
    } catch (const OperationCancelled&) {
        // Cancelled by the server or by close(): no answer is sent.
    } catch (const std::exception& e) {
        reply = protocol::make_error(request.id, protocol::error_code::kInternalError,
                                     "Internal error: " + util::sanitize_for_message(e.what(), 1000));
    }
    if (alive.expired()) co_return;
    peer_.end_serving(request.id);
    if (reply.is_null() || cancel->cancelled() || state_ == State::closed) co_return;
    co_await send_reply(std::move(reply), std::move(request.method));
}

Task<void> McpClient::send_reply(Json reply, std::string method) {
    std::weak_ptr<bool> alive = alive_;
    try {
        co_await transport_->send(std::move(reply));
    } catch (const std::exception& e) {
        if (!alive.expired()) {
            spdlog::warn("MCP client: could not answer {}'s {}: {}", describe_server(), method, e.what());
        }
    } catch (const OperationCancelled&) {
        // The connection is closing: the server no longer waits for the answer.
    }
}

}  // namespace toolport::client
