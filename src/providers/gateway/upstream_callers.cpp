// Upstream: callers and credentials. What the upstream says or asks during a call (log
// messages, sampling, elicitation, roots) goes to the client request it belongs to, within
// that call's budget; auth: the source's token or a caller's exchanged one on each request,
// `toolport login` tokens, and (token_exchange) each caller's own connection.
#include "providers/gateway/upstream.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/completion.hpp"
#include "async/executor.hpp"
#include "auth/upstream_credentials.hpp"
#include "client/http_authorizer.hpp"
#include "client/mcp_client.hpp"
#include "client/oauth/oauth_authorizer.hpp"
#include "client/oauth/token_store.hpp"
#include "providers/gateway/upstream_internal.hpp"
#include "providers/secret_redaction.hpp"
#include "server/input_required.hpp"
#include "server/request_context.hpp"
#include "server/tool_error.hpp"
#include "async/asio_executor.hpp"
#include "util/digest.hpp"
#include "util/sanitize.hpp"
#include "providers/credentials_tool_error.hpp"

namespace toolport::gateway {

using client::McpClient;

namespace {

LogLevel log_level_of(const Json& params) {
    if (params.is_object() && params.contains("level") && params["level"].is_string()) {
        if (auto level = parse_log_level(params["level"].get<std::string>())) return *level;
    }
    return LogLevel::info;
}

// auth: the Authorization header of every request on one connection: the source's own
// token (the gateway's connection) or one caller's exchanged token. A 401 drops the token
// it refused and the request goes again, once, with a new one.
class CredentialsAuthorizer final : public client::HttpAuthorizer {
public:
    // `subject_token`: nullopt for the gateway's own connection.
    CredentialsAuthorizer(std::shared_ptr<auth::UpstreamCredentials> credentials,
                          std::optional<std::string> subject_token)
        : credentials_(std::move(credentials)), subject_token_(std::move(subject_token)) {}

    Task<std::string> authorization() override {
        std::string value;
        try {
            value = subject_token_ ? co_await credentials_->for_caller(*subject_token_)
                                   : co_await credentials_->for_source();
        } catch (const auth::UpstreamCredentialsError& e) {
            throw client::AuthorizationError(e.what());
        }
        if (expect_fresh_) {
            // Obtained after a refusal: if this one is refused too, right away, a new one
            // will not help. (Refused later, say once revoked, it is replaced as any other.)
            const auto now = std::chrono::steady_clock::now();
            std::erase_if(fresh_, [&](const auto& f) { return now - f.second > kFreshFor; });
            fresh_.emplace_back(value, now);
            expect_fresh_ = false;
        }
        last_ = value;
        co_return value;
    }

    Task<bool> refused(unsigned status, std::string) override {
        // 403 is about what the token allows, which a new token of the same grant would not change.
        if (status != 401 || last_.empty()) co_return false;
        const auto now = std::chrono::steady_clock::now();
        for (const auto& [value, obtained] : fresh_) {
            if (value == last_ && now - obtained <= kFreshFor)
                throw client::AuthorizationError("the upstream refused (401) a token just obtained for it");
        }
        credentials_->rejected(last_);
        expect_fresh_ = true;
        co_return true;
    }

private:
    std::shared_ptr<auth::UpstreamCredentials> credentials_;
    std::optional<std::string> subject_token_;
    std::string last_;
    static constexpr std::chrono::seconds kFreshFor{10};
    std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> fresh_;
    bool expect_fresh_ = false;
};

}  // namespace

namespace upstream_detail {

std::shared_ptr<client::HttpAuthorizer> credentials_authorizer(std::shared_ptr<auth::UpstreamCredentials> credentials,
                                                               std::optional<std::string> subject_token) {
    return std::make_shared<CredentialsAuthorizer>(std::move(credentials), std::move(subject_token));
}

}  // namespace upstream_detail

using upstream_detail::credentials_authorizer;

namespace {

// Counts a request of the upstream's on the caller it is relayed for while it runs; the
// last one to end wakes the forwarding waiting for them (send_for), on the loop's next turn.
class RelayHold {
public:
    RelayHold(Upstream::Caller& caller, Executor& executor) : caller_(caller), executor_(executor) { ++caller_.relays; }
    ~RelayHold() {
        if (--caller_.relays > 0 || !caller_.relays_done) return;
        executor_.post([done = *caller_.relays_done]() mutable { done.set_value(true); });
    }
    RelayHold(const RelayHold&) = delete;
    RelayHold& operator=(const RelayHold&) = delete;

private:
    Upstream::Caller& caller_;
    Executor& executor_;
};

}  // namespace

void Upstream::Caller::stash(std::exception_ptr outcome) {
    if (!stashed) stashed = std::move(outcome);
    cancel.cancel("the client must answer first");
}

// ------------------------------------------------------------------ from the upstream

void Upstream::on_notification(const std::string& method, const Json& params, std::uint64_t related_tag) {
    if (method == "notifications/tools/list_changed") return relist("tools");
    if (method == "notifications/resources/list_changed") return relist("resources");
    if (method == "notifications/prompts/list_changed") return relist("prompts");
    if (method == "notifications/resources/updated") {
        if (params.is_object() && params.contains("uri") && params["uri"].is_string() && listener_.resource_updated) {
            listener_.resource_updated(params["uri"].get<std::string>());
        }
        return;
    }
    if (method == "notifications/message") {
        const Json data = params.is_object() ? params.value("data", Json()) : Json();
        std::string logger = name();
        if (params.is_object() && params.contains("logger") && params["logger"].is_string()) {
            logger += "/" + util::sanitize_for_message(params["logger"].get<std::string>(), 100);
        }
        const std::string text = data.dump(-1, ' ', false, Json::error_handler_t::replace);
        // Within the upstream's limits first (a flood is dropped whoever it is for), then
        // within the call's budget.
        if (!output_->admit_log_message(text.size() + logger.size())) return;
        if (auto* caller = caller_for(related_tag)) {
            if (within_budget(*caller, text.size() + logger.size()))
                caller->ctx->log(log_level_of(params), data, logger);
        } else {
            spdlog::info("upstream {} log: {}", logger,
                         util::sanitize_for_message(text,
                                                    std::min<std::size_t>(500, settings_.output_limits.line_bytes)));
        }
    }
    // notifications/progress reaches the request it belongs to through McpClient.
}

bool Upstream::within_budget(Caller& caller, std::size_t bytes) {
    if (!caller.budget || caller.budget->admit(bytes)) return true;
    output_->count_call_drop(bytes);
    auto entry = call_budgets_.find(caller.ctx);
    if (entry != call_budgets_.end() && !entry->second.told) {
        entry->second.told = true;
        spdlog::info(
            "upstream {}: a call passed its budget of {} bytes of log messages and progress "
            "(upstreams.{}.output_limits.call_notification_bytes); the rest of them are dropped",
            name(), settings_.output_limits.call_notification_bytes, name());
    }
    return false;
}

Upstream::Caller* Upstream::caller_for(std::uint64_t tag) {
    if (tag != 0) {
        for (auto* caller : in_flight_) {
            if (caller->tag == tag) return caller;
        }
        return nullptr;  // that call has ended
    }
    // Streamable HTTP tells what a message is about: one that came on no call's stream
    // (the GET stream) is about none, whatever is in flight.
    if (settings_.transport == UpstreamTransport::streamable_http) return nullptr;
    if (in_flight_.size() <= 1) return in_flight_.empty() ? nullptr : in_flight_.front();
    const std::string& session = in_flight_.back()->ctx->caller().session_id;
    for (auto* caller : in_flight_) {
        if (session.empty() || caller->ctx->caller().session_id != session) return nullptr;
    }
    return in_flight_.back();
}

Task<Json> Upstream::on_request(const client::ServerRequest& request) {
    Caller* caller = caller_for(request.related_tag);
    // Asked outside any call (servers ask for roots when they start): the gateway itself
    // has no roots to offer.
    if (!caller && request.method == "roots/list") co_return Json{{"roots", Json::array()}};
    if (!caller) {
        throw protocol::RpcError(
            -32603, in_flight_.empty()
                        ? fmt::format("{} goes to the client whose call caused it, and no call of a client is in "
                                      "progress on this upstream",
                                      request.method)
                        : fmt::format("{} goes to the client whose call caused it, and the gateway cannot tell which "
                                      "of the {} calls in progress (of different clients) that is",
                                      request.method, in_flight_.size()));
    }
    // The caller's forwarding (and its RequestContext) lasts until this ends.
    RelayHold relay(*caller, executor_);
    if (const char* capability = client_capability_for(request.method)) {
        try {
            caller->ctx->require_client_capability(capability);
        } catch (const RpcError&) {
            // Where the request is known to be about this call, the call ends with -32021
            // (what a server of its own would say). Where it is only presumed (stdio, the
            // 2024 transport), the call goes on: the request may be about none (roots are
            // asked for at start) — a client without roots has none to give.
            if (request.related_tag != 0) caller->stash(std::current_exception());
            else if (request.method == "roots/list") co_return Json{{"roots", Json::array()}};
            throw protocol::RpcError(-32601, fmt::format("the client of this call does not support {} (it did "
                                                         "not declare the {} capability)",
                                                         request.method, capability));
        }
    }
    // The upstream's own name for the answer, when it is a Toolport (request_context.hpp).
    Json params = request.params;
    std::string key;
    if (params.is_object() && params.contains("_meta") && params["_meta"].is_object()) {
        auto& meta = params["_meta"];
        if (auto it = meta.find(kInputKeyMeta); it != meta.end()) {
            if (it->is_string()) key = it->get<std::string>();
            meta.erase(it);
        }
        if (meta.empty()) params.erase("_meta");
    }
    // On the caller's span: the upstream asked its client something, and what came of it.
    auto& span = caller->ctx->span();
    if (span.recording()) {
        span.add_event("mcp.upstream_request.relayed",
                       {{"mcp.method.name", request.method}, {"toolport.upstream", name()}});
    }
    std::exception_ptr input_required;
    try {
        co_return co_await caller->ctx->ask_client({request.method, std::move(params), key, &caller->cancel});
    } catch (const RpcError& e) {
        if (span.recording()) {
            span.add_event("mcp.upstream_request.error",
                           {{"mcp.method.name", request.method}, {"error.type", std::to_string(e.code)}});
        }
        // Over a session it is the client's answer, which goes back to the upstream as it
        // is. A stateless client answers in the retried call, so there it is our own
        // refusal of those answers (a tampered requestState), which ends the client's
        // call too, as it would on a server of its own.
        if (protocol::is_stateless(caller->ctx->revision())) caller->stash(std::current_exception());
        throw;
    } catch (const InputRequired&) {
        // A stateless (2026-07-28) client is asked through an InputRequiredResult: the
        // client's call ends with it, and its retry with the answers calls the upstream
        // again, which asks again and this time gets them.
        input_required = std::current_exception();
    } catch (const OperationCancelled&) {
        // Given up because the upstream request it came with has ended: the upstream hears so.
        if (!caller->ended) throw;
        throw protocol::RpcError(-32603, fmt::format("the client had not answered {} when the request it was "
                                                     "relayed for ended",
                                                     request.method));
    }
    caller->stash(input_required);
    throw protocol::RpcError(-32603, "the client answers through a retried call (stateless revision)");
}

// ------------------------------------------------------------------ credentials, and each caller's connection

bool Upstream::uses_login() const {
    return settings_.auth && settings_.auth->type == auth::UpstreamAuthSettings::Type::login;
}

std::string Upstream::login_suggestion() const {
    std::string command = "toolport login " + settings_.url;
    // The gateway reads that store only; a login that keeps its tokens elsewhere would not help.
    if (!settings_.auth->token_store.empty())
        command += " (with its token store at " + settings_.auth->token_store + ")";
    return "The upstream needs a user's OAuth authorization, which the gateway cannot ask for: run: " + command +
           "; the gateway picks the new tokens up when it next connects (no restart)";
}

std::shared_ptr<client::HttpAuthorizer> Upstream::login_authorizer() {
    client::oauth::OAuthOptions options;
    options.server_url = settings_.url;
    // A new authorizer per connection attempt: the store is read anew each time, so a
    // `toolport login` made since the last attempt is used.
    options.interactive = false;
    options.store_path = settings_.auth->token_store;
    if (options.store_path.empty()) {
        try {
            options.store_path = client::oauth::TokenStore::default_path();
        } catch (const client::oauth::TokenStoreError& e) {
            throw client::AuthorizationError(e.what());
        }
    }
    try {
        return std::make_shared<client::oauth::OAuthAuthorizer>(executor_, std::move(options));
    } catch (const std::invalid_argument& e) {
        throw client::TransportError(e.what());
    }
}

namespace {

// A caller's connection unused this long is closed (its next call opens another).
constexpr auto kCallerIdle = std::chrono::minutes(5);
// At most this many caller connections are open; past it the least recently used idle one closes.
constexpr std::size_t kMaxCallerConnections = 1000;

}  // namespace

bool Upstream::per_caller_connections() const { return credentials_ && credentials_->settings().exchanges(); }

Task<std::shared_ptr<McpClient>> Upstream::client_for(RequestContext& ctx, const char* what) {
    auto shared = ready_client(what);
    if (!per_caller_connections()) co_return shared;
    const std::string subject = ctx.caller().access_token;
    try {
        // Obtained here, so that a refusal is the call's own error; the connection's
        // authorizer then finds it cached.
        co_await credentials_->for_caller(subject);
    } catch (const auth::UpstreamCredentialsError& e) {
        throw providers::credentials_tool_error(e);
    }
    const std::string key = util::sha256_hex(subject);
    const auto now = std::chrono::steady_clock::now();
    if (auto it = caller_connections_.find(key); it != caller_connections_.end()) {
        it->second.last_used = now;
        if (it->second.client && it->second.client->is_open()) co_return it->second.client;
        if (!it->second.client) {
            Completion<std::shared_ptr<McpClient>> done;
            it->second.waiters.push_back(done);
            co_return co_await done;
        }
        it->second.client->terminate();  // it was lost: a new one
        caller_connections_.erase(it);
    }
    caller_connections_[key].last_used = now;
    std::shared_ptr<McpClient> client;
    std::exception_ptr error;
    try {
        client = co_await connect_caller(key, subject);
    } catch (const client::AuthorizationError& e) {
        error = std::make_exception_ptr(
            ToolError(ToolErrorCode::upstream_authorization_failed,
                      fmt::format("upstream {} refused the token exchanged for this caller: {}", name(),
                                  providers::redact_text(e.what(), secrets_))));
    } catch (const std::exception& e) {
        error = std::make_exception_ptr(
            ToolError(ToolErrorCode::upstream_error, fmt::format("upstream {}: connecting for this caller failed: {}",
                                                                 name(), providers::redact_text(e.what(), secrets_)))
                .transient(true));
    }
    auto it = caller_connections_.find(key);
    std::vector<Completion<std::shared_ptr<McpClient>>> waiters;
    if (it != caller_connections_.end()) {
        waiters = std::move(it->second.waiters);
        if (error) caller_connections_.erase(it);
        else it->second.client = client;
    } else if (!error) {
        // The gateway stopped meanwhile.
        client->terminate();
        error = std::make_exception_ptr(client::TransportError("the gateway is stopping"));
    }
    for (auto& waiter : waiters) {
        if (error) waiter.set_error(error);
        else waiter.set_value(client);
    }
    if (error) std::rethrow_exception(error);
    if (!cancel_sweep_) sweep_caller_connections();
    co_return client;
}

Task<std::shared_ptr<McpClient>> Upstream::connect_caller(std::string key, std::string subject_token) {
    auto client = new_client(std::make_shared<CredentialsAuthorizer>(credentials_, std::move(subject_token)));
    std::weak_ptr<Upstream> weak = weak_from_this();
    // What the upstream says on a caller's connection goes where it would on the gateway's
    // (progress, log messages, requests to the client of the call); the catalog is the
    // gateway connection's business.
    client->on_notification([weak, raw = client.get()](const std::string& method, const Json& params) {
        auto self = weak.lock();
        if (!self || method.find("/list_changed") != std::string::npos) return;
        self->on_notification(method, params, raw->related_tag());
    });
    client->on_disconnect([weak, key, raw = client.get()](const std::string& reason) {
        auto self = weak.lock();
        if (!self) return;
        auto it = self->caller_connections_.find(key);
        if (it == self->caller_connections_.end() || it->second.client.get() != raw) return;
        spdlog::info("upstream {}: a caller's connection ended: {}", self->name(),
                     util::sanitize_for_message(providers::redact_text(reason, self->secrets_), 300));
        // Not destroyed here: this runs inside the client's own callback.
        auto old = std::move(it->second.client);
        self->caller_connections_.erase(it);
        self->executor_.post([old]() mutable { old.reset(); });
    });
    co_await client->connect();
    co_return client;
}

void Upstream::sweep_caller_connections() {
    const auto now = std::chrono::steady_clock::now();
    // Idle: unused for kCallerIdle and held by nobody else (no call in flight on it).
    auto idle = [](const CallerConnection& c) { return c.client && c.client.use_count() == 1 && c.waiters.empty(); };
    for (auto it = caller_connections_.begin(); it != caller_connections_.end();) {
        if (idle(it->second) && now - it->second.last_used > kCallerIdle) {
            it->second.client->terminate();
            it = caller_connections_.erase(it);
        } else {
            ++it;
        }
    }
    while (caller_connections_.size() > kMaxCallerConnections) {
        auto oldest = caller_connections_.end();
        for (auto it = caller_connections_.begin(); it != caller_connections_.end(); ++it) {
            if (idle(it->second) &&
                (oldest == caller_connections_.end() || it->second.last_used < oldest->second.last_used))
                oldest = it;
        }
        if (oldest == caller_connections_.end()) break;
        oldest->second.client->terminate();
        caller_connections_.erase(oldest);
    }
    cancel_sweep_ = nullptr;
    if (caller_connections_.empty() || state() == State::stopped) return;
    std::weak_ptr<Upstream> weak = weak_from_this();
    cancel_sweep_ = executor_.schedule_after(std::chrono::duration_cast<std::chrono::milliseconds>(kCallerIdle / 5),
                                             [weak]() {
                                                 if (auto self = weak.lock()) {
                                                     self->cancel_sweep_ = nullptr;
                                                     self->sweep_caller_connections();
                                                 }
                                             });
}

}  // namespace toolport::gateway
