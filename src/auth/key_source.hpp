// Where the keys that verify access tokens come from.
//
// KeySource is the interface the authenticator (authenticator.hpp) uses:
//  - keys(): the key set to verify with now (fetched on first use);
//  - refresh(seen): a token named a `kid` that `seen` lacks (the authorization server may
//    have rotated its keys): fetch the set again, unless that was done less than a floor
//    ago, and return the set to use.
// Both return immutable sets (shared, readable from any thread) and throw KeySourceError
// when no key set can be had at all.
//
// StaticKeySource: a fixed set (a JWKS given in the configuration, tests).
//
// DiscoveredKeySource: the authorization server's own keys. From its issuer identifier it
// finds the metadata (RFC 8414 `/.well-known/oauth-authorization-server`, then OpenID
// Connect's `/.well-known/openid-configuration`, path-inserted then path-appended for an
// issuer with a path, as the MCP authorization chapter lists them), checks that the
// metadata's `issuer` is the configured one (RFC 8414 §3.3), and fetches its `jwks_uri`
// with the downstream HTTP client. The set is kept for max_age; then, or for an unknown
// `kid`, it is fetched again, but never twice within refetch_floor (so tokens with made-up
// `kid`s cannot make Toolport hammer the authorization server). A failed re-fetch keeps the
// set it had. Concurrent callers share one fetch in flight.
//
// Threading: DiscoveredKeySource runs on the event loop of the HttpClient it is given, and
// its methods must be called there. It must outlive the tasks it returns.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/completion.hpp"
#include "async/task.hpp"
#include "auth/jwks.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::auth {

// No key set could be obtained (the metadata or the JWKS could not be fetched or used).
// The message names URLs without their query, never keys or tokens.
struct KeySourceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class KeySource {
public:
    virtual ~KeySource() = default;
    // The key set to verify with (never null). Throws KeySourceError.
    virtual Task<std::shared_ptr<const KeySet>> keys() = 0;
    // A token's kid is not in `seen`: a set that may have it (a newer one, or `seen` itself
    // when fetching again is not allowed yet). Throws KeySourceError.
    virtual Task<std::shared_ptr<const KeySet>> refresh(std::shared_ptr<const KeySet> seen) = 0;
};

class StaticKeySource final : public KeySource {
public:
    explicit StaticKeySource(KeySet keys) : keys_(std::make_shared<const KeySet>(std::move(keys))) {}
    Task<std::shared_ptr<const KeySet>> keys() override;
    Task<std::shared_ptr<const KeySet>> refresh(std::shared_ptr<const KeySet> seen) override;

private:
    std::shared_ptr<const KeySet> keys_;
};

struct DiscoveryOptions {
    // The authorization server's issuer identifier (https://, no query or fragment).
    std::string issuer;
    // When set, the JWKS is fetched from here and no metadata is looked up.
    std::string jwks_uri;
    // Never fetch the key set again sooner than this after the last attempt.
    std::chrono::milliseconds refetch_floor{30'000};
    // keys() fetches the set again once it is this old.
    std::chrono::milliseconds max_age{3'600'000};
    // Each fetch (metadata or JWKS, retries included) ends by then.
    std::chrono::milliseconds fetch_timeout{10'000};
    // Larger metadata or JWKS documents are refused.
    std::size_t max_document_bytes = 512 * 1024;
    // Allow http:// issuers and jwks_uris (loopback tests); https only otherwise.
    bool allow_http = false;
    // Monotonic clock for max_age and the floor; default std::chrono::steady_clock::now.
    std::function<std::chrono::steady_clock::time_point()> clock;
};

// The authorization server's metadata document: the URLs of
// DiscoveredKeySource::metadata_urls(options.issuer) in order, the first that answers 200,
// which must be a JSON object whose `issuer` is options.issuer (RFC 8414 §3.3). Uses
// options' fetch_timeout and max_document_bytes; `fetches` (when given) counts the
// documents requested. Throws KeySourceError.
Task<nlohmann::json> fetch_server_metadata(http_client::HttpClient& http, const DiscoveryOptions& options,
                                           std::uint64_t* fetches = nullptr);

// The URL the authorization server's metadata (fetch_server_metadata) gives as `member`:
// jwks_uri here, token_endpoint for upstream_credentials.hpp, introspection_endpoint for
// introspection.hpp. It must pass check_server_url and have no fragment. Throws
// KeySourceError.
Task<std::string> discover_endpoint(http_client::HttpClient& http, const DiscoveryOptions& options, std::string member,
                                    std::uint64_t* fetches = nullptr);

// Throws std::invalid_argument, naming `what`, unless `url` is an absolute https URL (http
// too with allow_http): the check of an issuer and of the endpoints Toolport reaches it at.
void check_server_url(const std::string& what, const std::string& url, bool allow_http);

class DiscoveredKeySource final : public KeySource {
public:
    struct Stats {
        std::uint64_t metadata_fetches = 0;  // metadata documents requested
        std::uint64_t jwks_fetches = 0;      // JWKS documents requested
        std::uint64_t failures = 0;          // fetches that gave no key set
    };

    // Throws std::invalid_argument for an issuer or jwks_uri that is not an absolute https
    // URL (http too with allow_http), or has a query or fragment (the issuer).
    DiscoveredKeySource(http_client::HttpClient& http, DiscoveryOptions options);

    Task<std::shared_ptr<const KeySet>> keys() override;
    Task<std::shared_ptr<const KeySet>> refresh(std::shared_ptr<const KeySet> seen) override;

    // The metadata URLs tried, in order, for `issuer` (empty for an issuer that is not a URL).
    static std::vector<std::string> metadata_urls(const std::string& issuer);

    Stats stats() const { return stats_; }
    // The JWKS URL in use ("" until discovered).
    const std::string& jwks_uri() const { return jwks_uri_; }

private:
    Task<std::shared_ptr<const KeySet>> fetch_shared();
    Task<std::shared_ptr<const KeySet>> fetch_once();
    std::chrono::steady_clock::time_point now() const;

    http_client::HttpClient& http_;
    DiscoveryOptions options_;
    std::string jwks_uri_;
    std::shared_ptr<const KeySet> current_;
    std::optional<std::chrono::steady_clock::time_point> last_attempt_;
    std::chrono::steady_clock::time_point last_success_{};
    bool in_flight_ = false;
    std::vector<Completion<std::shared_ptr<const KeySet>>> waiters_;
    Stats stats_;
};

}  // namespace toolport::auth
