// Protected Resource Metadata discovery (RFC 9728) for an MCP server, as the MCP
// authorization spec orders it: the resource_metadata URL of the server's 401 challenge;
// else the well-known URL with the server's path appended, then the one at the root.
// The document's `resource` must be the server the client talks to (RFC 9728 §3.3): a
// document naming another resource is refused, never used.
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

struct ProtectedResource {
    std::string resource;                            // as published: the RFC 8707 resource to ask for
    std::vector<std::string> authorization_servers;  // issuer identifiers, at least one
    std::vector<std::string> scopes_supported;       // may be empty
    std::string url;                                 // where it was found
};

// The server's canonical URI (MCP spec, "Canonical Server URI"): scheme and host lower-
// cased, default port dropped, the path kept, no query or fragment, and no trailing slash
// on a bare origin. Throws std::invalid_argument for a URL that is not http(s).
std::string canonical_server_url(std::string_view server_url);

// The well-known URLs to try when the challenge names none: path-suffixed, then root.
std::vector<std::string> protected_resource_metadata_urls(std::string_view server_url);

// Whether a document's `resource` may stand for `server_url`: the same origin, and its path
// the server's path or a parent of it at a segment boundary (a document at the root well-
// known URL names the origin).
bool resource_matches(std::string_view resource, std::string_view server_url);

// Checks a fetched document (shape and resource). Throws AuthorizationError.
ProtectedResource parse_protected_resource(const nlohmann::json& document, std::string_view server_url, std::string url);

// Finds the server's metadata: `challenge_url` (from WWW-Authenticate; may be empty) first,
// then the well-known URLs. nullopt when none of them has a document (a server of the
// 2025-03-26 revision, which had none). Throws AuthorizationError.
Task<std::optional<ProtectedResource>> discover_protected_resource(http_client::HttpClient& http,
                                                                   std::string server_url, std::string challenge_url);

}  // namespace toolport::client::oauth
