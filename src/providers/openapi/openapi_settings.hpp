// The settings of one `openapi:` instance:
//
//   openapi:
//     petstore:
//       document: ./petstore.yaml        # file (relative to the working directory) or http(s) URL
//       base_url: http://127.0.0.1:8080  # instead of servers[0].url
//       tool_prefix: pets_               # before every tool name
//       include_tags: [pets]             # kept: no include_* or one matches, and no exclude_* matches
//       exclude_tags: [admin]
//       include_operations: [getPet]
//       exclude_operations: [deletePet]
//       credentials: {api_key: PETSTORE_KEY}   # scheme → environment variable (default <SOURCE>_<SCHEME>)
//       refresh_interval_s: 0            # 0: read again only on reload
//       max_response_bytes: 8388608      # an answer beyond this is refused while it is read
//       auth: {type: client_credentials, token_endpoint: https://as.example/token, client_id: toolport,
//              client_secret: "${PETSTORE_CLIENT_SECRET}"}   # an Authorization header from an
//                                        # authorization server (auth/upstream_credentials.hpp);
//                                        # it replaces one a security scheme would send
#pragma once

#include <chrono>
#include <map>
#include <string>

#include <optional>

#include "auth/upstream_credentials.hpp"
#include "providers/openapi/operations.hpp"
#include "providers/source_settings.hpp"

namespace toolport::openapi {

// The keys of `openapi: {<name>: {...}}` (openapi_settings.cpp): what OpenApiSettings::from
// reads and the JSON Schema and docs/configuration.md list.
const config::Section& settings_table();
// The file's `openapi:` key: a mapping of source names to settings_table().
const config::Key& file_key();

struct OpenApiSettings {
    std::string document;
    std::string base_url;  // empty: from the document's servers
    std::string tool_prefix;
    OperationFilter filter;
    std::map<std::string, std::string> credentials;  // scheme → environment variable name
    std::chrono::seconds refresh_interval{0};
    // An answer to a call is read no further than this (MCP_RESPONSE_TOO_LARGE); the
    // document itself is capped at 4 MiB, like a file document.
    std::size_t max_response_bytes = 8u << 20;
    std::optional<auth::UpstreamAuthSettings> auth;
    // Arguments an operation's inputSchema does not name are refused even where the schema
    // allows them (by default the schema decides: additionalProperties: false refuses).
    bool strict_arguments = false;

    // Reads and checks the section (nothing else: the document is read at start). Throws
    // SettingsError.
    static OpenApiSettings from(const providers::SourceSettings& settings);
};

}  // namespace toolport::openapi
