#include "client/oauth/server_metadata.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "auth/key_source.hpp"
#include "client/http_authorizer.hpp"
#include "client/oauth/json_document.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::client::oauth {

namespace {

std::vector<std::string> strings(const nlohmann::json& document, const char* name) {
    std::vector<std::string> out;
    auto it = document.find(name);
    if (it == document.end() || !it->is_array()) return out;
    for (const auto& item : *it) {
        if (item.is_string()) out.push_back(item.get<std::string>());
    }
    return out;
}

// An endpoint the client will send the user or credentials to: an absolute http(s) URL.
std::string endpoint(const nlohmann::json& document, const char* name, std::string_view url, bool required) {
    auto it = document.find(name);
    if (it == document.end() || !it->is_string()) {
        if (required)
            throw AuthorizationError(fmt::format("the authorization server metadata at {} has no {}", url, name));
        return {};
    }
    std::string value = it->get<std::string>();
    try {
        http_client::parse_url(value);
    } catch (const std::invalid_argument& e) {
        throw AuthorizationError(
            fmt::format("the {} of the authorization server metadata at {} is not usable: {}", name, url, e.what()));
    }
    return value;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

}  // namespace

bool ServerMetadata::supports_auth_method(std::string_view method) const {
    if (token_endpoint_auth_methods_supported.empty()) return method == "client_secret_basic";
    return contains(token_endpoint_auth_methods_supported, method);
}

ServerMetadata parse_server_metadata(const nlohmann::json& document, std::string_view issuer, std::string_view url) {
    auto it = document.find("issuer");
    if (it == document.end() || !it->is_string()) {
        throw AuthorizationError(fmt::format("the authorization server metadata at {} names no issuer", url));
    }
    if (it->get<std::string>() != issuer) {
        throw AuthorizationError(
            fmt::format("the authorization server metadata at {} is for issuer {}, not {}: refusing to use it", url,
                        util::sanitize_for_message(it->get<std::string>(), 200),
                        util::sanitize_for_message(issuer, 200)));
    }
    ServerMetadata m;
    m.issuer = std::string(issuer);
    m.authorization_endpoint = endpoint(document, "authorization_endpoint", url, false);
    m.token_endpoint = endpoint(document, "token_endpoint", url, true);
    m.registration_endpoint = endpoint(document, "registration_endpoint", url, false);
    m.scopes_supported = strings(document, "scopes_supported");
    m.code_challenge_methods_supported = strings(document, "code_challenge_methods_supported");
    m.token_endpoint_auth_methods_supported = strings(document, "token_endpoint_auth_methods_supported");
    m.dpop_signing_alg_values_supported = strings(document, "dpop_signing_alg_values_supported");
    // A flag of another JSON type is taken as false (json::value would throw type_error).
    auto cimd = document.find("client_id_metadata_document_supported");
    m.client_id_metadata_document_supported = cimd != document.end() && cimd->is_boolean() && cimd->get<bool>();
    auto iss = document.find("authorization_response_iss_parameter_supported");
    m.iss_parameter_supported = iss != document.end() && iss->is_boolean() && iss->get<bool>();
    return m;
}

ServerMetadata default_endpoints(std::string_view origin) {
    ServerMetadata m;
    m.issuer = std::string(origin);
    m.authorization_endpoint = m.issuer + "/authorize";
    m.token_endpoint = m.issuer + "/token";
    m.registration_endpoint = m.issuer + "/register";
    m.code_challenge_methods_supported = {"S256"};
    return m;
}

Task<std::optional<ServerMetadata>> discover_server_metadata(http_client::HttpClient& http, std::string issuer) {
    auto urls = auth::DiscoveredKeySource::metadata_urls(issuer);
    if (urls.empty()) {
        throw AuthorizationError(
            fmt::format("the authorization server {} is not an http(s) URL", util::sanitize_for_message(issuer, 200)));
    }
    for (const auto& url : urls) {
        auto document = co_await fetch_json_document(http, url, "authorization server metadata");
        if (document) co_return parse_server_metadata(*document, issuer, http_client::parse_url(url).display());
    }
    co_return std::nullopt;
}

}  // namespace toolport::client::oauth
