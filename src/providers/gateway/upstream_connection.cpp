// Upstream: the gateway's own connection to the upstream: connecting in whatever revision
// it speaks (stdio child, Streamable HTTP, legacy HTTP+SSE), listing its catalog and listing
// again on list_changed, pinging it, and reconnecting with backoff when it is lost.
#include "providers/gateway/upstream.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "auth/upstream_credentials.hpp"
#include "client/client_transport.hpp"
#include "client/http_authorizer.hpp"
#include "client/legacy_sse_transport.hpp"
#include "client/mcp_client.hpp"
#include "observability/metrics.hpp"
#include "providers/gateway/upstream_internal.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/rpc_error.hpp"
#include "providers/secret_redaction.hpp"
#include "server/tool_error.hpp"
#include "async/asio_executor.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

using namespace std::chrono_literals;
using client::McpClient;

using upstream_detail::credentials_authorizer;
using upstream_detail::until;

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
        } catch (...) {}
        self->authorization_failure_ = std::move(authorization_failure);
        self->lost(reason);
    });
}

namespace {

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
    if (s.transport == UpstreamTransport::legacy_sse)
        return client::make_legacy_sse_transport(executor, std::move(options));
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
    if (settings_.registry && !resolved_) {
        co_await resolve_registry();
        if (generation != generation_) co_return;
    }
    std::shared_ptr<client::HttpAuthorizer> authorizer;
    // token_exchange with own_requests: none lists the catalog without a token.
    if (credentials_ && (!credentials_->settings().exchanges() || credentials_->settings().own_requests_authorized)) {
        authorizer = credentials_authorizer(credentials_, std::nullopt);
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
                 util::sanitize_for_message(providers::redact_text(settings_.describe(), secrets_), 200),
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

Task<std::vector<Json>> Upstream::list_templates(std::shared_ptr<McpClient> client) {
    // Many servers that declare resources serve no templates and do not implement their
    // listing (the SDKs answer Method not found): that is "none", not a broken upstream.
    bool unimplemented = false;
    try {
        co_return co_await list_all(client, "resources/templates/list", "resourceTemplates");
    } catch (const protocol::RpcError& e) {
        if (e.code != protocol::error_code::kMethodNotFound) throw;
        unimplemented = true;
    }
    if (unimplemented) spdlog::debug("upstream {}: no resources/templates/list; no templates", name());
    co_return std::vector<Json>{};
}

Task<void> Upstream::list_everything(std::shared_ptr<McpClient> client) {
    const Json& caps = client->server_capabilities();
    UpstreamCatalog fresh;
    if (caps.contains("tools")) fresh.tools = co_await list_all(client, "tools/list", "tools");
    if (caps.contains("resources")) {
        fresh.resources = co_await list_all(client, "resources/list", "resources");
        fresh.resource_templates = co_await list_templates(client);
        const Json& r = caps["resources"];
        fresh.subscriptions = r.is_object() && r.value("subscribe", false);
    }
    if (caps.contains("prompts")) fresh.prompts = co_await list_all(client, "prompts/list", "prompts");
    if (auto ext = caps.find("extensions"); ext != caps.end() && ext->is_object()) {
        if (auto skills = ext->find(kSkillsExtensionId); skills != ext->end()) {
            fresh.skills_extension = skills->is_object() ? *skills : Json::object();
            fresh.skills = co_await list_skills(client);
        }
    }
    fresh.completions = caps.contains("completions");
    fresh.server_info = client->server_info();
    fresh.listed = true;
    catalog_ = std::move(fresh);
    index_tools();
}

Task<std::vector<Json>> Upstream::list_skills(std::shared_ptr<McpClient> client) {
    try {
        co_return co_await list_all(std::move(client), "skills/list", "skills");
    } catch (const std::exception& e) {
        spdlog::warn("upstream {}: it declares the Skills extension, but skills/list failed: {}", name(),
                     util::sanitize_for_message(providers::redact_text(e.what(), secrets_), 300));
    }
    co_return std::vector<Json>{};
}

bool Upstream::note_skill(const std::string& uri, const Json* entry) {
    auto it = std::find_if(catalog_.skills.begin(), catalog_.skills.end(),
                           [&](const Json& s) { return s.is_object() && s.value("uri", std::string()) == uri; });
    if (!entry) {
        if (it == catalog_.skills.end()) return false;
        catalog_.skills.erase(it);
        return true;
    }
    if (it != catalog_.skills.end()) {
        if (*it == *entry) return false;
        *it = *entry;
        return true;
    }
    catalog_.skills.push_back(*entry);
    return true;
}

void Upstream::relist(const std::string& what) {
    if (std::find(relist_queue_.begin(), relist_queue_.end(), what) == relist_queue_.end())
        relist_queue_.push_back(what);
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
                self->index_tools();
            } else if (kind == "resources") {
                self->catalog_.resources = co_await self->list_all(client, "resources/list", "resources");
                self->catalog_.resource_templates = co_await self->list_templates(client);
                // A skill's files are resources: a change of them is announced as theirs.
                if (!self->catalog_.skills_extension.is_null())
                    self->catalog_.skills = co_await self->list_skills(client);
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
            } catch (...) {}
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
    const std::string why = util::sanitize_for_message(providers::redact_text(reason, secrets_), 300);
    spdlog::warn("upstream {}: {}; reconnecting in {} ms", name(), why, backoff_.count());
    settled_ = true;
    relisting_ = false;
    relist_queue_.clear();
    // Its skills are not served while it is away (their files could not be read); they come
    // back with the listing of the next connection.
    const bool had_skills = !catalog_.skills.empty();
    catalog_.skills.clear();
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
    if (had_skills && listener_.catalog_changed) listener_.catalog_changed();
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
        spawn(self->client_->request("ping", Json::object(), options),
              [weak, generation](std::optional<Json>, std::exception_ptr error) {
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

std::shared_ptr<McpClient> Upstream::ready_client(const char* what) {
    if (state() == State::connected && client_ && client_->is_open()) return client_;
    auto wait = until(next_attempt_);
    if (uses_login() && !authorization_failure_.empty()) {
        // Not a passing outage: nothing changes until the operator logs in again (the next
        // attempt reads the token store anew, so no restart is needed after that).
        ToolError error(ToolErrorCode::upstream_authorization_failed,
                        fmt::format("upstream {} is not connected, so {} cannot be forwarded: {}", name(), what,
                                    providers::redact_text(authorization_failure_, secrets_)));
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

}  // namespace toolport::gateway
