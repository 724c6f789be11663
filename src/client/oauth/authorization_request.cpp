#include "client/oauth/authorization_request.hpp"

#include <fmt/format.h>

#include "client/http_authorizer.hpp"
#include "client/oauth/scope_selection.hpp"
#include "util/percent.hpp"
#include "util/sanitize.hpp"

namespace toolport::client::oauth {

std::string authorization_url(const std::string& authorization_endpoint, const AuthorizationRequest& request) {
    std::string url = authorization_endpoint;
    char separator = url.find('?') == std::string::npos ? '?' : '&';
    auto add = [&](const char* name, const std::string& value) {
        url += separator;
        url += name;
        url += '=';
        url += util::percent_encode(value);
        separator = '&';
    };
    add("response_type", "code");
    add("client_id", request.client_id);
    add("redirect_uri", request.redirect_uri);
    add("code_challenge", request.code_challenge);
    add("code_challenge_method", "S256");
    add("state", request.state);
    if (!request.resource.empty()) add("resource", request.resource);
    if (!request.scopes.empty()) add("scope", join_scopes(request.scopes));
    return url;
}

void check_authorization_response(const AuthorizationResponse& response, const ServerMetadata& server) {
    // The issuer first: an error response from a mixed-up server is not to be trusted either.
    if (response.iss) {
        if (*response.iss != server.issuer) {
            throw AuthorizationError(
                fmt::format("the authorization response came from issuer {}, not {}: refusing it (RFC 9207)",
                            util::sanitize_for_message(*response.iss, 200),
                            util::sanitize_for_message(server.issuer, 200)));
        }
    } else if (server.iss_parameter_supported) {
        throw AuthorizationError(fmt::format(
            "the authorization server {} promises an iss parameter, and the authorization response has none: refusing "
            "it (RFC 9207)",
            util::sanitize_for_message(server.issuer, 200)));
    }
    if (!response.error.empty()) {
        std::string what = fmt::format("the authorization server refused: {}",
                                       util::sanitize_for_message(response.error, 100));
        if (!response.error_description.empty()) {
            what += " (" + util::sanitize_for_message(response.error_description, 300) + ")";
        }
        throw AuthorizationError(what);
    }
    if (response.code.empty()) throw AuthorizationError("the authorization response carries no code");
}

}  // namespace toolport::client::oauth
