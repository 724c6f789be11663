// HttpAuthorizer: what the Streamable HTTP client transport asks of whoever authorizes its
// requests (the OAuth 2.1 client of client/oauth/oauth_authorizer.hpp). The transport
// stays ignorant of OAuth: it asks for the Authorization header before each request and,
// when the server refuses one (401, or 403 naming insufficient_scope), hands over the
// status and the WWW-Authenticate challenge and sends the request again when told to.
// An authorizer with DPoP-bound tokens (RFC 9449) needs a proof header besides
// Authorization, made for each request's method and URL, and the DPoP-Nonce of a refusal:
// request_headers() and refused_request(), which default to the two simple hooks.
#pragma once

#include <string>
#include <utility>
#include <vector>

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

    // The headers that authorize the next `method` request to `url` (what the transport
    // sends): by default Authorization from authorization(), none when it is empty.
    virtual Task<std::vector<std::pair<std::string, std::string>>> request_headers(std::string method, std::string url) {
        (void)method;
        (void)url;
        std::vector<std::pair<std::string, std::string>> headers;
        std::string value = co_await authorization();
        if (!value.empty()) headers.emplace_back("Authorization", std::move(value));
        co_return headers;
    }

    // refused() with the refusal's DPoP-Nonce header ("" when absent), which a server that
    // wants its nonce in DPoP proofs sends with its use_dpop_nonce challenge (RFC 9449 §9).
    virtual Task<bool> refused_request(unsigned status, std::string www_authenticate, std::string dpop_nonce) {
        (void)dpop_nonce;
        co_return co_await refused(status, std::move(www_authenticate));
    }
};

}  // namespace toolport::client
