#include "client/oauth/protected_resource.hpp"

#include <fmt/format.h>

#include "client/http_authorizer.hpp"
#include "client/oauth/json_document.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::client::oauth {

namespace {

// The URL's path without its query ("" for the root).
std::string path_of(const http_client::Url& url) {
    std::string path = url.target.substr(0, url.target.find('?'));
    if (path == "/") path.clear();
    return path;
}

std::vector<std::string> string_list(const nlohmann::json& document, const char* name, bool& malformed) {
    std::vector<std::string> out;
    auto it = document.find(name);
    if (it == document.end()) return out;
    if (!it->is_array()) {
        malformed = true;
        return out;
    }
    for (const auto& item : *it) {
        if (!item.is_string()) {
            malformed = true;
            return {};
        }
        out.push_back(item.get<std::string>());
    }
    return out;
}

}  // namespace

std::string canonical_server_url(std::string_view server_url) {
    auto url = http_client::parse_url(server_url);
    return url.origin() + path_of(url);
}

std::vector<std::string> protected_resource_metadata_urls(std::string_view server_url) {
    auto url = http_client::parse_url(server_url);
    std::string path = path_of(url);
    std::vector<std::string> urls;
    if (!path.empty()) urls.push_back(url.origin() + "/.well-known/oauth-protected-resource" + path);
    urls.push_back(url.origin() + "/.well-known/oauth-protected-resource");
    return urls;
}

bool resource_matches(std::string_view resource, std::string_view server_url) {
    http_client::Url named, server;
    try {
        named = http_client::parse_url(resource);
        server = http_client::parse_url(server_url);
    } catch (const std::invalid_argument&) {
        return false;
    }
    if (named.target.find('?') != std::string::npos || resource.find('#') != std::string_view::npos) return false;
    if (named.origin() != server.origin()) return false;
    std::string parent = path_of(named), path = path_of(server);
    while (!parent.empty() && parent.back() == '/') parent.pop_back();
    if (parent.empty()) return true;
    return path == parent ||
           (path.size() > parent.size() && path.compare(0, parent.size(), parent) == 0 && path[parent.size()] == '/');
}

ProtectedResource parse_protected_resource(const nlohmann::json& document, std::string_view server_url, std::string url) {
    ProtectedResource prm;
    prm.url = std::move(url);
    auto resource = document.find("resource");
    if (resource == document.end() || !resource->is_string() || resource->get<std::string>().empty()) {
        throw AuthorizationError(fmt::format("the protected resource metadata at {} names no resource", prm.url));
    }
    prm.resource = resource->get<std::string>();
    if (!resource_matches(prm.resource, server_url)) {
        throw AuthorizationError(
            fmt::format("the protected resource metadata at {} is for {}, not for {}: refusing to authorize", prm.url,
                        util::sanitize_for_message(prm.resource, 200), canonical_server_url(server_url)));
    }
    bool malformed = false;
    prm.authorization_servers = string_list(document, "authorization_servers", malformed);
    prm.scopes_supported = string_list(document, "scopes_supported", malformed);
    if (malformed) {
        throw AuthorizationError(fmt::format(
            "the protected resource metadata at {} has an authorization_servers or scopes_supported that is not a "
            "list of strings",
            prm.url));
    }
    if (prm.authorization_servers.empty()) {
        throw AuthorizationError(
            fmt::format("the protected resource metadata at {} names no authorization server", prm.url));
    }
    return prm;
}

Task<std::optional<ProtectedResource>> discover_protected_resource(http_client::HttpClient& http,
                                                                   std::string server_url, std::string challenge_url) {
    std::vector<std::string> urls;
    if (!challenge_url.empty()) urls.push_back(challenge_url);
    for (auto& url : protected_resource_metadata_urls(server_url)) urls.push_back(std::move(url));
    for (const auto& url : urls) {
        auto document = co_await fetch_json_document(http, url, "protected resource metadata");
        if (document) co_return parse_protected_resource(*document, server_url, http_client::parse_url(url).display());
    }
    co_return std::nullopt;
}

}  // namespace toolport::client::oauth
