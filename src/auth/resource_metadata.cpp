#include "auth/resource_metadata.hpp"

#include <stdexcept>

#include "http_client/url.hpp"

namespace toolport::auth {

namespace {

constexpr std::string_view kWellKnown = "/.well-known/oauth-protected-resource";

http_client::Url parsed_resource(const std::string& resource) {
    if (resource.find_first_of("?#") != std::string::npos)
        throw std::invalid_argument("the resource identifier must not have a query or fragment");
    try {
        return http_client::parse_url(resource);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(std::string("the resource identifier is not an absolute http(s) URL: ") + e.what());
    }
}

std::string quoted(std::string_view value) {
    std::string out = "\"";
    for (char c : value) {
        auto u = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\' || u < 0x20 || u == 0x7f) continue;
        out += c;
    }
    return out + "\"";
}

}  // namespace

std::string resource_metadata_path(const std::string& resource) {
    auto url = parsed_resource(resource);
    std::string path = url.target;
    while (!path.empty() && path.back() == '/') path.pop_back();
    return std::string(kWellKnown) + path;
}

std::string resource_metadata_url(const std::string& resource) {
    auto url = parsed_resource(resource);
    return url.origin() + resource_metadata_path(resource);
}

nlohmann::json protected_resource_metadata(const std::string& resource,
                                           const std::vector<std::string>& authorization_servers,
                                           const std::vector<std::string>& scopes_supported) {
    nlohmann::json doc = {
        {"resource", resource},
        {"authorization_servers", authorization_servers},
        {"bearer_methods_supported", nlohmann::json::array({"header"})},
    };
    if (!scopes_supported.empty()) doc["scopes_supported"] = scopes_supported;
    return doc;
}

std::string bearer_challenge(std::string_view metadata_url, const std::vector<std::string>& scopes,
                             std::string_view error) {
    std::string out = "Bearer";
    auto add = [&out](std::string_view name, std::string_view value) {
        out += out.size() == 6 ? " " : ", ";
        out += name;
        out += '=';
        out += quoted(value);
    };
    if (!error.empty()) add("error", error);
    if (!metadata_url.empty()) add("resource_metadata", metadata_url);
    if (!scopes.empty()) {
        std::string joined;
        for (const auto& s : scopes) joined += (joined.empty() ? "" : " ") + s;
        add("scope", joined);
    }
    return out;
}

bool valid_scope_token(std::string_view scope) {
    if (scope.empty()) return false;
    for (char c : scope) {
        auto u = static_cast<unsigned char>(c);
        if (u < 0x21 || u > 0x7e || c == '"' || c == '\\') return false;
    }
    return true;
}

}  // namespace toolport::auth
