// Authorization server metadata (RFC 8414, or OpenID Connect Discovery) for the issuer a
// protected resource names: fetched from the well-known URLs in the order
// auth::DiscoveredKeySource::metadata_urls gives (RFC 8414 path-inserted, OpenID path-
// inserted, OpenID path-appended), and used only when its `issuer` is exactly the issuer
// the URL was built from (RFC 8414 §3.3; simple string comparison).
//
// A server of the 2025-03-26 revision publishes no protected resource metadata: its
// authorization server is its own origin, whose metadata may be missing too, in which case
// the endpoints are /authorize, /token and /register at that origin.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::client::oauth {

struct ServerMetadata {
    std::string issuer;  // as recorded: the authorization response's iss is compared with it
    std::string authorization_endpoint, token_endpoint, registration_endpoint;
    std::vector<std::string> scopes_supported, code_challenge_methods_supported, token_endpoint_auth_methods_supported;
    // RFC 9449 §5.1: the JWS algorithms it accepts in DPoP proofs; non-empty: it binds tokens.
    std::vector<std::string> dpop_signing_alg_values_supported;
    bool client_id_metadata_document_supported = false;
    // RFC 9207 authorization_response_iss_parameter_supported.
    bool iss_parameter_supported = false;

    // token_endpoint_auth_methods_supported lists `method` (absent: RFC 8414's default,
    // client_secret_basic only).
    bool supports_auth_method(std::string_view method) const;
};

// Checks a fetched document against `issuer`. Throws AuthorizationError (issuer mismatch,
// missing or unusable endpoints).
ServerMetadata parse_server_metadata(const nlohmann::json& document, std::string_view issuer, std::string_view url);

// The 2025-03-26 fallback endpoints at `origin` (scheme://authority).
ServerMetadata default_endpoints(std::string_view origin);

// The metadata of `issuer`, or nullopt when no well-known URL has any. Throws AuthorizationError.
Task<std::optional<ServerMetadata>> discover_server_metadata(http_client::HttpClient& http, std::string issuer);

}  // namespace toolport::client::oauth
