#include "providers/openapi/security_schemes.hpp"

#include <fmt/format.h>

#include "util/ascii.hpp"

namespace toolport::openapi {

namespace {}  // namespace

std::string default_credential_env(const std::string& source, const std::string& scheme) {
    std::string out;
    for (char c : source + "_" + scheme) {
        const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out += alnum ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : '_';
    }
    return out;
}

SecuritySchemes read_security_schemes(const DocumentSet& docs, const std::string& source,
                                      const std::map<std::string, std::string>& credential_env,
                                      std::vector<std::string>& warnings) {
    SecuritySchemes out;
    const Json& root = docs.root();
    if (!root.contains("components") || !root["components"].is_object()) return out;
    const Json raw = root["components"].value("securitySchemes", Json::object());
    if (!raw.is_object()) return out;
    for (const auto& [name, raw_scheme] : raw.items()) {
        Json scheme;
        try {
            scheme = docs.resolve(raw_scheme, docs.root_location());
        } catch (const DocumentError& e) {
            warnings.push_back(fmt::format("security scheme {} left out: {}", name, e.what()));
            continue;
        }
        if (!scheme.is_object()) continue;
        SecurityScheme s;
        auto env = credential_env.find(name);
        s.env_var = env != credential_env.end() ? env->second : default_credential_env(source, name);
        const std::string type = scheme.value("type", "");
        if (type == "apiKey") {
            const std::string in = scheme.value("in", "");
            s.parameter = scheme.value("name", "");
            if (s.parameter.empty() || (in != "header" && in != "query" && in != "cookie")) {
                warnings.push_back(
                    fmt::format("security scheme {} left out: apiKey needs `name` and `in` "
                                "(header, query or cookie)",
                                name));
                continue;
            }
            s.kind = in == "header"  ? SecurityScheme::Kind::api_key_header
                     : in == "query" ? SecurityScheme::Kind::api_key_query
                                     : SecurityScheme::Kind::api_key_cookie;
        } else if (type == "http" && util::to_lower_ascii(scheme.value("scheme", "")) == "bearer") {
            s.kind = SecurityScheme::Kind::bearer;
        } else if (type == "http" && util::to_lower_ascii(scheme.value("scheme", "")) == "basic") {
            s.kind = SecurityScheme::Kind::basic;
        } else if (type == "oauth2" || type == "openIdConnect") {
            // The token is obtained outside Toolport and handed over in the environment.
            s.kind = SecurityScheme::Kind::bearer;
        } else {
            warnings.push_back(fmt::format("security scheme {} left out: type {} is not supported", name,
                                           type == "http" ? "http " + scheme.value("scheme", "?") : type));
            continue;
        }
        out.emplace(name, std::move(s));
    }
    return out;
}

}  // namespace toolport::openapi
