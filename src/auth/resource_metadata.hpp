// Toolport as an OAuth 2.1 resource server: what it publishes about itself and what it
// answers a caller without a (good enough) token.
//
//  - Protected Resource Metadata (RFC 9728): the JSON document at
//    /.well-known/oauth-protected-resource (and at that path followed by the resource's
//    own path, e.g. /.well-known/oauth-protected-resource/mcp) that names this resource,
//    the authorization servers that issue tokens for it and the scopes it knows;
//  - the WWW-Authenticate challenge of a 401 or 403 (RFC 6750 §3, RFC 9728 §5.1), which
//    points the client at that document and names the scopes to ask for.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::auth {

// RFC 9728 §3.1: the well-known segment inserted between the resource identifier's
// authority and its path ("https://mcp.example.com/mcp" →
// "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"). A trailing slash of
// the path is dropped. Throws std::invalid_argument for a resource that is not an absolute
// http(s) URL, or has a query or fragment.
std::string resource_metadata_url(const std::string& resource);

// The path part of resource_metadata_url ("/.well-known/oauth-protected-resource/mcp").
std::string resource_metadata_path(const std::string& resource);

// The metadata document: resource, authorization_servers, scopes_supported (left out when
// empty), bearer_methods_supported ["header"].
nlohmann::json protected_resource_metadata(const std::string& resource,
                                           const std::vector<std::string>& authorization_servers,
                                           const std::vector<std::string>& scopes_supported);

// A "Bearer ..." challenge: error (when not empty, e.g. "invalid_token",
// "insufficient_scope"), resource_metadata (when not empty), scope (the scopes joined by
// spaces, when any). The values are quoted; characters a quoted-string cannot hold (quotes,
// backslashes, controls) are dropped.
std::string bearer_challenge(std::string_view metadata_url, const std::vector<std::string>& scopes,
                             std::string_view error = {});

// Whether `scope` is a scope-token of RFC 6749 §3.3 (1*( %x21 / %x23-5B / %x5D-7E )).
bool valid_scope_token(std::string_view scope);

}  // namespace toolport::auth
