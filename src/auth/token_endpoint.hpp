// An OAuth 2.0 token endpoint client (RFC 6749 §3.2, §5), on the downstream HTTP client.
//
// request_token() POSTs a grant (authorization_code, refresh_token, client_credentials,
// RFC 8693 token exchange, ...) as an application/x-www-form-urlencoded body, with the
// client authenticated as the authorization server registered it:
//  - none: client_id in the body (public clients);
//  - client_secret_basic: Authorization: Basic base64(form(client_id):form(secret))
//    (RFC 6749 §2.3.1 form-encodes both before joining them);
//  - client_secret_post: client_id and client_secret in the body;
//  - private_key_jwt (RFC 7523 §2.2, OpenID Connect Core §9): a short-lived JWT signed with
//    the client's RSA or P-256 key as client_assertion.
// It returns the success body (RFC 6749 §5.1) once it is usable: an access_token and a
// token_type of Bearer or DPoP, or, from a token exchange that issued no access token (an
// ID-JAG; issued_token_type says which), N_A (RFC 8693 §2.2.1). An error body (§5.2) or an unusable answer is a
// TokenEndpointError; network trouble stays an http_client::HttpError.
//
// Nothing here logs: secrets, assertions and tokens are never written anywhere, and error
// messages name the endpoint without its query.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "http_client/http_client.hpp"

namespace toolport::auth {

// How the client authenticates at the token endpoint (RFC 6749 §2.3, RFC 7523 for private_key_jwt).
struct ClientAuthentication {
    enum class Method { none, client_secret_basic, client_secret_post, private_key_jwt };
    Method method = Method::none;
    std::string client_id;
    std::string client_secret;    // basic / post (never logged)
    std::string private_key_pem;  // private_key_jwt: PEM private key (RSA or EC P-256)
    std::string key_id;           // private_key_jwt: kid header, may be empty
    std::string signing_alg;      // private_key_jwt: RS256 or ES256 (default from the key type)
    // private_key_jwt: the assertion's `aud`. Empty: the token endpoint URL. Some servers
    // want their issuer identifier there instead (RFC 7523 §3 allows either).
    std::string assertion_audience;
};

// "none", "client_secret_basic", ... and back; nullopt for an unknown name.
std::string_view method_name(ClientAuthentication::Method method);
std::optional<ClientAuthentication::Method> parse_method(std::string_view name);

// Throws std::invalid_argument when `client` cannot be used as configured: no client_id,
// a secret method without a secret, a private key that is not PEM RSA or EC P-256, or a
// signing_alg that does not fit the key. For configuration checks, before any request.
void check_client_authentication(const ClientAuthentication& client);

struct TokenResponse {
    std::string access_token, token_type, refresh_token, scope, issued_token_type, id_token;
    std::optional<std::chrono::seconds> expires_in;
    nlohmann::json raw;      // the whole JSON body
    std::string dpop_nonce;  // the response's DPoP-Nonce header (RFC 9449 §8), "" when none
};

// What a token request may carry besides the grant and the client authentication.
struct TokenRequestExtras {
    // Sent as given, after the request's own headers: a DPoP proof (RFC 9449 §5).
    std::vector<std::pair<std::string, std::string>> headers;
};

// The token endpoint refused (RFC 6749 §5.2 error body) or answered something unusable.
// `error` is the server's error code (invalid_grant, invalid_client, ...), empty when the
// answer was no OAuth error body; `description` is its error_description (cut and
// cleaned of control characters) or what was wrong with the answer.
struct TokenEndpointError : std::runtime_error {
    TokenEndpointError(unsigned status, std::string error, std::string description);
    unsigned status;
    std::string error;
    std::string description;  // e.g. invalid_grant
    // The response's DPoP-Nonce header: with error use_dpop_nonce, the nonce the next
    // proof must carry (RFC 9449 §8). "" when none.
    std::string dpop_nonce;
};

// POSTs application/x-www-form-urlencoded `grant` (grant_type and its parameters, e.g.
// {"grant_type","authorization_code"},{"code",...},{"redirect_uri",...},{"code_verifier",...},{"resource",...})
// plus the client authentication, to `token_endpoint`; returns the parsed success body.
// private_key_jwt: client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer,
// client_assertion = a JWT signed with the key (iss=sub=client_id, aud=token endpoint (or
// assertion_audience when given), jti, iat, exp=+5 min).
// `token_endpoint` and `client` are read when the task runs: they must live until it ends
// (as they do in `co_await request_token(...)`). Whether http:// is acceptable is the
// caller's decision (configuration refuses it outside loopback tests).
// `extras.headers` go with the request; the response's DPoP-Nonce header is reported in
// TokenResponse::dpop_nonce or TokenEndpointError::dpop_nonce.
// Throws TokenEndpointError, std::invalid_argument (an unusable client or URL),
// http_client::HttpError, http_client::ResponseTooLarge, OperationCancelled.
Task<TokenResponse> request_token(http_client::HttpClient& http, const std::string& token_endpoint,
                                  const ClientAuthentication& client,
                                  std::vector<std::pair<std::string, std::string>> grant,
                                  http_client::CallOptions options = {}, TokenRequestExtras extras = {});

// The request a client sends to an endpoint of its authorization server: `fields`
// POSTed as application/x-www-form-urlencoded (Accept: application/json), `client`
// authenticated as RFC 6749 §2.3 and RFC 7523 §2.2 have it (the Authorization header of
// client_secret_basic, or client_id, client_secret or client_assertion appended to the
// fields). For the token endpoint (request_token) and for token introspection (RFC 7662
// §2.1), which authenticates clients the same way. A private_key_jwt assertion's `aud` is
// `endpoint` unless client.assertion_audience is set.
http_client::Request client_form_post(const std::string& endpoint, const ClientAuthentication& client,
                                      std::vector<std::pair<std::string, std::string>> fields);

// A compact JWS (RFC 7515) of `header` and `claims`, signed with the unencrypted PEM
// private key: RS256 with an RSA key (2048 bits or more), ES256 with an EC P-256 key; the
// header's `alg` is set from the key (a different one there throws std::invalid_argument).
// The OAuth client's one JWS signer: client assertions here, DPoP proofs (client/oauth/dpop).
std::string sign_jws(const std::string& private_key_pem, nlohmann::json header, const nlohmann::json& claims);

// application/x-www-form-urlencoded encoding (RFC 6749 Appendix B), used for the body and for client_secret_basic's id/secret.
std::string form_urlencode(std::string_view value);

// Parses a token endpoint's success body (RFC 6749 §5.1); throws TokenEndpointError
// (with `status`) when it is not JSON or lacks a usable access_token or token_type.
TokenResponse parse_token_response(unsigned status, std::string_view body);

}  // namespace toolport::auth
