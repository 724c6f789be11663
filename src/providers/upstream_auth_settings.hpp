// A source's `auth:` section (gateway upstreams, REST catalogs, OpenAPI sources), read and
// checked into the plain options the auth layer takes (auth/upstream_credentials.hpp says
// what each grant does):
//
//   auth:
//     type: token_exchange            # or client_credentials
//     token_endpoint: https://as.example/token   # or issuer: (its RFC 8414 metadata names it)
//     client_id: toolport
//     client_secret: ${TOOLPORT_CLIENT_SECRET}
//     auth_method: client_secret_basic            # client_secret_post, private_key_jwt, none
//     audience: https://upstream.example          # RFC 8693 audience
//     resource: https://upstream.example/mcp      # RFC 8707 resource
//     scope: "files:read files:write"
//
//   auth: {type: login, token_store: /path/oauth-tokens.json}   # gateway upstreams only
#pragma once

#include "auth/upstream_credentials.hpp"
#include "providers/source_settings.hpp"

namespace toolport::providers {

// The `auth:` key of a source's table (the JSON Schema and docs/configuration.md publish
// its keys): the OAuth grants' keys, and with `login_allowed` also `{type: login,
// token_store: FILE}`.
config::Key auth_key(std::string doc, bool login_allowed = false);

// Reads and checks an `auth:` section (`section` is that mapping). `login_allowed`: the
// source can use type login (a gateway's MCP upstream, whose server says how to authorize).
// Throws SettingsError naming the file, line and key.
auth::UpstreamAuthSettings read_upstream_auth(const SourceSettings& section, bool login_allowed = false);

}  // namespace toolport::providers
