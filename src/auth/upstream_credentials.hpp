// Credentials Toolport obtains for the services behind it (gateway upstreams, REST catalogs,
// OpenAPI sources), from the settings of each source's `auth:` section (UpstreamAuthSettings;
// the providers read and check that section, providers/upstream_auth_settings.hpp):
//
//  - client_credentials: Toolport's own token for the service (RFC 6749 §4.4), one for all
//    callers, obtained again shortly before it expires.
//  - token_exchange (RFC 8693): the caller's verified access token is exchanged for one whose
//    audience is the service; each caller's exchanged token is cached until shortly before
//    it expires. The caller's own token never goes to the service. A call without one
//    (stdio, a static bearer token) cannot be made. The source's own requests (a gateway's
//    listing, a REST catalog's) use a client_credentials token of the same client, unless
//    `own_requests: none` sends them without one.
//  - login: the tokens the operator obtained once with `toolport login <upstream URL>` (the
//    browser flow, a user's authorization), read from the CLI's token store and refreshed
//    there; never a new authorization, as a server has no user at a browser. The gateway's
//    upstream runs client/oauth's OAuthAuthorizer, non-interactive, on these settings
//    (UpstreamCredentials does not take this type).
//
// A request for a key that is being obtained waits for that request instead of making
// another. A service that answers 401 to a token has it dropped (rejected()); the caller
// tries once more with a new one.
//
// Threading: everything runs on the event loop of the HttpClient given; the object must be
// held by a shared_ptr (requests in flight keep it alive). Nothing is ever logged with a
// token or secret in it; cache keys are SHA-256 digests of the callers' tokens.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "async/completion.hpp"
#include "async/task.hpp"
#include "auth/token_endpoint.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::auth {

struct UpstreamAuthSettings {
    enum class Type { client_credentials, token_exchange, login };
    Type type = Type::client_credentials;
    // login: the token store file; empty: the CLI's ($XDG_CONFIG_HOME/toolport/oauth-tokens.json).
    std::string token_store;
    std::string token_endpoint;  // empty: from the issuer's metadata, at first use
    std::string issuer;
    ClientAuthentication client;
    std::string audience;  // RFC 8693 `audience` (also sent with client_credentials, as some servers want)
    std::string resource;  // RFC 8707 `resource`
    std::string scope;
    // token_exchange: the source's own requests (listing) carry a client_credentials token.
    bool own_requests_authorized = true;
    bool allow_http = false;                   // http:// token endpoints and issuers (loopback tests)
    std::chrono::milliseconds timeout{10000};  // each token request
    // Tokens are used until this long before they expire (less for very short-lived ones).
    std::chrono::seconds expiry_margin{30};
    // Tokens whose response names no expires_in are kept this long.
    std::chrono::seconds default_lifetime{300};
    std::size_t max_cached = 10000;  // exchanged tokens kept at once

    bool exchanges() const { return type == Type::token_exchange; }
};

// "client_credentials", "token_exchange", "login".
std::string_view type_name(UpstreamAuthSettings::Type type);

// Why `text` cannot be a token endpoint or issuer URL (not an absolute http(s) URL, http://
// without `allow_http`, a fragment); "" when it can.
std::string url_problem(const std::string& text, bool allow_http);

// A call could not be given credentials for the service.
struct UpstreamCredentialsError : std::runtime_error {
    enum class Kind {
        unavailable,           // token_exchange without a caller token
        authorization_failed,  // the authorization server refused or could not be reached
    };
    UpstreamCredentialsError(Kind kind, const std::string& message, std::string as_error = {}, bool transient = false)
        : std::runtime_error(message), kind(kind), as_error(std::move(as_error)), transient(transient) {}
    Kind kind;
    std::string as_error;  // the authorization server's error code (invalid_grant, ...), "" when none
    bool transient;        // network trouble: the same call may succeed later
    // "upstream_credentials_unavailable" / "upstream_authorization_failed". The tool error a
    // source answers with is providers::credentials_tool_error (providers/credentials_tool_error.hpp).
    std::string_view code() const;
};

class UpstreamCredentials : public std::enable_shared_from_this<UpstreamCredentials> {
public:
    using Clock = std::function<std::chrono::steady_clock::time_point()>;

    struct Stats {
        std::uint64_t token_requests = 0;  // requests sent to the token endpoint (both grants)
        std::uint64_t exchanges = 0;       // of which token exchanges
        std::uint64_t failures = 0;        // requests that gave no token
        std::uint64_t cache_hits = 0;
        std::size_t cached = 0;  // tokens held now
    };

    // `service` names the source in messages ("upstream files", "catalog weather").
    // Throws std::invalid_argument for settings providers::read_upstream_auth would refuse.
    UpstreamCredentials(std::string service, UpstreamAuthSettings settings, http_client::HttpClient& http,
                        Clock clock = {});

    const UpstreamAuthSettings& settings() const { return settings_; }

    // The Authorization header value ("Bearer ...") for a request of the source's own;
    // "" when such requests go without (token_exchange with own_requests: none).
    // Throws UpstreamCredentialsError.
    Task<std::string> for_source();
    // The Authorization header value for a request on behalf of the caller whose verified
    // access token is `subject_token` ("" when it has none). client_credentials: the
    // source's token, whoever calls. Throws UpstreamCredentialsError.
    Task<std::string> for_caller(std::string subject_token);
    // The service refused `authorization` (401): it is not handed out again.
    void rejected(const std::string& authorization);

    Stats stats() const;

private:
    struct Entry {
        std::string authorization;
        std::chrono::steady_clock::time_point usable_until;
    };
    // The cached value of `key`, or one obtained with `grant` (one request in flight per key).
    Task<std::string> obtain(std::string key, std::vector<std::pair<std::string, std::string>> grant, bool exchange);
    Task<void> run_request(std::string key, std::vector<std::pair<std::string, std::string>> grant, bool exchange);
    Task<std::string> endpoint();
    void store(const std::string& key, Entry entry);
    std::chrono::steady_clock::time_point now() const;
    std::vector<std::pair<std::string, std::string>> client_credentials_grant() const;

    std::string service_;
    UpstreamAuthSettings settings_;
    http_client::HttpClient& http_;
    Clock clock_;
    std::string token_endpoint_;  // configured or discovered
    std::map<std::string, Entry> cache_;
    std::map<std::string, std::vector<Completion<std::string>>> in_flight_;
    Stats stats_;
};

}  // namespace toolport::auth
