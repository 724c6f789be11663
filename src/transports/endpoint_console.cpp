// The operator console's door (`console:`): who asks for a path at or under console.path
// and whether they may. The endpoint decides (the same credentials as /mcp; an OAuth token
// needs console.operator_scope, a gateway profile's token is never an operator's, without
// authentication only a loopback listener serves it) and hands the request with its
// verdict to the console's handler (src/console/), which words the answer: what the console
// says and serves is none of the transport's business.
#include "transports/endpoint_state.hpp"

#include <fmt/format.h>

#include "auth/authenticator.hpp"
#include "auth/resource_metadata.hpp"
#include "auth/scope_policy.hpp"
#include "transports/http_policy.hpp"

namespace toolport {

bool HttpEndpoint::State::is_console_path(std::string_view path) const {
    const auto& c = opts.console;
    if (!c.enabled || !c.handler || path == opts.path) return false;
    if (path.compare(0, c.path.size(), c.path) != 0) return false;
    return path.size() == c.path.size() || path[c.path.size()] == '/';
}

HttpAnswer HttpEndpoint::State::console_answer(const HttpRequestView& req, std::string_view path,
                                               const Reentry& reentry) {
    using Verdict = ConsoleAccess::Verdict;
    const auto& scope = opts.console.operator_scope;
    ConsoleAccess access;
    const auto subpath = path.substr(opts.console.path.size());
    if (!auth_on()) {
        if (!http_policy::is_loopback_host(opts.host)) {
            access.verdict = Verdict::open_off_loopback;
            access.why = "the console is served without authentication only on a loopback listener";
        }
        return opts.console.handler->answer(req, subpath, access);
    }
    // What a token must have: the server's required scopes and the operator's.
    auto needed = opts.oauth.required_scopes;
    if (!scope.empty()) needed = auth::scope_union(needed, {scope});
    auto challenge = [&](std::string_view error) {
        if (authn) return auth::bearer_challenge(metadata_url, needed, error);
        return error.empty() ? std::string("Bearer realm=\"toolport\"")
                             : fmt::format("Bearer realm=\"toolport\", error=\"{}\"", error);
    };
    const auto credential = credential_of(req.header("Authorization"), reentry);
    if (credential.unverified && reentry.refused_token.empty()) return verify_then_answer(req, reentry);
    if (!credential.valid) {
        access.verdict = Verdict::needs_credential;
        const bool refused = req.has_header("Authorization");
        access.challenge = challenge(refused ? "invalid_token" : "");
        access.why = !reentry.refused_token.empty() ? reentry.refused_token
                     : refused                      ? "the bearer token was not accepted"
                                                    : "no credential was sent";
        return opts.console.handler->answer(req, subpath, access);
    }
    access.principal = principal_of(req, credential);
    if (!credential.profile.empty()) {
        access.verdict = Verdict::not_operator;
        access.why = fmt::format("this bearer token selects the gateway profile \"{}\", which is no operator's",
                                 credential.profile);
    } else if (credential.oauth) {
        access.auth = "oauth";
        access.scopes = credential.oauth->scopes;
        if (auto missing = auth::missing_scopes(credential.oauth->scopes, needed); !missing.empty()) {
            access.verdict = Verdict::insufficient_scope;
            access.challenge = auth::bearer_challenge(metadata_url, auth::scope_union(credential.oauth->scopes, needed),
                                                      "insufficient_scope");
            access.why = "the access token lacks the scope(s) " + auth::join_scopes(missing);
        }
    } else {
        access.auth = "bearer";
    }
    return opts.console.handler->answer(req, subpath, access);
}

}  // namespace toolport
