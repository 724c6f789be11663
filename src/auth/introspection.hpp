// Opaque access tokens, checked by asking the authorization server (OAuth 2.0 Token
// Introspection, RFC 7662).
//
//   auth::TokenIntrospector introspector(http, {.endpoint = "https://as.example.com/introspect",
//                                              .issuer = "https://as.example.com",
//                                              .audiences = {"https://mcp.example.com/mcp"},
//                                              .client = {...client_secret_basic...}});
//   std::shared_ptr<const auth::VerifiedToken> who = co_await introspector.introspect(token);
//
// The token is POSTed (token=..., token_type_hint=access_token, form-encoded) with the
// resource server's own client authentication, as the token endpoint client sends it
// (auth::client_form_post: none, client_secret_basic, client_secret_post or
// private_key_jwt, whose assertion's aud is the introspection endpoint unless
// assertion_audience says otherwise). The answer must say "active": true (else
// TokenError inactive); then `aud` must name this resource (wrong_audience; an answer
// without `aud` is refused too: a token for any service would pass), `iss`, when present,
// must be the issuer (wrong_issuer), `exp` must not have passed (expired), `nbf` not be in
// the future, and the token needs a `sub` or a `client_id` (the caller's identity).
// `scope` is space-separated.
//
// Caching, by the SHA-256 digest of the token (never the token):
//  - an active token until its `exp` (max_cache when it has none);
//  - a refused one for negative_cache, so a flood of bad tokens is not a flood of
//    introspection requests;
//  - concurrent checks of one token share one request.
// An endpoint that cannot be reached, answers other than 200, or answers something that
// is not an introspection response: TokenError introspection_unavailable (a server-side
// failure: 503, not 401), never cached.
//
// Without `endpoint`, the issuer's metadata (RFC 8414, then OpenID Connect discovery:
// auth::discover_endpoint) is fetched once and its `introspection_endpoint` used.
//
// Threading: runs on the event loop of its HttpClient; must outlive the tasks it returns.
// Nothing here logs tokens or secrets.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "async/completion.hpp"
#include "async/task.hpp"
#include "auth/jwt.hpp"
#include "auth/token_cache.hpp"
#include "auth/token_endpoint.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::auth {

struct IntrospectionOptions {
    // The introspection endpoint; empty: the issuer's metadata introspection_endpoint.
    std::string endpoint;
    // The authorization server's issuer identifier (for discovery, and `iss` when present).
    std::string issuer;
    // This resource's identifiers; `aud` must contain one. Never empty.
    std::vector<std::string> audiences;
    // How Toolport authenticates at the endpoint (any method; none may go without a client_id).
    ClientAuthentication client;
    std::chrono::seconds skew{60};
    // How long an active token without `exp` is remembered.
    std::chrono::seconds max_cache{300};
    // How long a refused token is remembered (0: not at all).
    std::chrono::seconds negative_cache{10};
    std::size_t cache_capacity = 10'000;
    std::size_t max_token_bytes = 16 * 1024;
    // Each introspection (or metadata fetch) ends by then.
    std::chrono::milliseconds timeout{10'000};
    std::size_t max_response_bytes = 64 * 1024;
    // Allow http:// endpoints (loopback tests).
    bool allow_http = false;
    std::function<std::chrono::system_clock::time_point()> clock;
};

class TokenIntrospector {
public:
    struct Stats {
        std::uint64_t requests = 0;       // introspection requests sent
        std::uint64_t negative_hits = 0;  // refusals answered from the negative cache
    };

    // Throws std::invalid_argument: no issuer or audiences, an endpoint that is not an
    // absolute https URL (http too with allow_http), or a client authentication that
    // check_client_authentication refuses (method none aside).
    TokenIntrospector(http_client::HttpClient& http, IntrospectionOptions options);

    // What the authorization server says about `token` (without "Bearer "). Throws TokenError.
    Task<std::shared_ptr<const VerifiedToken>> introspect(std::string token);

    // The cached answer for an active token, or null (not asked yet, refused, or expired).
    std::shared_ptr<const VerifiedToken> cached(std::string_view token);

    // Reads an introspection response (RFC 7662 §2.2) at `now`; throws TokenError. Public
    // for tests.
    std::shared_ptr<const VerifiedToken> read_response(const nlohmann::json& body,
                                                       std::chrono::system_clock::time_point now) const;

    Stats stats() const { return stats_; }
    const std::string& endpoint() const { return endpoint_; }

private:
    struct Refusal {
        TokenErrorReason reason;
        std::string message;
        std::chrono::system_clock::time_point until;
    };
    using Outcome = std::shared_ptr<const VerifiedToken>;

    Task<std::shared_ptr<const VerifiedToken>> ask(std::string token, TokenDigest key);
    Task<std::string> endpoint_from_metadata();
    std::chrono::system_clock::time_point now() const;
    void remember_refusal(const TokenDigest& key, const TokenError& error);

    http_client::HttpClient& http_;
    IntrospectionOptions options_;
    std::string endpoint_;
    VerifiedTokenCache cache_;
    std::map<TokenDigest, Refusal> refused_;
    std::map<TokenDigest, std::vector<Completion<Outcome>>> in_flight_;
    Stats stats_;
};

// Whether `token` has the shape of a JWS compact serialization (three non-empty
// base64url parts): what is verified locally; anything else is introspected.
bool looks_like_jwt(std::string_view token);

}  // namespace toolport::auth
