// HttpEndpoint (http_endpoint.hpp): routing, the checks every request passes before it
// reaches a handler (Host, Origin, authentication, scopes, a profile token's and an end
// user's limits), and the endpoint's lifetime (start, stop). What the handlers share is
// HttpEndpoint::State (endpoint_state.hpp); each concern has its own file (listed there).
#include "transports/http_endpoint.hpp"

#include <strings.h>

#include <unordered_map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "auth/authenticator.hpp"
#include "auth/resource_metadata.hpp"
#include "auth/scope_policy.hpp"
#include "observability/metrics.hpp"
#include "server/server.hpp"
#include "stores/shared_sessions.hpp"
#include "transports/endpoint_state.hpp"
#include "transports/http_policy.hpp"

namespace toolport {

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
    const bool is_audit = opts.audit_query && path == "/audit" && path != opts.path;
    const bool is_orchestration = opts.orchestration && path == "/orchestration" && path != opts.path;
    const bool is_pins = opts.pins && (path == "/admin/pins" || path.rfind("/admin/pins/", 0) == 0) && path != opts.path;

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
    // Public documents (registry entries, Server Cards): any Origin may read them.
    if (opts.discovery && path != opts.path && opts.discovery->handles(path)) return opts.discovery->answer(req, path);
    if (!http_policy::origin_allowed(opts, req.header("Origin"))) {
        return rpc_error(req, 403, ec::kInvalidRequest, "Forbidden: Origin not allowed");
    }
    if (is_metadata_path(path)) return metadata_answer(req);
    if (is_console_path(path)) return console_answer(req, path, reentry);
    const auto credential = auth_on() ? credential_of(req.header("Authorization"), reentry) : Credential{.valid = true};
    if (!(is_health && opts.public_health) && !credential.valid) {
        // An OAuth token seen for the first time: answered once it is verified.
        if (credential.unverified) return verify_then_answer(req, reentry);
        return unauthorized(req, req.has_header("Authorization"), "Unauthorized: send Authorization: Bearer <token>");
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
    if ((is_metrics || is_reload || is_audit || is_orchestration || is_pins) && credential.oauth) {
        if (auto refusal = admin_refusal(req, *credential.oauth, path)) return std::move(*refusal);
    }

    if (is_metrics || is_health) return observability_answer(req, is_metrics);
    if (is_reload) return reload_answer(req);
    if (is_audit) return audit_answer(req, target.substr(path.size()));
    if (is_orchestration) return orchestration_answer(req);
    if (is_pins) return pins_answer(req, path, credential);
    if (path == opts.path || is_view_path(path)) {
        switch (req.method()) {
            case HttpMethod::post: return handle_post(req, credential, reentry);
            case HttpMethod::get: return handle_get(req, credential, reentry);
            case HttpMethod::delete_: return handle_delete(req, credential, reentry);
            default: return method_not_allowed(req, "Method Not Allowed", "GET, POST, DELETE");
        }
    }
    if (opts.legacy_sse && path == "/sse" && req.method() == HttpMethod::get) return handle_legacy_sse(req, credential);
    if (opts.legacy_sse && path == "/messages" && req.method() == HttpMethod::post)
        return handle_legacy_post(req, credential);
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

HttpEndpoint::HttpEndpoint(McpServer& server, Executor& executor, HttpOptions options)
    : state_(std::make_shared<State>(server, executor, std::move(options))) {}

HttpEndpoint::~HttpEndpoint() { stop(); }

HttpAnswer HttpEndpoint::answer(const HttpRequestView& request) { return state_->answer(request, State::Reentry{}); }

void HttpEndpoint::start() {
    for (const auto& [token, view] : state_->mcp.view_tokens()) {
        if (http_policy::token_listed(state_->opts.bearer_tokens, token)) {
            spdlog::warn(
                "a token of the server's bearer tokens is also the gateway profile {}'s: it is served as that "
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
    state_->attach_console();
}

void HttpEndpoint::stop() {
    auto& s = *state_;
    if (s.stopping) return;
    s.stopping = true;
    s.detach_console();
    if (s.cancel_sweep) s.cancel_sweep();
    std::vector<std::string> ids;
    for (auto& [id, session] : s.sessions) ids.push_back(id);
    for (const auto& id : ids) s.drop_session(id, "the server is shutting down");
}

std::size_t HttpEndpoint::session_count() const { return state_->sessions.size(); }

}  // namespace toolport
