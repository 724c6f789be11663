// Who the client is at an authorization server, in the MCP spec's order of preference:
//  1. pre-registered: a client_id (and secret) the user was given for this server;
//  2. a Client ID Metadata Document: the client_id is an https URL of a document that
//     describes the client, used when the server advertises
//     client_id_metadata_document_supported and such a URL is configured;
//  3. Dynamic Client Registration (RFC 7591) at the server's registration_endpoint.
// The registration is valid at that one authorization server (its issuer is recorded):
// a resource that moves to another server means registering there anew (SEP-2352).
#pragma once

#include <string>
#include <vector>

#include "async/task.hpp"
#include "client/oauth/server_metadata.hpp"
#include "client/oauth/token_store.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::client::oauth {

struct ClientIdentity {
    std::string client_id, client_secret;  // pre-registered
    std::string private_key_pem;           // private_key_jwt instead of a secret
    std::string metadata_document_url;     // CIMD: https URL of the client's metadata document
    std::string client_name = "Toolport";
};

// The token endpoint authentication a client with (or without) a secret uses at `server`:
// client_secret_basic when it supports it, else client_secret_post; none without a secret;
// private_key_jwt with a key.
std::string choose_auth_method(const ServerMetadata& server, bool has_secret, bool has_key);

// Registers (or names) the client at `server`. `redirect_uri` and `grant_types` go into a
// dynamic registration. Throws AuthorizationError when no way applies or the server refuses.
Task<RegisteredClient> register_client(http_client::HttpClient& http, const ServerMetadata& server,
                                       const ClientIdentity& identity, std::string redirect_uri,
                                       std::vector<std::string> grant_types);

// The RFC 7591 registration request a native client sends.
nlohmann::json registration_request(const ServerMetadata& server, const ClientIdentity& identity,
                                    const std::string& redirect_uri, const std::vector<std::string>& grant_types);

}  // namespace toolport::client::oauth
