// The operator console's door (`console:`): who asks for a path at or under console.path
// and whether they may. The endpoint decides (the same credentials as /mcp; an OAuth token
// needs console.operator_scope, a gateway profile's token is never an operator's, without
// authentication only a loopback listener serves it) and hands the request with its
// verdict to the console's handler (src/console/), which words the answer: what the console
// says and serves is none of the transport's business.
#include "transports/endpoint_state.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "auth/authenticator.hpp"
#include "auth/resource_metadata.hpp"
#include "auth/scope_policy.hpp"
#include "server/session.hpp"
#include "stores/shared_sessions.hpp"
#include "transports/http_policy.hpp"

namespace toolport {

// The endpoint's sessions, for the console; holds the endpoint weakly.
class HttpEndpoint::State::ConsoleHostAdapter final : public ConsoleHost {
public:
    explicit ConsoleHostAdapter(std::weak_ptr<State> state) : state_(std::move(state)) {}

    std::vector<ConsoleSession> sessions() const override {
        std::vector<ConsoleSession> out;
        auto state = state_.lock();
        if (!state) return out;
        const auto now = std::chrono::steady_clock::now();
        for (const auto& [id, session] : state->sessions) {
            ConsoleSession s;
            s.id = id;
            s.transport = session->legacy ? "legacy_sse" : "streamable_http";
            s.principal = session->principal;
            s.profile = session->view;
            s.age = now - session->created;
            s.idle = now - session->last_active;
            if (session->mcp) {
                const auto& info = session->mcp->client_info();
                if (info.is_object()) {
                    s.client_name = info.value("name", "");
                    s.client_version = info.value("version", "");
                }
                s.protocol_version = std::string(protocol::name(session->mcp->revision()));
            }
            out.push_back(std::move(s));
        }
        return out;
    }

    bool end_session(std::string_view id, const std::string& reason) override {
        auto state = state_.lock();
        if (!state) return false;
        auto it = state->sessions.find(id);
        if (it == state->sessions.end()) return false;
        const bool shared = state->shared && !it->second->legacy;
        state->drop_session(id, reason);
        // A shared session ends everywhere, as a DELETE does: its record goes and the other
        // replicas, told on the bus, drop their copies.
        if (shared) {
            spawn(state->shared->remove(std::string(id)), [sid = std::string(id)](std::exception_ptr error) {
                if (error) {
                    spdlog::warn(
                        "session {}… ended here, but Redis could not be told: other replicas keep it "
                        "until it expires",
                        sid.substr(0, 8));
                }
            });
        }
        return true;
    }

private:
    std::weak_ptr<State> state_;
};

void HttpEndpoint::State::attach_console() {
    if (opts.console.handler) opts.console.handler->attach(std::make_shared<ConsoleHostAdapter>(weak_from_this()));
}

void HttpEndpoint::State::detach_console() {
    if (opts.console.handler) opts.console.handler->attach(nullptr);
}

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
