#include "client/mcp_client.hpp"

#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "async/executor.hpp"
#include "client/mcp_client_listening.hpp"
#include "protocol/versions.hpp"
#include "toolport_version.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

using protocol::RequestId;

namespace {

// The id of one of our requests (we only send positive integers), if `id` can be one.
std::optional<std::int64_t> our_request_id(const RequestId& id) {
    if (!id.is_number_integer()) return std::nullopt;
    if (id.is_number_unsigned() && id.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return id.get<std::int64_t>();
}

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
bool refuses_handshake(const JsonRpcError& e) {
    return e.code == protocol::error_code::kMethodNotFound || e.code == protocol::error_code::kUnsupportedProtocolVersion;
}

}  // namespace

struct McpClient::Pending {
    std::string method;
    Completion<Json> reply;
    std::function<void()> cancel_timer;
    CancelToken* cancel = nullptr;
    CancelToken::CallbackId cancel_registration = 0;
    std::function<void(const Json&)> on_progress;
    std::uint64_t tag = 0;
};

McpClient::McpClient(Executor& executor, std::unique_ptr<ClientTransport> transport, ClientOptions options)
    : executor_(executor), transport_(std::move(transport)), options_(std::move(options)) {
    if (options_.client_version.empty()) options_.client_version = kToolportVersion;
}

McpClient::~McpClient() {
    // Callbacks still scheduled (timers, transport handlers, finishing sends) check this.
    alive_.reset();
    if (listening_) listening_->stop_retrying();
    fail_all(std::make_exception_ptr(ClientError("the MCP client was destroyed")));
    for (auto& [key, token] : serving_) token->cancel("client destroyed");
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
            auto it = pending_.find(std::stoll(request_id));
            if (it != pending_.end()) tag = it->second->tag;
        } catch (const std::exception&) {
        }
        receive(std::move(message), tag);
    };
    handlers.on_closed = [this, alive](const std::string& reason) {
        if (!alive.expired()) transport_closed(reason);
    };
    // The reply to a request was too large to read: fail that request now rather than at
    // its timeout (the server has answered; nothing to cancel).
    handlers.on_oversized = [this, alive](const RequestId& raw_id, std::size_t bytes_read, std::size_t limit) {
        if (alive.expired()) return;
        auto id = our_request_id(raw_id);
        auto it = id ? pending_.find(*id) : pending_.end();
        if (it == pending_.end()) return;
        const std::string message = fmt::format("{} answered {} with a message over {} bytes ({} bytes read)",
                                                describe_server(), it->second->method, limit, bytes_read);
        fail(*id, std::make_exception_ptr(ResponseTooLarge(message, bytes_read, limit, /*read_so_far=*/true)));
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
            std::optional<JsonRpcError> refusal;
            try {
                result = co_await initialize(std::string(protocol::name(chosen.value_or(protocol::kLatestStateful))));
            } catch (const JsonRpcError& e) {
                if (!may_fall_back || !refuses_handshake(e)) throw;
                refusal = e;
            }
            if (refusal) {
                spdlog::debug("MCP client: {} refused initialize ({} {}); trying the stateless revision",
                              describe_server(), refusal->code, util::sanitize_for_message(refusal->message, 200));
                try {
                    result = co_await discover();
                } catch (const JsonRpcError& e) {
                    throw JsonRpcError(e.code,
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
    Json result = co_await round_trip(
        ++next_id_, "initialize",
        {{"protocolVersion", offered},
         {"capabilities", options_.capabilities},
         {"clientInfo", {{"name", options_.client_name}, {"version", options_.client_version}}}});
    if (!result.is_object() || !result.contains("protocolVersion") || !result["protocolVersion"].is_string()) {
        throw ClientError(fmt::format("{} answered initialize without a \"protocolVersion\"", describe_server()));
    }
    const std::string version = result["protocolVersion"].get<std::string>();
    auto revision = protocol::parse_revision(version);
    if (!revision || protocol::is_stateless(*revision)) {
        throw ClientError(fmt::format(
            "{} negotiated protocol version \"{}\", which this client cannot use (it speaks {} with the "
            "initialize handshake)",
            describe_server(), util::sanitize_for_message(version, 40), protocol::supported_revisions_list()));
    }
    protocol_version_ = version;
    accept_server_description(result);
    transport_->use_protocol_version(version);
    co_await notify("notifications/initialized");
    co_return result;
}

void McpClient::accept_server_description(const Json& result) {
    if (auto caps = result.find("capabilities"); caps != result.end() && caps->is_object()) server_capabilities_ = *caps;
    if (auto info = result.find("serverInfo"); info != result.end() && info->is_object()) server_info_ = *info;
    if (auto text = result.find("instructions"); text != result.end() && text->is_string()) instructions_ = *text;
}

// ------------------------------------------------------------------ requests

Task<Json> McpClient::request(std::string method, Json params, RequestOptions options) {
    if (state_ == State::closed) throw TransportError(closed_reason_);
    if (state_ == State::fresh) throw ClientError("connect() first: the client has not done the handshake");
    if (!params.is_null() && !params.is_object()) throw ClientError(method + " params must be a JSON object");
    if (!stateless_) co_return co_await round_trip(++next_id_, std::move(method), std::move(params), std::move(options));
    if (removed_in_stateless(method)) {
        co_return co_await stand_in_for_removed(std::move(method), std::move(params), std::move(options));
    }
    co_return co_await stateless_request(std::move(method), std::move(params), std::move(options));
}

Task<Json> McpClient::round_trip(std::int64_t id, std::string method, Json params, RequestOptions options, bool timed) {
    if (state_ == State::closed) throw TransportError(closed_reason_);
    auto pending = std::make_shared<Pending>();
    pending->method = method;
    pending->tag = options.tag;
    if (options.on_progress) {
        if (params.is_null()) params = Json::object();
        if (!params.contains("_meta") || !params["_meta"].is_object()) params["_meta"] = Json::object();
        params["_meta"]["progressToken"] = id;  // unique among this client's active requests
        pending->on_progress = std::move(options.on_progress);
    }
    Completion<Json> reply = pending->reply;
    pending_.emplace(id, pending);

    std::weak_ptr<bool> alive = alive_;
    const auto timeout = options.timeout.value_or(options_.request_timeout);
    pending->cancel_timer = [] {};
    if (timed) {
        pending->cancel_timer = executor_.schedule_after(timeout, [this, alive, id, method, timeout]() {
            if (alive.expired()) return;
            fail(id, std::make_exception_ptr(RequestTimeout(method, timeout)),
                 fmt::format("timed out after {} ms", timeout.count()));
        });
    }
    if (options.cancel) {
        pending->cancel = options.cancel;
        // The token may fire inside its owner's code (or at once, when already fired).
        pending->cancel_registration = options.cancel->on_cancel([this, alive, id]() {
            executor_.post([this, alive, id]() {
                if (!alive.expired()) fail(id, std::make_exception_ptr(OperationCancelled()), "cancelled by the client");
            });
        });
    }

    spawn(transport_->send(protocol::make_request(id, method, std::move(params))),
          [this, alive, id](std::exception_ptr error) {
              if (error && !alive.expired()) fail(id, error);
          });
    co_return co_await reply;
}

Task<void> McpClient::notify(std::string method, Json params) {
    if (state_ == State::closed) throw TransportError(closed_reason_);
    if (state_ == State::fresh) throw ClientError("connect() first: the client has not done the handshake");
    if (!transport_->notifications_reach_server()) {
        throw ClientError(fmt::format("{} cannot be sent {}: notifications have no way to the server in the "
                                      "stateless revision over HTTP",
                                      method, describe_server()));
    }
    co_await transport_->send(protocol::make_notification(method, std::move(params)));
}

Task<std::vector<Json>> McpClient::list_tools(RequestOptions options) {
    std::vector<Json> tools;
    std::set<std::string> cursors_seen;
    std::string cursor;
    for (;;) {
        Json params = Json::object();
        if (!cursor.empty()) params["cursor"] = cursor;
        Json page = co_await request("tools/list", std::move(params), options);
        if (!page.is_object() || !page.contains("tools") || !page["tools"].is_array()) {
            throw ClientError(fmt::format("{} answered tools/list without a \"tools\" array", describe_server()));
        }
        for (auto& tool : page["tools"]) tools.push_back(std::move(tool));
        auto next = page.find("nextCursor");
        if (next == page.end() || next->is_null() || (next->is_string() && next->get<std::string>().empty())) break;
        if (!next->is_string()) {
            throw ClientError(fmt::format("{} answered tools/list with a \"nextCursor\" that is not a string",
                                          describe_server()));
        }
        cursor = next->get<std::string>();
        // A server that hands out a cursor twice would keep us paging forever.
        if (!cursors_seen.insert(cursor).second) {
            throw ClientError(fmt::format("{} repeated a tools/list cursor after {} tools; stopped paging",
                                          describe_server(), tools.size()));
        }
    }
    co_return tools;
}

Task<Json> McpClient::call_tool(std::string name, Json arguments, RequestOptions options) {
    if (arguments.is_null()) arguments = Json::object();
    if (!arguments.is_object()) throw ClientError("tool arguments must be a JSON object");
    Json params = {{"name", name}, {"arguments", std::move(arguments)}};
    Json result = co_await request("tools/call", std::move(params), std::move(options));
    if (!result.is_object()) {
        throw ClientError(fmt::format("{} answered tools/call for {} with a result that is not an object",
                                      describe_server(), name));
    }
    co_return result;
}

void McpClient::terminate() {
    close_called_ = true;
    state_ = State::closed;
    closed_reason_ = "the client was terminated";
    if (listening_) listening_->stop_retrying();
    fail_all(std::make_exception_ptr(TransportError(closed_reason_)));
    auto serving = std::move(serving_);
    serving_.clear();
    for (auto& [key, token] : serving) token->cancel("client terminated");
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
    fail_all(std::make_exception_ptr(TransportError(closed_reason_)));
    auto serving = std::move(serving_);
    serving_.clear();
    for (auto& [key, token] : serving) token->cancel("client closed");
    // A stdio server finishes its requests before it exits, and a subscriptions/listen
    // never finishes by itself: it is cancelled first, or the server would wait for it
    // until it is signalled. (Over HTTP closing its stream is what cancels it.)
    if (was_ready && transport_->notifications_reach_server()) {
        for (auto id : listens) {
            try {
                co_await transport_->send(protocol::make_notification(
                    "notifications/cancelled", {{"requestId", id}, {"reason", "the client is closing"}}));
            } catch (...) {
                break;  // the connection is gone already
            }
        }
    }
    // Also after the transport ended by itself: closing again is harmless and reaps what is left.
    co_await transport_->close();
}

void McpClient::finish(std::int64_t id, Json result) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // answered after its timeout: dropped
    auto pending = it->second;
    pending_.erase(it);
    pending->cancel_timer();
    if (pending->cancel) pending->cancel->remove(pending->cancel_registration);
    // Resume the requester from the loop, not from inside the transport's read path.
    executor_.post([reply = pending->reply, result = std::move(result)]() mutable { reply.set_value(std::move(result)); });
}

void McpClient::fail(std::int64_t id, std::exception_ptr error, const std::string& cancel_reason) {
    auto it = pending_.find(id);
    if (it == pending_.end()) return;
    auto pending = it->second;
    pending_.erase(it);
    pending->cancel_timer();
    if (pending->cancel) pending->cancel->remove(pending->cancel_registration);
    // The spec forbids cancelling initialize; for everything else, tell the server to stop
    // (over stateless HTTP abandoning the request's stream is what tells it).
    if (!cancel_reason.empty() && state_ != State::closed) {
        transport_->abandon(RequestId(id));
        if (pending->method != "initialize" && transport_->notifications_reach_server()) {
            spawn(transport_->send(protocol::make_notification("notifications/cancelled",
                                                               {{"requestId", id}, {"reason", cancel_reason}})),
                  [](std::exception_ptr) {});
        }
    }
    executor_.post([reply = pending->reply, error]() mutable { reply.set_error(error); });
}

void McpClient::fail_all(const std::exception_ptr& error) {
    std::vector<std::int64_t> ids;
    for (const auto& [id, pending] : pending_) ids.push_back(id);
    for (auto id : ids) fail(id, error);
}

void McpClient::transport_closed(const std::string& reason) {
    if (state_ == State::closed) return;
    state_ = State::closed;
    closed_reason_ = reason;
    if (listening_) listening_->stop_retrying();
    spdlog::debug("MCP client: {}: {}", describe_server(), reason);
    fail_all(std::make_exception_ptr(TransportError(reason)));
    auto serving = std::move(serving_);
    serving_.clear();
    for (auto& [key, token] : serving) token->cancel("connection closed");
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
    if (auto* response = std::get_if<protocol::Response>(&message)) {
        auto id = our_request_id(response->id);
        if (!id) {
            spdlog::warn("MCP client: {} answered with id {}, which no request of ours has (ignored)",
                         describe_server(), util::sanitize_for_message(protocol::id_text(response->id), 100));
            return;
        }
        finish(*id, std::move(response->result));
    } else if (auto* error = std::get_if<protocol::ErrorResponse>(&message)) {
        auto id = our_request_id(error->id);
        if (!id) {
            spdlog::warn("MCP client: {} reported an error about no request of ours: {} {}", describe_server(),
                         error->code, util::sanitize_for_message(error->message, 300));
            return;
        }
        fail(*id, std::make_exception_ptr(JsonRpcError(error->code, error->message, error->data)));
    } else if (auto* notification = std::get_if<protocol::Notification>(&message)) {
        related_tag_ = related_tag;
        on_server_notification(*notification);
        related_tag_ = 0;
    } else {
        answer_server_request(std::move(std::get<protocol::Request>(message)), related_tag);
    }
}

void McpClient::malformed_message(const protocol::ProtocolError& problem, bool reply_shaped) {
    auto id = our_request_id(problem.id);
    auto it = id ? pending_.find(*id) : pending_.end();
    if (!reply_shaped || it == pending_.end()) {
        spdlog::warn("MCP client: {} sent a malformed message (ignored): {}", describe_server(),
                     util::sanitize_for_message(problem.message, 300));
        return;
    }
    // That was the answer to one of our requests, so no proper one will come: fail it now
    // rather than at its timeout.
    const std::string method = it->second->method;
    spdlog::warn("MCP client: {} answered {} with a malformed reply: {}", describe_server(), method,
                 util::sanitize_for_message(problem.message, 300));
    fail(*id, std::make_exception_ptr(ClientError(
                  fmt::format("{} answered {} with a malformed reply: {}", describe_server(), method,
                              util::sanitize_for_message(problem.message, 300)))));
}

void McpClient::on_server_notification(const protocol::Notification& n) {
    const Json& params = n.params;
    if (n.method == "notifications/progress" && params.is_object()) {
        auto token = params.find("progressToken");
        if (token != params.end() && token->is_number_integer()) {
            auto it = pending_.find(token->get<std::int64_t>());
            if (it != pending_.end() && it->second->on_progress) {
                auto on_progress = it->second->on_progress;  // the callback may end the request
                on_progress(params);
            }
        }
    } else if (n.method == "notifications/cancelled" && params.is_object() && params.contains("requestId")) {
        auto it = serving_.find(params["requestId"].dump());
        if (it != serving_.end()) {
            auto token = it->second;
            token->cancel(params.value("reason", std::string("cancelled by the server")));
        }
    }
    if (stateless_ && !note_listen_notification(n.method, params)) return;
    if (on_notification_) on_notification_(n.method, params);
}

void McpClient::answer_server_request(protocol::Request request, std::uint64_t related_tag) {
    auto token = std::make_shared<CancelToken>();
    serving_[request.id.dump()] = token;
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
            throw JsonRpcError(protocol::error_code::kMethodNotFound, "Method not found: " + request.method);
        } else {
            result = co_await on_request_(ServerRequest{request.id, request.method, request.params, *cancel, related_tag});
            if (!result.is_object()) throw std::runtime_error("the client's answer is not a JSON object");
        }
        reply = protocol::make_response(request.id, std::move(result));
    } catch (const JsonRpcError& e) {
        reply = protocol::make_error(request.id, e.code, e.message, e.data);
    } catch (const OperationCancelled&) {
        // Cancelled by the server or by close(): no answer is sent.
    } catch (const std::exception& e) {
        reply = protocol::make_error(request.id, protocol::error_code::kInternalError,
                                     "Internal error: " + util::sanitize_for_message(e.what(), 1000));
    }
    if (alive.expired()) co_return;
    if (auto it = serving_.find(request.id.dump()); it != serving_.end() && it->second == cancel) serving_.erase(it);
    if (reply.is_null() || cancel->cancelled() || state_ == State::closed) co_return;
    try {
        co_await transport_->send(std::move(reply));
    } catch (const std::exception& e) {
        if (!alive.expired()) {
            spdlog::warn("MCP client: could not answer {}'s {}: {}", describe_server(), request.method, e.what());
        }
    } catch (const OperationCancelled&) {
        // The connection is closing: the server no longer waits for the answer.
    }
}

}  // namespace toolport::client
