#include "providers/upstream_auth_settings.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "auth/token_endpoint.hpp"

namespace toolport::providers {

namespace {

using auth::check_client_authentication;
using auth::ClientAuthentication;
using auth::method_name;
using auth::parse_method;
using auth::UpstreamAuthSettings;
using auth::url_problem;

std::string read_key_file(const SourceSettings& s, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) s.fail("private_key_file", fmt::format("cannot read {}", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

auth::UpstreamAuthSettings read_upstream_auth(const SourceSettings& s, bool login_allowed) {
    if (s.string("type").value_or("") == "login") {
        if (!login_allowed) {
            s.fail("type",
                   "login applies to gateway upstreams (MCP servers over Streamable HTTP) only; use "
                   "client_credentials or token_exchange");
        }
        // Everything else (the authorization server, the client registration, the scopes)
        // is what `toolport login` discovered and kept with the tokens.
        s.only_keys({"type", "token_store"});
        UpstreamAuthSettings out;
        out.type = UpstreamAuthSettings::Type::login;
        out.token_store = s.string("token_store").value_or("");
        if (s.value("token_store") && out.token_store.empty()) s.fail("token_store", "must be a file path");
        return out;
    }
    s.only_keys({"type", "token_endpoint", "issuer", "client_id", "client_secret", "auth_method", "private_key",
                 "private_key_file", "key_id", "signing_alg", "assertion_audience", "audience", "resource", "scope",
                 "own_requests", "allow_http", "timeout_ms", "expiry_margin_s", "default_lifetime_s"});
    UpstreamAuthSettings out;
    auto type = s.string("type");
    if (!type) s.fail("type", "is required: client_credentials, token_exchange or login");
    if (*type == "client_credentials") out.type = UpstreamAuthSettings::Type::client_credentials;
    else if (*type == "token_exchange") out.type = UpstreamAuthSettings::Type::token_exchange;
    else if (*type == "headers")
        s.fail("type", "static headers are set with the source's own headers settings, not under auth:");
    else
        s.fail("type", login_allowed ? "must be client_credentials, token_exchange or login"
                                     : "must be client_credentials or token_exchange");

    out.allow_http = s.boolean("allow_http").value_or(false);
    out.token_endpoint = s.string("token_endpoint").value_or("");
    out.issuer = s.string("issuer").value_or("");
    if (out.token_endpoint.empty() == out.issuer.empty())
        s.fail(out.issuer.empty() ? "token_endpoint" : "issuer",
               "give either token_endpoint or issuer (whose metadata names the token endpoint)");
    if (!out.token_endpoint.empty()) {
        if (auto problem = url_problem(out.token_endpoint, out.allow_http); !problem.empty())
            s.fail("token_endpoint", problem);
    } else {
        if (auto problem = url_problem(out.issuer, out.allow_http); !problem.empty()) s.fail("issuer", problem);
        if (out.issuer.find('?') != std::string::npos) s.fail("issuer", "must not have a query");
    }

    auto& c = out.client;
    c.client_id = s.string("client_id").value_or("");
    if (c.client_id.empty()) s.fail("client_id", "is required");
    c.client_secret = s.string("client_secret").value_or("");
    if (auto pem = s.string("private_key")) c.private_key_pem = *pem;
    if (auto path = s.string("private_key_file")) {
        if (!c.private_key_pem.empty()) s.fail("private_key_file", "give private_key or private_key_file, not both");
        c.private_key_pem = read_key_file(s, *path);
    }
    c.key_id = s.string("key_id").value_or("");
    c.signing_alg = s.string("signing_alg").value_or("");
    c.assertion_audience = s.string("assertion_audience").value_or("");
    if (auto method = s.string("auth_method")) {
        auto parsed = parse_method(*method);
        if (!parsed) s.fail("auth_method", "must be client_secret_basic, client_secret_post, private_key_jwt or none");
        c.method = *parsed;
    } else {
        // The method the credentials given imply.
        c.method = !c.private_key_pem.empty() ? ClientAuthentication::Method::private_key_jwt
                   : !c.client_secret.empty() ? ClientAuthentication::Method::client_secret_basic
                                              : ClientAuthentication::Method::none;
    }
    using M = ClientAuthentication::Method;
    if (c.method != M::client_secret_basic && c.method != M::client_secret_post && !c.client_secret.empty())
        s.fail("client_secret", fmt::format("is not used with auth_method {}", method_name(c.method)));
    if (c.method != M::private_key_jwt) {
        for (const char* key : {"private_key", "private_key_file", "key_id", "signing_alg", "assertion_audience"}) {
            if (s.value(key)) s.fail(key, "applies to auth_method private_key_jwt only");
        }
    }
    try {
        check_client_authentication(c);
    } catch (const std::invalid_argument& e) {
        s.fail(c.method == M::private_key_jwt ? (s.value("private_key") ? "private_key" : "private_key_file")
                                              : "client_secret",
               e.what());
    }

    out.audience = s.string("audience").value_or("");
    out.resource = s.string("resource").value_or("");
    out.scope = s.string("scope").value_or("");
    if (!out.resource.empty()) {
        if (auto problem = url_problem(out.resource, true); !problem.empty()) s.fail("resource", problem);
    }
    if (auto own = s.string("own_requests")) {
        if (!out.exchanges())
            s.fail("own_requests", "applies to token_exchange only (client_credentials authorizes every request)");
        if (*own == "client_credentials") out.own_requests_authorized = true;
        else if (*own == "none") out.own_requests_authorized = false;
        else s.fail("own_requests", "must be client_credentials or none");
    }
    if (auto ms = s.integer("timeout_ms", 100, 600000)) out.timeout = std::chrono::milliseconds(*ms);
    if (auto sec = s.integer("expiry_margin_s", 0, 3600)) out.expiry_margin = std::chrono::seconds(*sec);
    if (auto sec = s.integer("default_lifetime_s", 1, 86400)) out.default_lifetime = std::chrono::seconds(*sec);
    return out;
}

}  // namespace toolport::providers
