// The authorization-code round trip's two ends, apart from the network: the URL the user's
// browser is sent to (RFC 6749 §4.1.1 with PKCE, RFC 8707's resource and the state), and
// the checks of the response that comes back to the redirect listener — the server's
// error, the code, and RFC 9207's iss: when present it must be exactly the recorded issuer
// (no URL normalization), and when the server advertised
// authorization_response_iss_parameter_supported it must be present.
#pragma once

#include <string>
#include <vector>

#include "client/oauth/redirect_listener.hpp"
#include "client/oauth/server_metadata.hpp"

namespace toolport::client::oauth {

struct AuthorizationRequest {
    std::string client_id, redirect_uri, code_challenge, state, resource;
    std::vector<std::string> scopes;  // empty: no scope parameter
};

// authorization_endpoint with the request's parameters (percent-encoded) in its query.
std::string authorization_url(const std::string& authorization_endpoint, const AuthorizationRequest& request);

// Throws AuthorizationError when the response must not be used (the code is not sent to
// the token endpoint then).
void check_authorization_response(const AuthorizationResponse& response, const ServerMetadata& server);

}  // namespace toolport::client::oauth
