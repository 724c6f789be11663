#include "providers/upstream_auth_settings.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "auth/token_endpoint.hpp"
#include "config/generate.hpp"

namespace toolport::providers {

namespace keys {
using namespace config;

// `auth: {type: login, ...}`
namespace login {
const Key type = one_of_key("type", {"login"}, "login: the tokens `toolport login` obtained (gateway upstreams only).");
const Key token_store = string_key("token_store", "login: the file `toolport login` kept the tokens in.",
                                   "the CLI's, $XDG_CONFIG_HOME/toolport/oauth-tokens.json");
const Section table{"auth",
                    "Tokens from `toolport login` (gateway upstreams over Streamable HTTP only).",
                    {&type, &token_store}};
}  // namespace login

// `auth: {type: client_credentials | token_exchange, ...}`
const Key type = one_of_key("type", {"client_credentials", "token_exchange"},
                            "The grant: client_credentials (Toolport's own token) or token_exchange (RFC 8693: "
                            "the caller's token exchanged for one the service accepts). Required.");
const Key token_endpoint = string_key("token_endpoint", "The authorization server's token endpoint (https URL).");
const Key issuer = string_key("issuer", "Instead of token_endpoint: the issuer whose metadata (RFC 8414) names it.");
const Key client_id = string_key("client_id", "Toolport's client id at the authorization server. Required.");
const Key client_secret = string_key("client_secret",
                                     "Toolport's client secret (write ${VAR} to take it from the "
                                     "environment).");
const Key auth_method = one_of_key("auth_method",
                                   {"client_secret_basic", "client_secret_post", "private_key_jwt", "none"},
                                   "How Toolport authenticates at the token endpoint.",
                                   "private_key_jwt with a key, client_secret_basic with a secret, else none");
const Key private_key = string_key("private_key", "private_key_jwt: the signing key (PEM).");
const Key private_key_file = string_key("private_key_file", "private_key_jwt: a file holding the signing key (PEM).");
const Key key_id = string_key("key_id", "private_key_jwt: the key's id (kid) in the assertion's header.");
const Key signing_alg = string_key("signing_alg", "private_key_jwt: RS256 or ES256.", "from the key's type");
const Key assertion_audience = string_key("assertion_audience", "private_key_jwt: the assertion's aud.",
                                          "the token endpoint");
const Key audience = string_key("audience", "The token's audience (RFC 8693 audience).");
const Key resource = string_key("resource", "The service's resource identifier (RFC 8707 resource).");
const Key scope = string_key("scope", "Scopes asked for, space-separated.");
const Key own_requests = one_of_key("own_requests", {"client_credentials", "none"},
                                    "token_exchange: what authorizes Toolport's own requests (listing, refreshing), "
                                    "made for no caller.",
                                    "client_credentials");
const Key allow_http = boolean_key("allow_http", "Permit http:// URLs (for tests on loopback).", "false");
const Key timeout_ms = duration_key("timeout_ms", "ms", 100, 600000, "A token request's timeout.", "10000");
const Key expiry_margin_s = duration_key("expiry_margin_s", "s", 0, 3600,
                                         "A token is renewed this long before it expires.", "30");
const Key default_lifetime_s = duration_key("default_lifetime_s", "s", 1, 86400,
                                            "How long a token without expires_in is used.", "300");
const Section table{"auth",
                    "How Toolport obtains the Authorization header it sends (OAuth client credentials or token "
                    "exchange).",
                    {&type, &token_endpoint, &issuer, &client_id, &client_secret, &auth_method, &private_key,
                     &private_key_file, &key_id, &signing_alg, &assertion_audience, &audience, &resource, &scope,
                     &own_requests, &allow_http, &timeout_ms, &expiry_margin_s, &default_lifetime_s}};
// For the documentation of a gateway upstream's `auth:`: both forms in one table.
const Key any_type = one_of_key("type", {"client_credentials", "token_exchange", "login"},
                                "client_credentials or token_exchange (as for the other sources); or login: the tokens "
                                "`toolport login` obtained (then only "
                                "token_store may be given). Required.");
const Section with_login_table{
    "auth",
    "How Toolport obtains the Authorization header it sends.",
    {&any_type,      &login::token_store, &token_endpoint, &issuer,           &client_id,
     &client_secret, &auth_method,        &private_key,    &private_key_file, &key_id,
     &signing_alg,   &assertion_audience, &audience,       &resource,         &scope,
     &own_requests,  &allow_http,         &timeout_ms,     &expiry_margin_s,  &default_lifetime_s}};
}  // namespace keys

config::Key auth_key(std::string doc, bool login_allowed) {
    auto key = config::section_key("auth", login_allowed ? keys::with_login_table : keys::table, std::move(doc));
    if (login_allowed) {
        // Either form, each closed: the grants' keys, or type login with its token store.
        key.schema = [] {
            return nlohmann::json{
                {"anyOf", {config::section_schema(keys::table), config::section_schema(keys::login::table)}}};
        };
    }
    return key;
}

namespace {

using auth::check_client_authentication;
using auth::ClientAuthentication;
using auth::method_name;
using auth::parse_method;
using auth::UpstreamAuthSettings;
using auth::url_problem;

std::string read_key_file(const SourceSettings& s, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) s.fail(keys::private_key_file, fmt::format("cannot read {}", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

auth::UpstreamAuthSettings read_upstream_auth(const SourceSettings& s, bool login_allowed) {
    namespace k = keys;
    if (s.string(k::type).value_or("") == "login") {
        if (!login_allowed) {
            s.fail(k::type,
                   "login applies to gateway upstreams (MCP servers over Streamable HTTP) only; use "
                   "client_credentials or token_exchange");
        }
        // Everything else (the authorization server, the client registration, the scopes)
        // is what `toolport login` discovered and kept with the tokens.
        s.check_keys(k::login::table);
        UpstreamAuthSettings out;
        out.type = UpstreamAuthSettings::Type::login;
        out.token_store = s.string(k::login::token_store).value_or("");
        if (s.value(k::login::token_store.name) && out.token_store.empty())
            s.fail(k::login::token_store, "must be a file path");
        return out;
    }
    s.check_keys(k::table);
    UpstreamAuthSettings out;
    auto type = s.string(k::type);
    if (!type) s.fail(k::type, "is required: client_credentials, token_exchange or login");
    if (*type == "client_credentials") out.type = UpstreamAuthSettings::Type::client_credentials;
    else if (*type == "token_exchange") out.type = UpstreamAuthSettings::Type::token_exchange;
    else if (*type == "headers")
        s.fail(k::type, "static headers are set with the source's own headers settings, not under auth:");
    else
        s.fail(k::type, login_allowed ? "must be client_credentials, token_exchange or login"
                                      : "must be client_credentials or token_exchange");

    out.allow_http = s.boolean(k::allow_http).value_or(false);
    out.token_endpoint = s.string(k::token_endpoint).value_or("");
    out.issuer = s.string(k::issuer).value_or("");
    if (out.token_endpoint.empty() == out.issuer.empty())
        s.fail(out.issuer.empty() ? k::token_endpoint : k::issuer,
               "give either token_endpoint or issuer (whose metadata names the token endpoint)");
    if (!out.token_endpoint.empty()) {
        if (auto problem = url_problem(out.token_endpoint, out.allow_http); !problem.empty())
            s.fail(k::token_endpoint, problem);
    } else {
        if (auto problem = url_problem(out.issuer, out.allow_http); !problem.empty()) s.fail(k::issuer, problem);
        if (out.issuer.find('?') != std::string::npos) s.fail(k::issuer, "must not have a query");
    }

    auto& c = out.client;
    c.client_id = s.string(k::client_id).value_or("");
    if (c.client_id.empty()) s.fail(k::client_id, "is required");
    c.client_secret = s.string(k::client_secret).value_or("");
    if (auto pem = s.string(k::private_key)) c.private_key_pem = *pem;
    if (auto path = s.string(k::private_key_file)) {
        if (!c.private_key_pem.empty()) s.fail(k::private_key_file, "give private_key or private_key_file, not both");
        c.private_key_pem = read_key_file(s, *path);
    }
    c.key_id = s.string(k::key_id).value_or("");
    c.signing_alg = s.string(k::signing_alg).value_or("");
    c.assertion_audience = s.string(k::assertion_audience).value_or("");
    if (auto method = s.string(k::auth_method)) {
        auto parsed = parse_method(*method);
        if (!parsed) s.fail(k::auth_method, "must be client_secret_basic, client_secret_post, private_key_jwt or none");
        c.method = *parsed;
    } else {
        // The method the credentials given imply.
        c.method = !c.private_key_pem.empty() ? ClientAuthentication::Method::private_key_jwt
                   : !c.client_secret.empty() ? ClientAuthentication::Method::client_secret_basic
                                              : ClientAuthentication::Method::none;
    }
    using M = ClientAuthentication::Method;
    if (c.method != M::client_secret_basic && c.method != M::client_secret_post && !c.client_secret.empty())
        s.fail(k::client_secret, fmt::format("is not used with auth_method {}", method_name(c.method)));
    if (c.method != M::private_key_jwt) {
        for (const auto* key :
             {&k::private_key, &k::private_key_file, &k::key_id, &k::signing_alg, &k::assertion_audience}) {
            if (s.value(key->name)) s.fail(*key, "applies to auth_method private_key_jwt only");
        }
    }
    try {
        check_client_authentication(c);
    } catch (const std::invalid_argument& e) {
        s.fail(c.method == M::private_key_jwt ? (s.value(k::private_key.name) ? k::private_key : k::private_key_file)
                                              : k::client_secret,
               e.what());
    }

    out.audience = s.string(k::audience).value_or("");
    out.resource = s.string(k::resource).value_or("");
    out.scope = s.string(k::scope).value_or("");
    if (!out.resource.empty()) {
        if (auto problem = url_problem(out.resource, true); !problem.empty()) s.fail(k::resource, problem);
    }
    if (auto own = s.string(k::own_requests)) {
        if (!out.exchanges())
            s.fail(k::own_requests, "applies to token_exchange only (client_credentials authorizes every request)");
        if (*own == "client_credentials") out.own_requests_authorized = true;
        else if (*own == "none") out.own_requests_authorized = false;
        else s.fail(k::own_requests, "must be client_credentials or none");
    }
    if (auto ms = s.integer(k::timeout_ms)) out.timeout = std::chrono::milliseconds(*ms);
    if (auto sec = s.integer(k::expiry_margin_s)) out.expiry_margin = std::chrono::seconds(*sec);
    if (auto sec = s.integer(k::default_lifetime_s)) out.default_lifetime = std::chrono::seconds(*sec);
    return out;
}

}  // namespace toolport::providers
