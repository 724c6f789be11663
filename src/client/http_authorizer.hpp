// HttpAuthorizer: what the Streamable HTTP client transport asks of whoever authorizes its
// requests (the OAuth 2.1 client of client/oauth/oauth_authorizer.hpp). The transport
// stays ignorant of OAuth: it asks for the Authorization header before each request and,
// when the server refuses one (401, or 403 naming insufficient_scope), hands over the
// status and the WWW-Authenticate challenge and sends the request again when told to.
#pragma once

#include <string>

#include "async/task.hpp"
#include "client/client_errors.hpp"

namespace toolport::client {

// Authorization could not be obtained (discovery failed, the authorization server refused,
// a check of the authorization response failed). One readable line, never a secret.
struct AuthorizationError : TransportError {
    using TransportError::TransportError;
};

class HttpAuthorizer {
public:
    virtual ~HttpAuthorizer() = default;

    // The Authorization header value for the next request ("Bearer ..."), empty when there
    // is no credential yet. May refresh an expired token first. Throws AuthorizationError.
    virtual Task<std::string> authorization() = 0;

    // The server refused a request with `status` (401 or 403) and `www_authenticate` (the
    // header's value, empty when absent). Returns true when new credentials were obtained
    // and the request should be sent again, false when the refusal stands. Throws
    // AuthorizationError when authorizing failed.
    virtual Task<bool> refused(unsigned status, std::string www_authenticate) = 0;
};

}  // namespace toolport::client
