// Who is calling and what they may reach: the credential a request's bearer token is (a
// server token, a gateway profile's, an OAuth access token, verified here when it is new),
// the principal sessions are bound to, the view a request is served, the scopes a path and
// a tool need, the 401 and 403 answers with their WWW-Authenticate challenges, and the
// OAuth Protected Resource Metadata (RFC 9728). Kept apart from the transport so that
// authorization reads in one place.
#include "transports/endpoint_state.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "auth/authenticator.hpp"
#include "auth/resource_metadata.hpp"
#include "server/server.hpp"
#include "transports/http_policy.hpp"
#include "util/digest.hpp"
#include "util/sanitize.hpp"

namespace toolport {

namespace ec = protocol::error_code;

// Profile tokens turn authentication on as the server's own tokens do, and so does OAuth.
bool HttpEndpoint::State::auth_on() const { return !opts.bearer_tokens.empty() || !mcp.view_tokens().empty() || authn; }

// Where the Protected Resource Metadata is served: the bare well-known path, and that
// path followed by the MCP path and by the resource identifier's path (RFC 9728 §3.1).
std::vector<std::string> HttpEndpoint::State::oauth_metadata_paths() const {
    const std::string base = "/.well-known/oauth-protected-resource";
    std::vector<std::string> paths{base, base + opts.path, auth::resource_metadata_path(opts.oauth.resource)};
    std::sort(paths.begin(), paths.end());
    paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
    return paths;
}

bool HttpEndpoint::State::is_metadata_path(std::string_view path) const {
    if (!authn || path == opts.path) return false;
    // Not for <path>/<view>: a profile's endpoint is part of the one resource (RFC 9728
    // §3.3 wants a document's `resource` to be the identifier its URL was made from).
    return std::find(metadata_paths.begin(), metadata_paths.end(), path) != metadata_paths.end();
}

HttpEndpoint::State::Credential HttpEndpoint::State::credential_of(std::string_view authorization,
                                                                   const Reentry& reentry) const {
    Credential credential;
    auto token = http_policy::bearer_token(authorization);
    if (token.empty()) return credential;
    // Every profile token is compared (constant time, no early exit). A token that is a
    // profile's and the server's too is served as the profile: a token never widens
    // what its holder sees (start() warns about it).
    for (const auto& [profile_token, view] : mcp.view_tokens()) {
        if (http_policy::same_token(profile_token, token)) credential.profile = view;
    }
    credential.valid = http_policy::token_listed(opts.bearer_tokens, token) || !credential.profile.empty();
    // A static token short-circuits; anything else may be an OAuth access token.
    if (!credential.valid && authn) {
        if (reentry.verified && reentry.verified_token == token) credential.oauth = reentry.verified;
        else credential.oauth = authn->cached(token);
        credential.valid = credential.oauth != nullptr;
        credential.unverified = !credential.valid;
    }
    return credential;
}

// Who is calling, for sessions, quotas and per-user caches: "" when auth is off. A
// static token is known by its digest; an OAuth token by its issuer and subject (every
// token of one user is the same caller), never by the token itself.
std::string HttpEndpoint::State::principal_of(const HttpRequestView& req, const Credential& credential) const {
    if (!auth_on() || !credential.valid) return {};
    if (credential.oauth) {
        const auto& t = *credential.oauth;
        return "oauth:" + util::sha256_hex(t.issuer + '\n' + t.subject).substr(0, 24);
    }
    return http_policy::principal_of_token(http_policy::bearer_token(req.header("Authorization")));
}

// The headers sources asked to see (per-user credentials), as this request has them, and
// the scopes and groups of its OAuth access token (none for other callers: not filtered by
// scope, and in no group).
void HttpEndpoint::State::take_client_headers(const HttpRequestView& req, const Credential& credential,
                                              CallerIdentity& caller) const {
    caller.client_headers.clear();
    for (const auto& name : mcp.forwarded_client_headers()) {
        if (req.has_header(name)) caller.client_headers[name] = std::string(req.header(name));
    }
    caller.scopes.reset();
    caller.access_token.clear();
    caller.subject.clear();
    caller.groups.clear();
    if (credential.oauth) {
        caller.subject = credential.oauth->subject;
        caller.scopes = credential.oauth->scopes;
        caller.access_token = http_policy::bearer_token(req.header("Authorization"));
        // The groups only when a rule asks about them: no claim is read per request otherwise.
        if (const auto* access = mcp.access_policy(); access && access->uses_groups()) {
            const auto& claims = credential.oauth->claims;
            if (claims.is_object()) {
                auto claim = claims.find(access->groups_claim());
                if (claim != claims.end()) caller.groups = auth::claim_groups(*claim);
            }
        }
    }
}

// Why a profile's token may not have `path`, or nullopt when it may: it is served its
// profile's MCP endpoint (at the MCP path, its own view path, legacy SSE), not another
// profile's nor the server's own endpoints. Unknown paths get their 404 as for anyone.
std::optional<std::string> HttpEndpoint::State::profile_refusal(const Credential& credential,
                                                                std::string_view path) const {
    if (credential.profile.empty()) return std::nullopt;
    if (path == opts.path) return std::nullopt;
    if (is_view_path(path)) {
        auto asked = path.substr(opts.path.size() + 1);
        if (asked == credential.profile) return std::nullopt;
        return fmt::format(
            "Forbidden: this bearer token selects the gateway profile \"{}\" and is not served "
            "the profile \"{}\" (a token never widens what its holder sees); use {} or {}/{}",
            credential.profile, asked, opts.path, opts.path, credential.profile);
    }
    if (path != "/metrics" && path != "/health" && path != "/admin/reload" && path != "/audit" &&
        path != "/orchestration" && path != "/admin/pins" && path.rfind("/admin/pins/", 0) != 0) {
        return std::nullopt;
    }
    return fmt::format(
        "Forbidden: this bearer token selects the gateway profile \"{}\", which is served at {} "
        "only; {} needs one of the server's own tokens",
        credential.profile, opts.path, path);
}

// /metrics and /admin/reload are the operator's. An OAuth access token is an end user's
// unless it has auth.admin_scope: without it the answer is 403 (insufficient_scope when
// there is a scope to ask for). The server's own tokens always reach them, a profile's
// never (profile_refusal).
std::optional<HttpAnswer> HttpEndpoint::State::admin_refusal(const HttpRequestView& req,
                                                             const auth::VerifiedToken& token, std::string_view path) {
    const auto& scope = opts.oauth.admin_scope;
    if (scope.empty()) {
        return rpc_error(req, 403, ec::kInvalidRequest,
                         fmt::format("Forbidden: {} is for the server's operators: it needs one of the server's "
                                     "own bearer tokens (OAuth access tokens reach it only with the scope named "
                                     "by auth.admin_scope, and none is set)",
                                     path));
    }
    if (auth::missing_scopes(token.scopes, {scope}).empty()) return std::nullopt;
    return insufficient_scope(req, token, auth::scope_union(scopes_for_path(req), {scope}),
                              fmt::format("Forbidden: {} is for the server's operators: the access token lacks "
                                          "the scope {}",
                                          path, scope));
}

// The view a request is served: its profile token's, else the one its URL chose
// ("cursor" for <path>/cursor, "" for <path>).
std::string HttpEndpoint::State::view_of(const HttpRequestView& req, const Credential& credential) const {
    if (!credential.profile.empty()) return credential.profile;
    auto target = req.target();
    auto path = target.substr(0, target.find('?'));
    if (path.size() <= opts.path.size() + 1 || path.compare(0, opts.path.size(), opts.path) != 0) return {};
    return std::string(path.substr(opts.path.size() + 1));
}

// <path>/<view> for a view the server has (a gateway profile).
bool HttpEndpoint::State::is_view_path(std::string_view path) const {
    if (path.size() <= opts.path.size() + 1 || path.compare(0, opts.path.size(), opts.path) != 0 ||
        path[opts.path.size()] != '/') {
        return false;
    }
    auto name = path.substr(opts.path.size() + 1);
    return name.find('/') == std::string_view::npos && mcp.has_view(std::string(name));
}

// An OAuth token not in the verified cache: verify it (the key set may have to be
// fetched), then answer the request again, or refuse it.
HttpAnswer HttpEndpoint::State::verify_then_answer(const HttpRequestView& req, const Reentry& reentry) {
    auto deferred = make_deferred();
    spawn(verify_and_answer(shared_from_this(), deferred, std::make_shared<endpoint::OwnedRequest>(req), reentry),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

Task<void> HttpEndpoint::State::verify_and_answer(std::shared_ptr<State> self,
                                                  std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                                  std::shared_ptr<endpoint::OwnedRequest> req, Reentry reentry) {
    std::string token(http_policy::bearer_token(req->header("Authorization")));
    std::shared_ptr<const auth::VerifiedToken> verified;
    std::optional<auth::TokenError> refused;
    try {
        verified = co_await self->authn->authenticate(token);
    } catch (const auth::TokenError& e) {
        refused = e;
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    if (refused && (refused->reason() == auth::TokenErrorReason::keys_unavailable ||
                    refused->reason() == auth::TokenErrorReason::introspection_unavailable)) {
        spdlog::warn("auth: a token could not be verified: {}", refused->what());
        deferred->resolve(
            rpc_error(*req, 503, ec::kInternalError,
                      refused->reason() == auth::TokenErrorReason::keys_unavailable
                          ? "Service Unavailable: the authorization server's keys cannot be had; retry later"
                          : "Service Unavailable: the authorization server cannot check the token now; "
                            "retry later"));
        co_return;
    }
    if (refused) {
        // The reason, never the token: TokenError's messages quote nothing of it.
        spdlog::debug("auth: access token refused ({}): {}", auth::reason_name(refused->reason()), refused->what());
        auto target = req->target();
        if (self->is_console_path(target.substr(0, target.find('?')))) {
            reentry.refused_token = fmt::format("the access token was refused ({}): {}",
                                                auth::reason_name(refused->reason()), refused->what());
            deferred->resolve(self->answer(*req, reentry));
            co_return;
        }
        deferred->resolve(self->unauthorized(*req, true,
                                             fmt::format("Unauthorized: the access token was refused ({}): {}",
                                                         auth::reason_name(refused->reason()), refused->what())));
        co_return;
    }
    reentry.verified_token = std::move(token);
    reentry.verified = std::move(verified);
    deferred->resolve(self->answer(*req, reentry));
}

// 401 for a request without a usable token: the challenge points at the metadata.
HttpAnswer HttpEndpoint::State::unauthorized(const HttpRequestView& req, bool token_refused, std::string_view why) {
    auto body = protocol::serialize(protocol::make_error(nullptr, ec::kInvalidRequest, why));
    std::string challenge;
    if (authn) {
        challenge = auth::bearer_challenge(metadata_url, scopes_for_path(req), token_refused ? "invalid_token" : "");
    } else {
        challenge = token_refused ? "Bearer realm=\"toolport\", error=\"invalid_token\"" : "Bearer realm=\"toolport\"";
    }
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 401,
                                         {{"Content-Type", "application/json"}, {"WWW-Authenticate", challenge}},
                                         std::move(body)));
}

// The scopes every request at this request's path needs: the server's required scopes,
// and a profile's own at <path>/<profile>.
std::vector<std::string> HttpEndpoint::State::scopes_for_path(const HttpRequestView& req) const {
    auto target = req.target();
    auto path = target.substr(0, target.find('?'));
    if (!is_view_path(path)) return opts.oauth.required_scopes;
    return auth::scope_union(opts.oauth.required_scopes,
                             opts.oauth.scopes.for_profile(path.substr(opts.path.size() + 1)));
}

// 403 insufficient_scope (RFC 6750 §3.1): the challenge names every scope the request
// needs, those the token has included, so that a client asking for exactly these gets
// a token that does all it did before and this too (MCP's step-up rule).
HttpAnswer HttpEndpoint::State::insufficient_scope(const HttpRequestView& req, const auth::VerifiedToken& token,
                                                   const std::vector<std::string>& needed, const std::string& why) {
    auto body = protocol::serialize(protocol::make_error(nullptr, ec::kInvalidRequest, why));
    auto challenge = auth::bearer_challenge(metadata_url, auth::scope_union(token.scopes, needed), "insufficient_scope");
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 403,
                                         {{"Content-Type", "application/json"}, {"WWW-Authenticate", challenge}},
                                         std::move(body)));
}

// A POST's tools/call of a tool whose scopes the caller's OAuth token lacks is refused
// whole, before any of it runs, with the step-up challenge. Tools outside the caller's
// view, unknown tools and callers without OAuth tokens are left to the session.
std::optional<HttpAnswer> HttpEndpoint::State::tool_scope_refusal(const HttpRequestView& req,
                                                                  const Credential& credential, const PostBody& body) {
    if (!credential.oauth || !mcp.scope_policy()) return std::nullopt;
    std::string view;
    std::vector<std::string> needed, missing_all;
    std::string tools;
    for (const auto& item : body.parsed.items) {
        const auto* m = std::get_if<protocol::Message>(&item);
        const auto* r = m ? std::get_if<protocol::Request>(m) : nullptr;
        if (!r || r->method != "tools/call" || !r->params.is_object()) continue;
        auto name = r->params.find("name");
        if (name == r->params.end() || !name->is_string()) continue;
        auto tool = mcp.registry().tool_ptr(name->get<std::string>());
        if (!tool) continue;
        if (view.empty()) view = view_of(req, credential);
        if (!mcp.in_view(view, *tool)) continue;
        auto tool_needs = mcp.tool_scopes(*tool);
        auto missing = auth::missing_scopes(credential.oauth->scopes, tool_needs);
        if (missing.empty()) continue;
        needed = auth::scope_union(needed, tool_needs);
        missing_all = auth::scope_union(missing_all, missing);
        tools += (tools.empty() ? "" : ", ") + util::sanitize_for_message(tool->name, 128);
    }
    if (missing_all.empty()) return std::nullopt;
    return insufficient_scope(req, *credential.oauth, auth::scope_union(scopes_for_path(req), needed),
                              fmt::format("Forbidden: the access token lacks the scope(s) {} needed to call {}",
                                          auth::join_scopes(missing_all), tools));
}

// GET /.well-known/oauth-protected-resource[/path] (RFC 9728), served without a token.
HttpAnswer HttpEndpoint::State::metadata_answer(const HttpRequestView& req) {
    if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
    auto doc = auth::protected_resource_metadata(opts.oauth.resource, {opts.oauth.issuer}, opts.oauth.scopes_supported);
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                         {{"Content-Type", "application/json"}, {"Cache-Control", "max-age=300"}},
                                         doc.dump()));
}

}  // namespace toolport
