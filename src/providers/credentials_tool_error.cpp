#include "providers/credentials_tool_error.hpp"

namespace toolport::providers {

ToolError credentials_tool_error(const auth::UpstreamCredentialsError& e) {
    ToolError error(e.kind == auth::UpstreamCredentialsError::Kind::unavailable
                        ? ToolErrorCode::upstream_credentials_unavailable
                        : ToolErrorCode::upstream_authorization_failed,
                    e.what());
    if (!e.as_error.empty()) error.detail("authorization_server_error", e.as_error);
    if (e.kind == auth::UpstreamCredentialsError::Kind::unavailable) {
        error.recoverable(false).suggest(
            "Call through Toolport's HTTP endpoint with an OAuth access token of its authorization server; this "
            "service is reached with a token exchanged for the caller's own");
    } else if (e.transient) {
        error.transient(true).suggest("The authorization server could not be reached; retry shortly");
    } else if (e.as_error == "invalid_grant") {
        error.suggest(
            "Your access token could not be exchanged (expired, revoked, or not allowed for this service): "
            "obtain a new one and call again");
    } else {
        error.suggest(
            "The authorization server refused Toolport's token request; the server's operator must check "
            "this source's auth: settings");
    }
    return error;
}

}  // namespace toolport::providers
