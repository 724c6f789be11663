#include "providers/gateway/upstream.hpp"
#include "providers/gateway/upstream_tool_errors.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "async/completion.hpp"
#include "async/executor.hpp"
#include "auth/upstream_credentials.hpp"
#include "client/client_transport.hpp"
#include "client/http_authorizer.hpp"
#include "client/legacy_sse_transport.hpp"
#include "client/mcp_client.hpp"
#include "client/oauth/oauth_authorizer.hpp"
#include "client/oauth/token_store.hpp"
#include "http_client/http_client.hpp"
#include "observability/metrics.hpp"
#include "providers/secret_redaction.hpp"
#include "server/input_required.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "server/tasks.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

using namespace std::chrono_literals;
using client::McpClient;

namespace {

LogLevel log_level_of(const Json& params) {
    if (params.is_object() && params.contains("level") && params["level"].is_string()) {
        if (auto level = parse_log_level(params["level"].get<std::string>())) return *level;
    }
    return LogLevel::info;
}

// A stateless upstream's questions (an InputRequiredResult's inputRequests) asked of our
// client under the same keys: over its session, or — a stateless client — through our own
// InputRequiredResult (ask_client_all throws InputRequired, which ends the call).
Task<Json> relay_input_requests(RequestContext& ctx, Json requests) {
    std::vector<ClientRequest> asks;
    std::vector<std::string> keys;
    if (requests.is_object()) {
        for (auto& [key, request] : requests.items()) {
            std::string method = request.is_object() ? request.value("method", std::string()) : std::string();
            if (const char* capability = client_capability_for(method)) ctx.require_client_capability(capability);
            Json params = request.is_object() && request.contains("params") ? request["params"] : Json::object();
            asks.push_back({std::move(method), std::move(params), key});
            keys.push_back(key);
        }
    }
    auto answers = co_await ctx.ask_client_all(std::move(asks));
    Json responses = Json::object();
    for (std::size_t i = 0; i < keys.size() && i < answers.size(); ++i) responses[keys[i]] = std::move(answers[i]);
    co_return responses;
}

std::chrono::milliseconds until(std::chrono::steady_clock::time_point when) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - std::chrono::steady_clock::now());
    return std::max(left, 0ms);
}

}  // namespace

// While a forwarded request runs, it is the upstream's "current caller": the client its
// log messages and requests go to.
struct CallerScope {
    CallerScope(std::list<Upstream::Caller*>& list, RequestContext& ctx, std::uint64_t tag) : list(list) {
        caller.ctx = &ctx;
        caller.tag = tag;
        link = ctx.cancel_token().on_cancel([this, &ctx]() { caller.cancel.cancel(ctx.cancel_token().reason()); });
        list.push_back(&caller);
        it = std::prev(list.end());
    }
    ~CallerScope() {
        caller.ctx->cancel_token().remove(link);
        list.erase(it);
    }
    // The request failed: what was stashed for the client, if anything, replaces the failure.
    void rethrow_stashed() const {
        if (caller.stashed) std::rethrow_exception(caller.stashed);
    }
    std::list<Upstream::Caller*>& list;
    std::list<Upstream::Caller*>::iterator it;
    Upstream::Caller caller;
    CancelToken::CallbackId link = 0;
};

void Upstream::Caller::stash(std::exception_ptr outcome) {
    if (!stashed) stashed = std::move(outcome);
    cancel.cancel("the client must answer first");
}

// Holds a client request's notification budget while any part of its forwarding runs.
class Upstream::BudgetHold {
public:
    BudgetHold(Upstream& upstream, const RequestContext& ctx) : upstream_(upstream), ctx_(&ctx) {
        auto& entry = upstream_.call_budgets_[ctx_];
        if (entry.holders++ == 0) entry.budget = CallNotificationBudget(upstream_.settings_.output_limits.call_notification_bytes);
    }
    ~BudgetHold() {
        auto it = upstream_.call_budgets_.find(ctx_);
        if (it != upstream_.call_budgets_.end() && --it->second.holders == 0) upstream_.call_budgets_.erase(it);
    }
    BudgetHold(const BudgetHold&) = delete;
    BudgetHold& operator=(const BudgetHold&) = delete;
    CallNotificationBudget* budget() {
        auto it = upstream_.call_budgets_.find(ctx_);
        return it == upstream_.call_budgets_.end() ? nullptr : &it->second.budget;
    }

private:
    Upstream& upstream_;
    const RequestContext* ctx_;
};

Upstream::Upstream(UpstreamSettings settings, AsioExecutor& executor)
    : settings_(std::move(settings)), executor_(executor) {
    output_ = std::make_shared<UpstreamOutputGuard>(
        settings_.name, settings_.output_limits,
        [&executor](std::chrono::milliseconds delay, std::function<void()> fn) {
            return executor.schedule_after(delay, std::move(fn));
        });
    // login: the OAuthAuthorizer of each connection attempt does the token requests.
    if (settings_.auth && settings_.auth->type != auth::UpstreamAuthSettings::Type::login) {
        token_http_ = std::make_unique<http_client::HttpClient>(executor_);
        credentials_ = std::make_shared<auth::UpstreamCredentials>("upstream " + settings_.name, *settings_.auth,
                                                                   *token_http_);
    }
}

Upstream::~Upstream() { stop(); }

void Upstream::start() { connect_now(); }

void Upstream::stop() {
    if (state() == State::stopped) return;
    set_state(State::stopped);
    ++generation_;
    if (cancel_timer_) std::exchange(cancel_timer_, nullptr)();
    if (cancel_ping_) std::exchange(cancel_ping_, nullptr)();
    // Ends the connection at once, even if a coroutine that will never resume (the loop
    // may have stopped) still holds the client: a stdio child and its process group are
    // killed and reaped now. Requests still waiting fail with a ClientError.
    if (client_) client_->terminate();
    client_.reset();
    if (cancel_sweep_) std::exchange(cancel_sweep_, nullptr)();
    auto callers = std::move(caller_connections_);
    caller_connections_.clear();
    for (auto& [key, connection] : callers) {
        if (connection.client) connection.client->terminate();
        for (auto& waiter : connection.waiters) {
            waiter.set_error(std::make_exception_ptr(client::TransportError("the gateway is stopping")));
        }
    }
}

Upstream::State Upstream::state() const {
    std::lock_guard lock(state_mutex_);
    return state_;
}

void Upstream::set_state(State state, std::string detail) {
    {
        std::lock_guard lock(state_mutex_);
        state_ = state;
        detail_ = std::move(detail);
    }
    observability::metrics().set("toolport_upstream_up", {{"upstream", name()}}, state == State::connected ? 1 : 0);
}

std::string Upstream::describe_state() const {
    std::lock_guard lock(state_mutex_);
    switch (state_) {
        case State::connecting: return "connecting";
        case State::connected: return fmt::format("connected ({})", protocol_version_);
        case State::reconnecting: {
            auto wait = until(next_attempt_);
            return fmt::format("reconnecting in {:.1f} s: {}", wait.count() / 1000.0, detail_);
        }
        case State::stopped: return "stopped";
    }
    return "unknown";
}

// ------------------------------------------------------------------ connection

void Upstream::connect_now() {
    if (state() == State::stopped) return;
    const auto generation = ++generation_;
    if (settled_) set_state(State::reconnecting, "connecting again");
    std::weak_ptr<Upstream> weak = weak_from_this();
    spawn(connect_once(), [weak, generation](std::exception_ptr error) {
        auto self = weak.lock();
        if (!self || !error || generation != self->generation_) return;
        std::string reason = "failed";
        std::string authorization_failure;
        try {
            std::rethrow_exception(error);
        } catch (const client::AuthorizationError& e) {
            reason = e.what();
            authorization_failure = e.what();
            // /health shows the reason: it says what the operator has to do.
            if (self->uses_login()) reason += "; run: toolport login " + self->settings_.url;
        } catch (const std::exception& e) {
            reason = e.what();
        } catch (...) {
        }
        self->authorization_failure_ = std::move(authorization_failure);
        self->lost(reason);
    });
}

namespace {

// auth: the Authorization header of every request on one connection: the source's own
// token (the gateway's connection) or one caller's exchanged token. A 401 drops the token
// it refused and the request goes again, once, with a new one.
class CredentialsAuthorizer final : public client::HttpAuthorizer {
public:
    // `subject_token`: nullopt for the gateway's own connection.
    CredentialsAuthorizer(std::shared_ptr<auth::UpstreamCredentials> credentials, std::optional<std::string> subject_token)
        : credentials_(std::move(credentials)), subject_token_(std::move(subject_token)) {}

    Task<std::string> authorization() override {
        std::string value;
        try {
            value = subject_token_ ? co_await credentials_->for_caller(*subject_token_) : co_await credentials_->for_source();
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

std::unique_ptr<client::ClientTransport> make_upstream_transport(const UpstreamSettings& s, AsioExecutor& executor,
                                                                 std::shared_ptr<client::HttpAuthorizer> authorizer,
                                                                 std::shared_ptr<UpstreamOutputGuard> output) {
    if (s.transport == UpstreamTransport::stdio) {
        client::StdioClientOptions options;
        options.argv = s.argv;
        options.env = s.env;
        options.inherit_env = s.inherit_env;
        options.cwd = s.cwd;
        options.max_message_bytes = s.max_response_bytes;
        // The child's stderr is its log: into ours, a line at a time, named, within the
        // upstream's limits.
        options.on_stderr_line = [output = std::move(output)](std::string_view line) { output->stderr_line(line); };
        return client::make_stdio_transport(executor, std::move(options));
    }
    client::HttpClientOptions options;
    options.url = s.url;
    options.ca_file = s.ca_file;
    options.insecure_skip_verify = s.insecure_skip_verify;
    options.bearer_token = s.bearer_token;
    options.headers = s.headers;
    options.authorizer = std::move(authorizer);
    options.connect_timeout = s.connect_timeout;
    options.max_message_bytes = s.max_response_bytes;
    if (s.transport == UpstreamTransport::legacy_sse) return client::make_legacy_sse_transport(executor, std::move(options));
    return client::make_http_transport(executor, std::move(options));
}

}  // namespace

std::shared_ptr<McpClient> Upstream::new_client(std::shared_ptr<client::HttpAuthorizer> authorizer) {
    client::ClientOptions options;
    options.client_name = "toolport-gateway";
    // Whatever the upstream asks of a client is passed on to the client whose call caused
    // it, which is checked then (a client without the capability gets the upstream refused).
    options.capabilities = {{"sampling", Json::object()},
                            {"elicitation", Json::object()},
                            {"roots", {{"listChanged", false}}}};
    options.request_timeout = settings_.connect_timeout;  // the handshake's
    options.protocol_version = settings_.protocol_version;
    std::shared_ptr<McpClient> client;
    try {
        client = std::make_shared<McpClient>(
            executor_, make_upstream_transport(settings_, executor_, std::move(authorizer), output_), options);
    } catch (const std::invalid_argument& e) {
        throw client::TransportError(e.what());
    }
    // Whoever's connection it is, what the upstream asks goes to the client of the call.
    std::weak_ptr<Upstream> weak = weak_from_this();
    client->on_request([weak](const client::ServerRequest& request) -> Task<Json> {
        auto self = weak.lock();
        if (!self) return refuse_request("the gateway's upstream connection is closing");
        return self->on_request(request);
    });
    return client;
}

Task<void> Upstream::connect_once() {
    const auto generation = generation_;
    std::shared_ptr<client::HttpAuthorizer> authorizer;
    // token_exchange with own_requests: none lists the catalog without a token.
    if (credentials_ && (!credentials_->settings().exchanges() || credentials_->settings().own_requests_authorized)) {
        authorizer = std::make_shared<CredentialsAuthorizer>(credentials_, std::nullopt);
    }
    if (uses_login()) authorizer = login_authorizer();
    auto client = new_client(std::move(authorizer));
    std::weak_ptr<Upstream> weak = weak_from_this();
    client->on_notification([weak, generation, raw = client.get()](const std::string& method, const Json& params) {
        auto self = weak.lock();
        if (self && generation == self->generation_) self->on_notification(method, params, raw->related_tag());
    });
    client->on_disconnect([weak, generation](const std::string& reason) {
        auto self = weak.lock();
        if (self && generation == self->generation_) self->lost(reason);
    });
    client_ = client;
    co_await client->connect();
    if (generation != generation_) co_return;
    authorization_failure_.clear();
    {
        std::lock_guard lock(state_mutex_);
        protocol_version_ = client->protocol_version();
    }
    co_await list_everything(client);
    if (generation != generation_) co_return;
    for (const auto& uri : subscribed_) {
        spawn(client->request("resources/subscribe", {{"uri", uri}}), [](std::optional<Json>, std::exception_ptr) {});
    }
    set_state(State::connected);
    observability::metrics().increment("toolport_upstream_connections_total", {{"upstream", name()}});
    settled_ = true;
    backoff_ = settings_.restart_delay;  // a connection that worked is retried soon
    spdlog::info("upstream {}: connected to {} ({}), {} tools, {} resources, {} templates, {} prompts", name(),
                 util::sanitize_for_message(providers::redact_text(settings_.describe(), settings_.secrets()), 200),
                 client->protocol_version(), catalog_.tools.size(), catalog_.resources.size(),
                 catalog_.resource_templates.size(), catalog_.prompts.size());
    if (listener_.catalog_changed) listener_.catalog_changed();
    schedule_ping();
}

Task<Json> Upstream::refuse_request(std::string why) {
    throw protocol::RpcError(-32603, std::move(why));
    co_return Json();
}

Task<std::vector<Json>> Upstream::list_all(std::shared_ptr<McpClient> client, std::string method, std::string key) {
    std::vector<Json> entries;
    Json params = Json::object();
    for (int page = 0; page < 1000; ++page) {
        client::RequestOptions options;
        options.timeout = settings_.request_timeout;
        Json result = co_await client->request(method, params, options);
        if (!result.is_object() || !result.contains(key) || !result[key].is_array()) {
            throw client::ClientError(fmt::format("upstream {} answered {} without a \"{}\" array", name(), method, key));
        }
        for (auto& entry : result[key]) {
            if (entry.is_object()) entries.push_back(std::move(entry));
        }
        auto next = result.find("nextCursor");
        if (next == result.end() || !next->is_string() || next->get<std::string>().empty()) break;
        params["cursor"] = *next;
    }
    co_return entries;
}

Task<void> Upstream::list_everything(std::shared_ptr<McpClient> client) {
    const Json& caps = client->server_capabilities();
    UpstreamCatalog fresh;
    if (caps.contains("tools")) fresh.tools = co_await list_all(client, "tools/list", "tools");
    if (caps.contains("resources")) {
        fresh.resources = co_await list_all(client, "resources/list", "resources");
        fresh.resource_templates = co_await list_all(client, "resources/templates/list", "resourceTemplates");
        const Json& r = caps["resources"];
        fresh.subscriptions = r.is_object() && r.value("subscribe", false);
    }
    if (caps.contains("prompts")) fresh.prompts = co_await list_all(client, "prompts/list", "prompts");
    fresh.completions = caps.contains("completions");
    catalog_ = std::move(fresh);
}

void Upstream::relist(const std::string& what) {
    if (std::find(relist_queue_.begin(), relist_queue_.end(), what) == relist_queue_.end()) relist_queue_.push_back(what);
    if (relisting_ || state() != State::connected) return;
    relisting_ = true;
    auto client = client_;
    std::weak_ptr<Upstream> weak = weak_from_this();
    auto work = [](std::shared_ptr<Upstream> self, std::shared_ptr<McpClient> client) -> Task<void> {
        while (!self->relist_queue_.empty()) {
            auto kind = self->relist_queue_.front();
            self->relist_queue_.erase(self->relist_queue_.begin());
            if (kind == "tools") {
                self->catalog_.tools = co_await self->list_all(client, "tools/list", "tools");
            } else if (kind == "resources") {
                self->catalog_.resources = co_await self->list_all(client, "resources/list", "resources");
                self->catalog_.resource_templates =
                    co_await self->list_all(client, "resources/templates/list", "resourceTemplates");
            } else if (kind == "prompts") {
                self->catalog_.prompts = co_await self->list_all(client, "prompts/list", "prompts");
            }
        }
    };
    spawn(work(shared_from_this(), client), [weak](std::exception_ptr error) {
        auto self = weak.lock();
        if (!self) return;
        self->relisting_ = false;
        if (error) {
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                spdlog::warn("upstream {}: listing again after list_changed failed: {}", self->name(), e.what());
            } catch (...) {
            }
            self->relist_queue_.clear();
            return;
        }
        if (self->listener_.catalog_changed) self->listener_.catalog_changed();
    });
}

void Upstream::lost(const std::string& reason) {
    if (state() == State::stopped) return;
    ++generation_;  // whatever the old connection still reports is ignored
    if (cancel_ping_) std::exchange(cancel_ping_, nullptr)();
    const std::string why = util::sanitize_for_message(providers::redact_text(reason, settings_.secrets()), 300);
    spdlog::warn("upstream {}: {}; reconnecting in {} ms", name(), why, backoff_.count());
    settled_ = true;
    relisting_ = false;
    relist_queue_.clear();
    // Not destroyed here: this may run inside the old client's own callback.
    auto old = std::move(client_);
    executor_.post([old]() mutable { old.reset(); });
    {
        std::lock_guard lock(state_mutex_);
        state_ = State::reconnecting;
        detail_ = why;
        next_attempt_ = std::chrono::steady_clock::now() + backoff_;
    }
    observability::metrics().set("toolport_upstream_up", {{"upstream", name()}}, 0);
    schedule_reconnect();
}

void Upstream::schedule_reconnect() {
    std::weak_ptr<Upstream> weak = weak_from_this();
    if (cancel_timer_) std::exchange(cancel_timer_, nullptr)();
    cancel_timer_ = executor_.schedule_after(backoff_, [weak]() {
        if (auto self = weak.lock()) {
            self->cancel_timer_ = nullptr;
            self->connect_now();
        }
    });
    // Attempts that keep failing wait longer and longer (from 0.5 s, doubling).
    backoff_ = std::min(std::max<std::chrono::milliseconds>(backoff_ * 2, 500ms), settings_.max_backoff);
}

void Upstream::schedule_ping() {
    if (settings_.ping_interval.count() == 0) return;
    std::weak_ptr<Upstream> weak = weak_from_this();
    const auto generation = generation_;
    cancel_ping_ = executor_.schedule_after(settings_.ping_interval, [weak, generation]() {
        auto self = weak.lock();
        if (!self || generation != self->generation_ || !self->client_) return;
        self->cancel_ping_ = nullptr;
        client::RequestOptions options;
        options.timeout = std::min<std::chrono::milliseconds>(self->settings_.request_timeout, 10s);
        spawn(self->client_->request("ping", Json::object(), options), [weak, generation](std::optional<Json>, std::exception_ptr error) {
            auto self = weak.lock();
            if (!self || generation != self->generation_) return;
            if (!error) return self->schedule_ping();
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                self->lost(fmt::format("no answer to ping: {}", e.what()));
            } catch (...) {
                self->lost("no answer to ping");
            }
        });
    });
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
            if (within_budget(*caller, text.size() + logger.size())) caller->ctx->log(log_level_of(params), data, logger);
        } else {
            spdlog::info("upstream {} log: {}", logger,
                         util::sanitize_for_message(text, std::min<std::size_t>(500, settings_.output_limits.line_bytes)));
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
        spdlog::info("upstream {}: a call passed its budget of {} bytes of log messages and progress "
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
    std::exception_ptr input_required;
    try {
        co_return co_await caller->ctx->ask_client({request.method, std::move(params), key});
    } catch (const RpcError&) {
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
    }
    caller->stash(input_required);
    throw protocol::RpcError(-32603, "the client answers through a retried call (stateless revision)");
}

// ------------------------------------------------------------------ to the upstream

bool Upstream::uses_login() const {
    return settings_.auth && settings_.auth->type == auth::UpstreamAuthSettings::Type::login;
}

std::string Upstream::login_suggestion() const {
    std::string command = "toolport login " + settings_.url;
    // The gateway reads that store only; a login that keeps its tokens elsewhere would not help.
    if (!settings_.auth->token_store.empty()) command += " (with its token store at " + settings_.auth->token_store + ")";
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

std::shared_ptr<McpClient> Upstream::ready_client(const char* what) {
    if (state() == State::connected && client_ && client_->is_open()) return client_;
    auto wait = until(next_attempt_);
    if (uses_login() && !authorization_failure_.empty()) {
        // Not a passing outage: nothing changes until the operator logs in again (the next
        // attempt reads the token store anew, so no restart is needed after that).
        ToolError error(ToolErrorCode::upstream_authorization_failed,
                        fmt::format("upstream {} is not connected, so {} cannot be forwarded: {}", name(), what,
                                    providers::redact_text(authorization_failure_, settings_.secrets())));
        error.suggest(login_suggestion());
        if (wait.count() > 0) error.retry_after(wait);
        throw error;
    }
    auto error = ToolError(ToolErrorCode::server_unhealthy,
                           fmt::format("upstream {} is not connected ({}), so {} cannot be forwarded", name(),
                                       describe_state(), what));
    error.transient(true).suggest("Try again in a few seconds; the gateway reconnects by itself");
    if (wait.count() > 0) error.retry_after(wait);
    throw error;
}

namespace {

// A caller's connection unused this long is closed (its next call opens another).
constexpr auto kCallerIdle = std::chrono::minutes(5);
// At most this many caller connections are open; past it the least recently used idle one closes.
constexpr std::size_t kMaxCallerConnections = 1000;

}  // namespace

Task<std::shared_ptr<McpClient>> Upstream::client_for(RequestContext& ctx, const char* what) {
    auto shared = ready_client(what);
    if (!credentials_ || !credentials_->settings().exchanges()) co_return shared;
    const std::string subject = ctx.caller().access_token;
    try {
        // Obtained here, so that a refusal is the call's own error; the connection's
        // authorizer then finds it cached.
        co_await credentials_->for_caller(subject);
    } catch (const auth::UpstreamCredentialsError& e) {
        throw e.to_tool_error();
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
                                  providers::redact_text(e.what(), settings_.secrets()))));
    } catch (const std::exception& e) {
        error = std::make_exception_ptr(
            ToolError(ToolErrorCode::upstream_error, fmt::format("upstream {}: connecting for this caller failed: {}",
                                                                 name(), providers::redact_text(e.what(), settings_.secrets())))
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
                     util::sanitize_for_message(providers::redact_text(reason, self->settings_.secrets()), 300));
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
            if (idle(it->second) && (oldest == caller_connections_.end() || it->second.last_used < oldest->second.last_used))
                oldest = it;
        }
        if (oldest == caller_connections_.end()) break;
        oldest->second.client->terminate();
        caller_connections_.erase(oldest);
    }
    cancel_sweep_ = nullptr;
    if (caller_connections_.empty() || state() == State::stopped) return;
    std::weak_ptr<Upstream> weak = weak_from_this();
    cancel_sweep_ = executor_.schedule_after(std::chrono::duration_cast<std::chrono::milliseconds>(kCallerIdle / 5), [weak]() {
        if (auto self = weak.lock()) {
            self->cancel_sweep_ = nullptr;
            self->sweep_caller_connections();
        }
    });
}

Task<Json> Upstream::send_for(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string method, Json params,
                              std::function<void(const Json&)> on_progress, bool tasks) {
    BudgetHold budget(*this, ctx);
    CallerScope scope(in_flight_, ctx, ++next_tag_);
    scope.caller.budget = budget.budget();
    client::RequestOptions options;
    options.timeout = settings_.request_timeout;
    options.cancel = &scope.caller.cancel;
    options.tag = scope.caller.tag;
    // A stateless upstream learns the calling client's capabilities with each request, and
    // asks its questions in the result (relayed to the client under the same keys).
    options.client_capabilities = ctx.client_capabilities();
    // A task the client asked for runs here, at the gateway (server/tasks.hpp): a call
    // forwarded in the request must not be answered with a task of its own, which the
    // gateway would take for the tool's result. Only the requests of a call the gateway
    // runs upstream as a task (call_as_task) declare the extension.
    if (tasks) {
        if (!options.client_capabilities->is_object()) options.client_capabilities = Json::object();
        Json& ext = (*options.client_capabilities)["extensions"];
        if (!ext.is_object()) ext = Json::object();
        ext[kTasksExtension] = Json::object();
        if (!client->is_stateless()) params = with_tasks_declared(std::move(params));
    } else if (auto ext = options.client_capabilities->find("extensions");
               ext != options.client_capabilities->end() && ext->is_object()) {
        ext->erase(kTasksExtension);
        if (ext->empty()) options.client_capabilities->erase("extensions");
    }
    options.on_input_required = [&ctx](const Json& requests) { return relay_input_requests(ctx, requests); };
    // A stateless upstream logs only at the level a request asks for: ask for all, and our
    // own session filters by what the client chose.
    options.log_level = "debug";
    if (on_progress) {
        // Progress counts against the call's budget too.
        options.on_progress = [this, caller = &scope.caller, on_progress = std::move(on_progress)](const Json& p) {
            if (within_budget(*caller, p.dump(-1, ' ', false, Json::error_handler_t::replace).size())) on_progress(p);
        };
    }
    try {
        Json result = co_await client->request(std::move(method), std::move(params), std::move(options));
        // The upstream may answer (its request to the client refused) before the
        // cancellation reaches it: what was stashed still decides.
        scope.rethrow_stashed();
        co_return result;
    } catch (...) {
        scope.rethrow_stashed();
        throw;
    }
}

// ------------------------------------------------------------------ tasks upstream

namespace {

// The id of our task a call runs in (server/tasks.cpp runs it as request "task:<id>").
std::string local_task_of(const RequestContext& ctx) {
    const auto& id = ctx.request_id();
    if (!id.is_string()) return {};
    const auto& text = id.get_ref<const std::string&>();
    return text.rfind("task:", 0) == 0 ? text.substr(5) : std::string();
}

constexpr std::int64_t kMinPollMs = 50;
constexpr std::int64_t kMaxPollMs = 5000;
constexpr std::int64_t kDefaultPollMs = 500;

std::int64_t poll_interval_of(const Json& task, std::int64_t fallback) {
    auto it = task.find("pollIntervalMs");
    if (it == task.end() || !it->is_number()) return fallback;
    return std::clamp<std::int64_t>(it->get<std::int64_t>(), kMinPollMs, kMaxPollMs);
}

Task<void> send_and_forget(std::shared_ptr<McpClient> client, std::string method, Json params,
                           client::RequestOptions options) {
    co_await client->request(std::move(method), std::move(params), std::move(options));
}

}  // namespace

bool Upstream::runs_tasks() const {
    if (!client_) return false;
    const Json& caps = client_->server_capabilities();
    auto ext = caps.find("extensions");
    return ext != caps.end() && ext->is_object() && ext->contains(kTasksExtension);
}

bool Upstream::runs_v1_tasks() const {
    if (!client_ || client_->is_stateless() || runs_tasks()) return false;
    const Json& caps = client_->server_capabilities();
    auto tasks = caps.find("tasks");
    if (tasks == caps.end() || !tasks->is_object()) return false;
    auto requests = tasks->find("requests");
    if (requests == tasks->end() || !requests->is_object()) return false;
    auto tools = requests->find("tools");
    return tools != requests->end() && tools->is_object() && tools->contains("call");
}

Json Upstream::output_schema_of(const std::string& name) const {
    for (const auto& tool : catalog_.tools) {
        if (tool.value("name", Json()) == name) return tool.value("outputSchema", Json());
    }
    return nullptr;
}

std::string Upstream::task_support_of(const std::string& name) const {
    for (const auto& tool : catalog_.tools) {
        if (tool.value("name", Json()) != name) continue;
        auto execution = tool.find("execution");
        if (execution == tool.end() || !execution->is_object()) return {};
        auto support = execution->value("taskSupport", std::string());
        return support == "optional" || support == "required" ? support : std::string();
    }
    return {};
}

Json Upstream::with_tasks_declared(Json params) {
    if (!params.is_object()) params = Json::object();
    Json& meta = params["_meta"];
    if (!meta.is_object()) meta = Json::object();
    Json& caps = meta[meta_key::kClientCapabilities];
    if (!caps.is_object()) caps = Json::object();
    caps["extensions"][kTasksExtension] = Json::object();
    return params;
}

void Upstream::cancel_upstream_task(const std::shared_ptr<McpClient>& client, const std::string& id, bool v1) {
    if (!client || !client->is_open()) return;
    client::RequestOptions options;
    options.timeout = settings_.request_timeout;
    Json params = {{"taskId", id}};
    if (v1) {
        // the revision's own method, no extension to declare
    } else if (client->is_stateless()) {
        options.client_capabilities = Json{{"extensions", {{kTasksExtension, Json::object()}}}};
    } else {
        params = with_tasks_declared(std::move(params));
    }
    spawn(send_and_forget(client, "tasks/cancel", std::move(params), std::move(options)), [name = name(), id](std::exception_ptr error) {
        if (!error) return;
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            spdlog::info("upstream {}: cancelling its task {}… failed: {}", name, id.substr(0, 8), e.what());
        } catch (...) {
        }
    });
}

Task<Json> Upstream::call_as_v1_task(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string tool,
                                     Json arguments, std::function<void(const Json&)> on_progress) {
    const auto ttl = ctx.session().server().options().task_ttl;
    Json created = co_await send_for(ctx, client, "tools/call",
                                     {{"name", tool}, {"arguments", std::move(arguments)}, {"task", {{"ttl", ttl.count()}}}},
                                     std::move(on_progress));
    // Answered in the request after all: that is the call's result.
    if (!created.is_object() || !created.contains("task") || !created["task"].is_object()) co_return created;
    Json task = std::move(created["task"]);
    auto id_of = task.find("taskId");
    if (id_of == task.end() || !id_of->is_string() || id_of->get_ref<const std::string&>().empty()) {
        throw client::ClientError("it answered with a task without a taskId");
    }
    const std::string id = id_of->get<std::string>();
    auto interval = [](const Json& t) {
        auto it = t.find("pollInterval");
        if (it == t.end() || !it->is_number()) return kDefaultPollMs;
        return std::clamp<std::int64_t>(it->get<std::int64_t>(), kMinPollMs, kMaxPollMs);
    };
    try {
        for (;;) {
            const std::string status = task.value("status", std::string());
            if (status == "working") {
                co_await ctx.sleep(std::chrono::milliseconds(interval(task)));
                task = co_await send_for(ctx, client, "tasks/get", {{"taskId", id}});
                if (!task.is_object()) throw client::ClientError("tasks/get answered something that is not a Task");
                continue;
            }
            if (status == "cancelled") {
                throw OperationCancelled(fmt::format("upstream {} cancelled the task", name()));
            }
            if (status != "input_required" && status != "completed" && status != "failed") {
                throw client::ClientError(fmt::format("tasks/get answered status \"{}\"",
                                                      util::sanitize_for_message(status, 40)));
            }
            // tasks/result waits for the end, asking its questions on the way (relayed to our
            // client as any request of the upstream's during a call), and answers what the
            // call would have: the CallToolResult, or its JSON-RPC error.
            Json result;
            try {
                result = co_await send_for(ctx, client, "tasks/result", {{"taskId", id}});
            } catch (const RpcError& e) {
                if (!e.from_peer) throw;
                // The task's protocol error, as the upstream said it: our task fails with it.
                throw RpcError(e.code, providers::redact_text(e.message, settings_.secrets()), e.data);
            }
            if (result.is_object()) {
                if (auto meta = result.find("_meta"); meta != result.end() && meta->is_object()) {
                    meta->erase("io.modelcontextprotocol/related-task");
                    if (meta->empty()) result.erase("_meta");
                }
            }
            co_return result;
        }
    } catch (const InputRequired&) {
        // Our client answers in our task's next run, which calls the upstream anew; the
        // task that asked is given up.
        cancel_upstream_task(client, id, true);
        throw;
    } catch (...) {
        cancel_upstream_task(client, id, true);
        throw;
    }
}

Task<Json> Upstream::call_as_task(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string tool,
                                  Json arguments, std::string local, std::function<void(const Json&)> on_progress) {
    if (!runs_tasks()) {
        co_return co_await call_as_v1_task(ctx, std::move(client), std::move(tool), std::move(arguments),
                                           std::move(on_progress));
    }
    const std::string owner = TaskEngine::owner_of(ctx);
    if (auto it = forwarded_.find(local); it != forwarded_.end()) {
        if (it->second.owner != owner) {
            // Not the caller of our task that has this id: it runs its own call, apart.
            local.clear();
        } else if (it->second.via.lock() == client) {
            // Our task runs its call again, now with our client's answers: they go to the
            // upstream task that asked, which goes on.
            const std::string id = it->second.upstream_id;
            if (!it->second.pending.empty()) {
                Json responses = co_await relay_input_requests(ctx, it->second.pending);
                try {
                    co_await send_for(ctx, client, "tasks/update", {{"taskId", id}, {"inputResponses", responses}}, {},
                                      true);
                } catch (const InputRequired&) {
                    throw;
                } catch (const RpcError& e) {
                    if (!e.from_peer) throw;
                    forwarded_.erase(local);
                    cancel_upstream_task(client, id);
                    throw ToolError(ToolErrorCode::upstream_error,
                                    fmt::format("upstream {} refused the answers to its task {}…: error {}: {}", name(),
                                                id.substr(0, 8), e.code, providers::redact_text(e.message, settings_.secrets())));
                } catch (...) {
                    forwarded_.erase(local);
                    cancel_upstream_task(client, id);
                    throw;
                }
                if (auto again = forwarded_.find(local); again != forwarded_.end()) again->second.pending = Json::object();
            }
            co_return co_await follow_task(ctx, std::move(client), id, std::move(local), kMinPollMs);
        } else {
            forwarded_.erase(it);  // made on a connection that has been lost: it cannot be reached
        }
    }
    Json created = co_await send_for(ctx, client, "tools/call", {{"name", tool}, {"arguments", std::move(arguments)}},
                                     std::move(on_progress), true);
    // The upstream may answer in the request (a tool that asks first, or one it runs at once).
    if (!created.is_object() || created.value("resultType", Json()) != "task") co_return created;
    auto id = created.find("taskId");
    if (id == created.end() || !id->is_string() || id->get_ref<const std::string&>().empty()) {
        throw client::ClientError("it answered with a task without a taskId");
    }
    const std::string upstream_id = id->get<std::string>();
    if (!local.empty()) {
        forwarded_[local] = ForwardedTask{upstream_id, client, owner, Json::object()};
        // Our task's record expires after task_ttl: by then nobody can run its call again.
        std::weak_ptr<Upstream> weak = weak_from_this();
        std::weak_ptr<McpClient> weak_client = client;
        executor_.schedule_after(ctx.session().server().options().task_ttl, [weak, weak_client, local, upstream_id]() {
            auto self = weak.lock();
            if (!self) return;
            auto it = self->forwarded_.find(local);
            if (it == self->forwarded_.end() || it->second.upstream_id != upstream_id) return;
            self->forwarded_.erase(it);
            self->cancel_upstream_task(weak_client.lock(), upstream_id);
        });
    }
    const std::string status = created.value("status", std::string());
    co_return co_await follow_task(ctx, std::move(client), upstream_id, std::move(local),
                                   status == "working" ? poll_interval_of(created, kDefaultPollMs) : 0);
}

Task<Json> Upstream::follow_task(RequestContext& ctx, std::shared_ptr<McpClient> client, std::string id,
                                 std::string local, std::int64_t interval_ms) {
    std::int64_t wait = interval_ms;
    try {
        for (;;) {
            if (wait > 0) co_await ctx.sleep(std::chrono::milliseconds(wait));
            Json task = co_await send_for(ctx, client, "tasks/get", {{"taskId", id}}, {}, true);
            const std::string status = task.is_object() ? task.value("status", std::string()) : std::string();
            wait = poll_interval_of(task, kDefaultPollMs);
            if (status == "working") continue;
            if (status == "completed") {
                forwarded_.erase(local);
                auto result = task.find("result");
                if (result == task.end() || !result->is_object()) {
                    throw client::ClientError("its completed task " + id.substr(0, 8) + "… carries no result");
                }
                co_return std::move(*result);
            }
            if (status == "failed") {
                forwarded_.erase(local);
                const Json error = task.value("error", Json::object());
                const int code = error.is_object() && error.contains("code") && error["code"].is_number_integer()
                                     ? error["code"].get<int>()
                                     : protocol::error_code::kInternalError;
                std::string message = error.is_object() ? error.value("message", std::string()) : std::string();
                if (message.empty()) message = fmt::format("upstream {}'s task failed", name());
                // The upstream's protocol error, as it said it: our task fails with it.
                throw RpcError(code, providers::redact_text(std::move(message), settings_.secrets()),
                               error.is_object() ? error.value("data", Json()) : Json());
            }
            if (status == "cancelled") {
                forwarded_.erase(local);
                throw OperationCancelled(fmt::format("upstream {} cancelled the task{}", name(),
                                                     task.contains("statusMessage") && task["statusMessage"].is_string()
                                                         ? ": " + task["statusMessage"].get<std::string>()
                                                         : std::string()));
            }
            if (status == "input_required") {
                Json requests = task.value("inputRequests", Json::object());
                if (!requests.is_object() || requests.empty()) continue;  // asked and answered meanwhile
                if (auto it = forwarded_.find(local); it != forwarded_.end()) it->second.pending = requests;
                // Our client is asked under the same keys: over its session it answers now;
                // inside our task (or for a stateless client) this throws InputRequired,
                // and the answers come back when the call runs again (call_as_task).
                Json responses = co_await relay_input_requests(ctx, requests);
                co_await send_for(ctx, client, "tasks/update", {{"taskId", id}, {"inputResponses", responses}}, {}, true);
                if (auto it = forwarded_.find(local); it != forwarded_.end()) it->second.pending = Json::object();
                wait = 0;
                continue;
            }
            throw client::ClientError(fmt::format("tasks/get answered status \"{}\"",
                                                  util::sanitize_for_message(status, 40)));
        }
    } catch (const InputRequired&) {
        // Our task waits for answers, the upstream one for the same. Outside a task of ours
        // (a stateless client's call, which it retries with the answers) nothing resumes
        // the upstream task: the retry starts another.
        if (local.empty()) cancel_upstream_task(client, id);
        throw;
    } catch (const RpcError& e) {
        if (!e.from_peer) throw;  // the task's own error (failed), or ours about the client's answers
        // tasks/get or tasks/update refused (the task expired upstream, or was lost with
        // a session): the call failed upstream, not because of its arguments.
        forwarded_.erase(local);
        cancel_upstream_task(client, id);
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} refused to go on with its task {}…: error {}: {}", name(),
                                    id.substr(0, 8), e.code, providers::redact_text(e.message, settings_.secrets())))
            .transient(true);
    } catch (const OperationCancelled&) {
        // Our call was cancelled (tasks/cancel, its deadline, the server stopping), or the
        // upstream's task was: cancelling a task that ended is acknowledged all the same.
        forwarded_.erase(local);
        cancel_upstream_task(client, id);
        throw;
    } catch (...) {
        forwarded_.erase(local);
        cancel_upstream_task(client, id);
        throw;
    }
}

Task<ToolResult> Upstream::call_tool(RequestContext& ctx, std::string tool, Json arguments) {
    // One budget for the whole call, however many upstream requests it takes (a task's polls).
    BudgetHold budget(*this, ctx);
    auto client = co_await client_for(ctx, "the call");
    const std::string local = local_task_of(ctx);
    const std::string support = task_support_of(tool);
    const bool as_task =
        !support.empty() && (!local.empty() || support == "required") && (runs_tasks() || runs_v1_tasks());
    auto progress = [&ctx](const Json& p) {
        if (!p.is_object() || !p.contains("progress") || !p["progress"].is_number()) return;
        std::optional<double> total;
        if (p.contains("total") && p["total"].is_number()) total = p["total"].get<double>();
        ctx.progress(p["progress"].get<double>(), total, p.value("message", std::string()));
    };
    Json result;
    try {
        if (as_task) {
            result = co_await call_as_task(ctx, std::move(client), tool, std::move(arguments), local, progress);
        } else {
            result = co_await send_for(ctx, std::move(client), "tools/call",
                                       {{"name", tool}, {"arguments", std::move(arguments)}}, progress);
        }
    } catch (const protocol::RpcError& e) {
        // Ours, not the upstream's: the gateway refused what the client answered for it
        // (a tampered requestState while relaying a stateless upstream's questions).
        if (!e.from_peer) throw;
        const std::string message = providers::redact_text(e.message, settings_.secrets());
        // About the client, not the tool (a stateless upstream that needs a capability the
        // client lacks): the client's call ends with it, as from a server of its own.
        if (e.code == -32021) throw RpcError(e.code, message, e.data);
        if (e.code == -32602) {
            throw ToolError(ToolErrorCode::invalid_argument,
                            fmt::format("upstream {} refused the call of {}: {}", name(), tool, message))
                .suggest("Check the arguments against the tool's inputSchema");
        }
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} answered the call of {} with error {}: {}", name(), tool, e.code,
                                    message))
            .transient(false);
    } catch (const client::ResponseTooLarge& e) {
        throw ToolError(ToolErrorCode::response_too_large,
                        fmt::format("upstream {}'s answer to {} passed {} bytes (max_response_bytes); it was not read "
                                    "further",
                                    name(), tool, e.limit))
            .suggest("Ask for less (narrow the query, fewer results), or raise upstreams." + name() +
                     ".max_response_bytes");
    } catch (const client::RequestTimeout& e) {
        throw ToolError(ToolErrorCode::timeout, fmt::format("upstream {} did not answer {} within {} ms (it was told "
                                                            "to stop)",
                                                            name(), tool, e.timeout.count()))
            .transient(true);
    } catch (const client::AuthorizationError& e) {
        ToolError error(ToolErrorCode::upstream_authorization_failed,
                        fmt::format("upstream {}: the call of {} could not be authorized: {}", name(), tool,
                                    providers::redact_text(e.what(), settings_.secrets())));
        if (uses_login()) error.suggest(login_suggestion());
        throw error;
    } catch (const client::TransportError& e) {
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} went away during the call of {}: {}", name(), tool,
                                    providers::redact_text(e.what(), settings_.secrets())))
            .transient(true)
            .suggest("Try again shortly; the gateway reconnects to the upstream by itself");
    } catch (const client::ClientError& e) {
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} answered the call of {} wrongly: {}", name(), tool,
                                    providers::redact_text(e.what(), settings_.secrets())));
    }
    ToolResult answer;
    try {
        answer = ToolResult::from_json(result);
    } catch (const std::invalid_argument& e) {
        throw ToolError(ToolErrorCode::upstream_error,
                        fmt::format("upstream {} answered the call of {} with something that is not a tool result: {}",
                                    name(), tool, e.what()));
    }
    // An upstream that echoes what the gateway sent it (its headers, bearer token, client
    // secret, secret-named env values) does not hand the operator's credentials to clients.
    if (providers::redact_result(answer, settings_.secrets())) {
        providers::check_redacted_output(answer, output_schema_of(tool), tool);
    }
    label_upstream_error(answer, name(), tool);
    co_return answer;
}

Task<Json> Upstream::request(RequestContext& ctx, std::string method, Json params) {
    std::shared_ptr<McpClient> client;
    try {
        client = co_await client_for(ctx, method.c_str());
    } catch (const ToolError& e) {
        throw RpcError(-32603, e.what());
    }
    try {
        // Resources, prompts and completions are answers too: the operator's credentials
        // an upstream echoes are redacted from them as from tool results.
        Json result = co_await send_for(ctx, std::move(client), method, std::move(params));
        providers::redact_json(result, settings_.secrets());
        co_return result;
    } catch (const protocol::RpcError& e) {
        if (!e.from_peer) throw;  // ours (see call_tool)
        throw RpcError(e.code, providers::redact_text(e.message, settings_.secrets()), e.data);
    } catch (const client::ClientError& e) {
        throw RpcError(-32603, fmt::format("upstream {}: {}", name(), providers::redact_text(e.what(), settings_.secrets())));
    } catch (const client::ResponseTooLarge& e) {  // not a ClientError
        throw RpcError(-32603, fmt::format("upstream {}: {}", name(), providers::redact_text(e.what(), settings_.secrets())));
    }
}

Task<Json> Upstream::read_resource(RequestContext& ctx, std::string uri) {
    Json result = co_await request(ctx, "resources/read", {{"uri", std::move(uri)}});
    if (!result.is_object() || !result.contains("contents") || !result["contents"].is_array()) {
        throw RpcError(-32603, fmt::format("upstream {} answered resources/read without \"contents\"", name()));
    }
    co_return std::move(result["contents"]);
}

Task<Json> Upstream::get_prompt(RequestContext& ctx, std::string prompt, Json arguments) {
    Json params = {{"name", std::move(prompt)}};
    if (arguments.is_object() && !arguments.empty()) params["arguments"] = std::move(arguments);
    Json result = co_await request(ctx, "prompts/get", std::move(params));
    if (!result.is_object() || !result.contains("messages")) {
        throw RpcError(-32603, fmt::format("upstream {} answered prompts/get without \"messages\"", name()));
    }
    co_return result;
}

Task<Json> Upstream::complete(RequestContext& ctx, Json ref, std::string argument, std::string value, Json context) {
    Json params = {{"ref", std::move(ref)}, {"argument", {{"name", std::move(argument)}, {"value", std::move(value)}}}};
    if (context.is_object() && !context.empty()) params["context"] = {{"arguments", std::move(context)}};
    Json result = co_await request(ctx, "completion/complete", std::move(params));
    if (!result.is_object() || !result.contains("completion")) {
        throw RpcError(-32603, fmt::format("upstream {} answered completion/complete without \"completion\"", name()));
    }
    co_return std::move(result["completion"]);
}

void Upstream::subscribe(const std::string& uri) {
    if (std::find(subscribed_.begin(), subscribed_.end(), uri) != subscribed_.end()) return;
    subscribed_.push_back(uri);
    if (state() == State::connected && client_ && catalog_.subscriptions) {
        spawn(client_->request("resources/subscribe", {{"uri", uri}}), [](std::optional<Json>, std::exception_ptr) {});
    }
}

void Upstream::unsubscribe(const std::string& uri) {
    auto it = std::find(subscribed_.begin(), subscribed_.end(), uri);
    if (it == subscribed_.end()) return;
    subscribed_.erase(it);
    if (state() == State::connected && client_ && catalog_.subscriptions) {
        spawn(client_->request("resources/unsubscribe", {{"uri", uri}}), [](std::optional<Json>, std::exception_ptr) {});
    }
}

}  // namespace toolport::gateway
