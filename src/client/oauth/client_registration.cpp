#include "client/oauth/client_registration.hpp"

#include <chrono>

#include <fmt/format.h>

#include "client/http_authorizer.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::client::oauth {

namespace {
constexpr auto kRegistrationTimeout = std::chrono::seconds(15);
}

std::string choose_auth_method(const ServerMetadata& server, bool has_secret, bool has_key) {
    if (has_key) return "private_key_jwt";
    if (!has_secret) return "none";
    if (server.supports_auth_method("client_secret_basic")) return "client_secret_basic";
    if (server.supports_auth_method("client_secret_post")) return "client_secret_post";
    // A secret the server has no use for (it authenticates no client at its token endpoint).
    if (server.supports_auth_method("none")) return "none";
    return "client_secret_basic";  // the RFC 6749 default every server must accept
}

nlohmann::json registration_request(const ServerMetadata& server, const ClientIdentity& identity,
                                    const std::string& redirect_uri, const std::vector<std::string>& grant_types) {
    // A public client (no secret to keep: it runs on the user's machine) unless the server
    // only takes confidential ones.
    std::string method = "none";
    if (!server.supports_auth_method("none") && !server.token_endpoint_auth_methods_supported.empty()) {
        method = choose_auth_method(server, true, false);
    }
    nlohmann::json request = {{"client_name", identity.client_name},
                              {"grant_types", grant_types},
                              {"response_types", nlohmann::json::array({"code"})},
                              {"token_endpoint_auth_method", method},
                              {"application_type", "native"}};
    if (!redirect_uri.empty()) request["redirect_uris"] = nlohmann::json::array({redirect_uri});
    return request;
}

Task<RegisteredClient> register_client(http_client::HttpClient& http, const ServerMetadata& server,
                                       const ClientIdentity& identity, std::string redirect_uri,
                                       std::vector<std::string> grant_types) {
    RegisteredClient client;
    client.issuer = server.issuer;
    if (!identity.client_id.empty()) {
        client.kind = "pre-registered";
        client.client_id = identity.client_id;
        client.client_secret = identity.client_secret;
        client.auth_method = choose_auth_method(server, !identity.client_secret.empty(),
                                                !identity.private_key_pem.empty());
        co_return client;
    }
    if (server.client_id_metadata_document_supported && !identity.metadata_document_url.empty()) {
        client.kind = "metadata-document";
        client.client_id = identity.metadata_document_url;
        client.auth_method = "none";
        co_return client;
    }
    if (server.registration_endpoint.empty()) {
        throw AuthorizationError(fmt::format(
            "the authorization server {} offers no dynamic client registration; give the client_id it issued you "
            "(--client-id)",
            util::sanitize_for_message(server.issuer, 200)));
    }
    http_client::Request request;
    request.method = "POST";
    request.url = server.registration_endpoint;
    request.headers = {{"Content-Type", "application/json"}, {"Accept", "application/json"}};
    request.body = registration_request(server, identity, redirect_uri, grant_types).dump();
    http_client::CallOptions options;
    options.deadline = std::chrono::steady_clock::now() + kRegistrationTimeout;
    options.max_response_bytes = 1 << 20;
    options.max_attempts = 1;
    const std::string shown = http_client::parse_url(server.registration_endpoint).display();
    http_client::Response response;
    try {
        response = co_await http.fetch(std::move(request), options);
    } catch (const http_client::HttpError& e) {
        throw AuthorizationError(fmt::format("client registration at {} failed: {}", shown, e.what()));
    }
    auto body = nlohmann::json::parse(response.body, nullptr, false);
    if (response.status != 200 && response.status != 201) {
        std::string detail;
        if (body.is_object() && body.contains("error") && body["error"].is_string()) {
            detail = ": " + util::sanitize_for_message(body["error"].get<std::string>(), 100);
            if (body.contains("error_description") && body["error_description"].is_string()) {
                detail += " (" + util::sanitize_for_message(body["error_description"].get<std::string>(), 300) + ")";
            }
        }
        throw AuthorizationError(
            fmt::format("client registration at {} was refused: HTTP {}{}", shown, response.status, detail));
    }
    if (!body.is_object() || !body.contains("client_id") || !body["client_id"].is_string() ||
        body["client_id"].get<std::string>().empty()) {
        throw AuthorizationError(fmt::format("client registration at {} answered without a client_id", shown));
    }
    client.kind = "dynamic";
    client.client_id = body["client_id"].get<std::string>();
    if (body.contains("client_secret") && body["client_secret"].is_string()) {
        client.client_secret = body["client_secret"].get<std::string>();
    }
    if (body.contains("token_endpoint_auth_method") && body["token_endpoint_auth_method"].is_string()) {
        client.auth_method = body["token_endpoint_auth_method"].get<std::string>();
    } else {
        client.auth_method = choose_auth_method(server, !client.client_secret.empty(), false);
    }
    co_return client;
}

}  // namespace toolport::client::oauth
