// OAuthAuthorizer: Toolport as an OAuth 2.1 client of an MCP server (MCP authorization
// spec, 2025-11-25 and 2026-07-28), behind the HttpAuthorizer hooks of the Streamable HTTP
// transport. On a 401 it discovers the server's protected resource metadata and its
// authorization server's metadata, identifies the client (pre-registered, metadata
// document or dynamic registration), and obtains a token for the server's resource:
//  - authorization_code: PKCE S256, a loopback redirect listener, the user's browser;
//  - client_credentials (the machine-to-machine extension), the client authenticated with
//    a secret or a private key;
//  - the JWT-bearer grant (RFC 7523) with a workload's assertion, or with an ID-JAG the
//    enterprise IdP exchanged the user's ID token for (SEP-990).
// A 403 insufficient_scope asks again with the union of the scopes (step-up); a token that
// expired, or was refused, is refreshed with its refresh token first. Everything it
// obtains is kept in the TokenStore under the server's canonical URL.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "client/http_authorizer.hpp"
#include "client/oauth/client_registration.hpp"
#include "client/oauth/token_store.hpp"

namespace toolport {
class AsioExecutor;
}

namespace toolport::client::oauth {

struct OAuthOptions {
    // enterprise: SEP-990's enterprise-managed authorization: the user's ID token from the
    // enterprise IdP is exchanged there (RFC 8693) for an ID-JAG naming the MCP server's
    // authorization server and resource, which the JWT-bearer grant then trades for a token.
    enum class Grant { authorization_code, client_credentials, jwt_bearer, enterprise };
    std::string server_url;
    Grant grant = Grant::authorization_code;
    ClientIdentity identity;
    std::string signing_alg;  // private_key_jwt: RS256 / ES256 (empty: from the key)
    std::string assertion;    // jwt_bearer: the workload's JWT
    // enterprise: the IdP's token endpoint, the client_id Toolport has there, the ID token.
    std::string idp_token_endpoint, idp_client_id, idp_id_token;
    // The TokenStore file. Empty: nothing is kept beyond the authorizer's life (a gateway's
    // machine-to-machine upstream, which can always ask for a new token).
    std::string store_path;
    std::string ca_file;  // trusted for https authorization servers, besides the system's
    std::chrono::milliseconds redirect_timeout{std::chrono::minutes(5)};
    // Shows the user the authorization page (opens a browser, prints the URL). What it
    // returns, when set, is asked every 50 ms during the first 2 s of the wait for the
    // redirect whether the page could not be opened after all: an error sentence ends the
    // flow with it (a browser command that failed will bring no redirect), "" stops asking,
    // nullopt means "not known yet". It must not block: the redirect comes on the same loop.
    using OpenerCheck = std::function<std::optional<std::string>()>;
    std::function<OpenerCheck(const std::string& url)> show_authorization_url;
    // false: there is no user to send to a browser (a gateway's upstream authorized with the
    // tokens of `toolport login`): tokens are used and refreshed, but where the
    // authorization_code grant would need a new authorization the request fails with an
    // AuthorizationError saying so, and no redirect listener is opened.
    bool interactive = true;
};

class OAuthAuthorizer final : public HttpAuthorizer {
public:
    // Throws std::invalid_argument for options it cannot use (a server URL that is not
    // http(s), a jwt_bearer grant without an assertion, ...).
    OAuthAuthorizer(AsioExecutor& executor, OAuthOptions options);
    ~OAuthAuthorizer() override;

    Task<std::string> authorization() override;
    Task<bool> refused(unsigned status, std::string www_authenticate) override;
    // With DPoP-bound tokens (the authorization server advertised ES256 proofs), a DPoP
    // proof for `method` and `url` besides Authorization: DPoP.
    Task<std::vector<std::pair<std::string, std::string>>> request_headers(std::string method, std::string url) override;
    // A 401 use_dpop_nonce with a DPoP-Nonce: sent again with the nonce (RFC 9449 §9).
    Task<bool> refused_request(unsigned status, std::string www_authenticate, std::string dpop_nonce) override;

    // Authorizes now, without waiting for a 401 (toolport login). Throws AuthorizationError.
    Task<void> login();

    // The issuer of the authorization server the current tokens come from ("" when none).
    std::string issuer() const;

private:
    Task<bool> refused_alone(unsigned status, std::string www_authenticate);

    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toolport::client::oauth
