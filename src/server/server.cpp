#include "server/server.hpp"

#include "async/executor.hpp"
#include "server/tasks.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "protocol/json_text.hpp"
#include "protocol/raw_json.hpp"
#include "server/session.hpp"
#include "toolport_version.hpp"
#include "util/ascii.hpp"
#include "util/random.hpp"

namespace toolport {

McpServer::McpServer(Executor& executor, ServerOptions options) : executor_(executor), options_(std::move(options)) {
    if (options_.version.empty()) options_.version = kToolportVersion;
    server_info_ = {{"name", options_.name}, {"version", options_.version}};
    if (!options_.title.empty()) server_info_["title"] = options_.title;
    server_info_raw_ = protocol::make_raw_json(protocol::serialize(server_info_));
    if (options_.state_secret.empty()) {
        options_.state_secret.assign(32, '\0');
        util::secure_random(options_.state_secret.data(), options_.state_secret.size());
    }
    registry_listener_ = registry_.add_change_listener(
        [this](const CatalogChange& change) { broadcast_list_changed(change); });
}

McpServer::~McpServer() {
    *alive_ = false;
    if (tasks_) tasks_->shutdown();
    registry_.remove_listener(registry_listener_);
    // Sessions may outlive the server only as closed husks held by finishing coroutines.
    auto sessions = sessions_;
    for (auto* s : sessions) s->close();
}

void McpServer::session_closed(ServerSession* session) {
    sessions_.erase(session);
    if (session_closed_listener_) session_closed_listener_(session->caller());
}

void McpServer::forward_client_header(const std::string& name) {
    forwarded_headers_.insert(util::to_lower_ascii(name));
}

std::shared_ptr<ServerSession> McpServer::open_session(SessionOutput output, CallerIdentity caller) {
    auto session = std::make_shared<ServerSession>(*this, std::move(output), std::move(caller));
    sessions_.insert(session.get());
    return session;
}

Json McpServer::capabilities(protocol::Revision revision, const CallerIdentity* caller) const {
    Json caps = {
        {"tools", {{"listChanged", true}}},
        {"resources", {{"listChanged", true}}},
        {"prompts", {{"listChanged", true}}},
    };
    caps["resources"]["subscribe"] = true;  // resources/subscribe, or subscriptions/listen (2026-07-28)
    if (!protocol::is_stateless(revision)) caps["logging"] = Json::object();
    if (protocol::has_completions(revision)) caps["completions"] = Json::object();
    Json extensions = Json::object();
    for (const auto& [id, settings] : extensions_.items()) {
        auto source = extension_sources_.find(id);
        if (caller && source != extension_sources_.end() && !source_visible(*caller, source->second)) continue;
        extensions[id] = settings;
    }
    if (!extensions.empty()) caps["extensions"] = std::move(extensions);
    return caps;
}

void McpServer::add_extension(const std::string& id, Json settings, std::map<std::string, ExtensionMethod> methods,
                              const std::string& source) {
    for (auto& [method, fn] : methods) {
        if (ServerSession::is_protocol_method(method)) {
            throw std::invalid_argument("extension " + id + " cannot take over the protocol's method " + method);
        }
        if (fn.source.empty()) fn.source = source;
        extension_methods_[method] = std::move(fn);
    }
    extensions_[id] = settings.is_object() ? std::move(settings) : Json::object();
    extension_sources_[id] = source;
}

const ExtensionMethod* McpServer::extension_method(const std::string& method) const {
    auto it = extension_methods_.find(method);
    return it == extension_methods_.end() ? nullptr : &it->second;
}

void McpServer::broadcast_list_changed(const CatalogChange& change) {
    // The sources a view has by its tools may have changed with them.
    if (change.kind == CatalogKind::tools) tool_sources_.clear();
    const char* method = change.kind == CatalogKind::tools       ? "notifications/tools/list_changed"
                         : change.kind == CatalogKind::resources ? "notifications/resources/list_changed"
                                                                 : "notifications/prompts/list_changed";
    auto sessions = sessions_;
    for (auto* s : sessions) {
        // A client never hears of a change to what it cannot see: a list_changed caused
        // only by a source outside its view (or its token's scopes) is not sent to it.
        if (!filters(s->caller()) || concerns(s->caller(), change)) s->notify(method, nullptr);
    }
}

bool McpServer::concerns(const CallerIdentity& caller, const CatalogChange& change) const {
    auto any = [&](const auto& entries) {
        return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return visible(caller, *e); });
    };
    return any(change.tools) || any(change.resources) || any(change.templates) || any(change.prompts);
}

void McpServer::add_view(const std::string& name, ViewSpec view, std::vector<std::string> tokens) {
    views_[name] = std::move(view);
    tool_sources_.erase(name);
    for (auto& token : tokens) view_tokens_.emplace_back(std::move(token), name);
}

bool McpServer::in_view(const std::string& view, const ToolSpec& tool) const {
    if (view.empty()) return true;
    auto it = views_.find(view);
    return it != views_.end() && it->second.tools && it->second.tools(tool);
}

bool McpServer::view_has_source(const std::string& view, const std::string& source) const {
    if (view.empty()) return true;
    auto it = views_.find(view);
    if (it == views_.end()) return false;
    if (it->second.sources) return it->second.sources(source);
    auto known = tool_sources_.find(view);
    if (known == tool_sources_.end()) {
        std::set<std::string> sources;
        for (const auto& [name, tool] : registry_.tools()) {
            if (!tool->source.empty() && in_view(view, *tool)) sources.insert(tool->source);
        }
        known = tool_sources_.emplace(view, std::move(sources)).first;
    }
    return known->second.count(source) > 0;
}

namespace {

auth::AccessCaller access_caller(const auth::AccessPolicy& policy, const CallerIdentity& caller) {
    return {.principal = auth::access_principal(caller.subject, caller.principal, caller.session_id == "stdio",
                                                policy.local_principal()),
            .groups = &caller.groups,
            .scopes = caller.scopes ? &*caller.scopes : nullptr,
            .profile = caller.view};
}

}  // namespace

auth::AccessDecision McpServer::access(const CallerIdentity& caller, const ToolSpec& tool) const {
    if (!access_policy_) return {};
    return access_policy_->for_tool(access_caller(*access_policy_, caller), tool.source, tool.name);
}

bool McpServer::visible(const CallerIdentity& caller, const ToolSpec& tool) const {
    return in_view(caller.view, tool) && missing_scopes(caller, tool).empty() && access(caller, tool).allowed;
}

bool McpServer::source_visible(const CallerIdentity& caller, const std::string& source) const {
    if (source.empty()) return true;  // the server's own
    if (!view_has_source(caller.view, source)) return false;
    if (access_policy_ && !access_policy_->for_source(access_caller(*access_policy_, caller), source).allowed) {
        return false;
    }
    if (!caller.scopes || !scope_policy_) return true;
    return auth::missing_scopes(*caller.scopes, scope_policy_->for_source(source)).empty();
}

bool McpServer::resource_visible(const CallerIdentity& caller, const std::string& uri) const {
    if (const auto* resource = registry_.find_resource(uri); resource && visible(caller, *resource)) return true;
    return registry_.match_template(uri, [&](const ResourceTemplateSpec& t) { return visible(caller, t); }).has_value();
}

std::shared_ptr<const ResourceTemplateSpec> McpServer::withheld_template_for(
    const std::string& uri, const std::function<bool(const ResourceTemplateSpec&)>& accept) const {
    for (const auto& [pattern, stand_in] : withheld_templates_) {
        if (accept(*stand_in) && stand_in->match(uri)) return stand_in;
    }
    return nullptr;
}

std::vector<std::string> McpServer::tool_scopes(const ToolSpec& tool) const {
    return scope_policy_ ? scope_policy_->for_tool(tool.name, tool.source) : std::vector<std::string>{};
}

std::vector<std::string> McpServer::missing_scopes(const CallerIdentity& caller, const ToolSpec& tool) const {
    if (!caller.scopes || !scope_policy_) return {};
    return auth::missing_scopes(*caller.scopes, tool_scopes(tool));
}

void McpServer::subscription_changed(const std::string& uri, bool subscribed) {
    if (!subscribed) {
        // Only when the last subscriber has gone.
        for (auto* session : sessions_) {
            if (session->subscribed(uri)) return;
        }
    }
    auto listeners = subscription_listeners_;  // a listener may add another
    for (auto& listener : listeners) listener(uri, subscribed);
}

int McpServer::add_resource_listener(ResourceListener listener) {
    resource_listeners_.emplace(++next_resource_listener_, std::move(listener));
    return next_resource_listener_;
}

void McpServer::set_sources_gate(std::function<bool()> settled, std::function<void()> late) {
    if (options_.wait_for_sources.count() <= 0 || !settled || settled()) return;
    sources_settled_ = std::move(settled);
    sources_late_ = std::move(late);
    sources_deadline_ = executor_.now() + options_.wait_for_sources;
}

Task<void> McpServer::wait_for_sources() {
    // Polled, not signalled: the wait happens once, in the first seconds of a process, and
    // the sources' "settled" is a state each keeps, not an event anyone would have to send.
    auto alive = alive_;
    while (sources_settled_) {
        if (sources_settled_()) {
            sources_settled_ = nullptr;
            sources_late_ = nullptr;
            break;
        }
        const auto now = executor_.now();
        if (now >= sources_deadline_) {
            auto late = std::move(sources_late_);
            sources_settled_ = nullptr;
            sources_late_ = nullptr;
            if (late) late();
            break;
        }
        co_await executor_.sleep(std::min<std::chrono::milliseconds>(
            std::chrono::milliseconds(20),
            std::chrono::duration_cast<std::chrono::milliseconds>(sources_deadline_ - now) +
                std::chrono::milliseconds(1)));
        if (!*alive) co_return;
    }
}

void McpServer::resource_updated(const std::string& uri) {
    auto listeners = resource_listeners_;
    for (auto& [id, l] : listeners) l(uri);
    auto sessions = sessions_;
    for (auto* s : sessions) {
        // Only to sessions that may see the resource: a subscription made before the
        // caller's view or scopes hid it hears nothing more.
        if (s->subscribed(uri) && resource_visible(s->caller(), uri)) {
            s->notify("notifications/resources/updated", {{"uri", uri}});
        }
    }
}

}  // namespace toolport
