// The tool error a source answers with when the credentials of an upstream service (OAuth
// client credentials or token exchange, auth/upstream_credentials.hpp) cannot be had: its
// code, the authorization server's error code and a suggestion for the caller. Here, not in
// auth/, because the tool error is the server's type and auth sits below the server.
#pragma once

#include "auth/upstream_credentials.hpp"
#include "server/tool_error.hpp"

namespace toolport::providers {

ToolError credentials_tool_error(const auth::UpstreamCredentialsError& e);

}  // namespace toolport::providers
