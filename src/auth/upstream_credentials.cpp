#include "auth/upstream_credentials.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "auth/key_source.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "providers/source_settings.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"

namespace toolport::auth {

namespace {

constexpr const char* kTokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange";
constexpr const char* kAccessTokenType = "urn:ietf:params:oauth:token-type:access_token";

// Checks `text` as a token endpoint or issuer URL; "" when usable, else why not.
std::string url_problem(const std::string& text, bool allow_http) {
    try {
        auto url = http_client::parse_url(text);
        if (!url.https && !allow_http) return "must be an https:// URL (allow_http: true for a loopback test server)";
        if (text.find('#') != std::string::npos) return "must not have a fragment";
    } catch (const std::invalid_argument& e) {
        return std::string("is not an absolute http(s) URL: ") + e.what();
    }
    return {};
}

std::string read_key_file(const providers::SourceSettings& s, const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) s.fail("private_key_file", fmt::format("cannot read {}", path));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace

std::string_view type_name(UpstreamAuthSettings::Type type) {
    switch (type) {
        case UpstreamAuthSettings::Type::token_exchange: return "token_exchange";
        case UpstreamAuthSettings::Type::login: return "login";
        case UpstreamAuthSettings::Type::client_credentials: break;
    }
    return "client_credentials";
}

UpstreamAuthSettings read_upstream_auth(const providers::SourceSettings& s, bool login_allowed) {
    if (s.string("type").value_or("") == "login") {
        if (!login_allowed) {
            s.fail("type", "login applies to gateway upstreams (MCP servers over Streamable HTTP) only; use "
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
    else s.fail("type", login_allowed ? "must be client_credentials, token_exchange or login"
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
        if (!out.exchanges()) s.fail("own_requests", "applies to token_exchange only (client_credentials authorizes every request)");
        if (*own == "client_credentials") out.own_requests_authorized = true;
        else if (*own == "none") out.own_requests_authorized = false;
        else s.fail("own_requests", "must be client_credentials or none");
    }
    if (auto ms = s.integer("timeout_ms", 100, 600000)) out.timeout = std::chrono::milliseconds(*ms);
    if (auto sec = s.integer("expiry_margin_s", 0, 3600)) out.expiry_margin = std::chrono::seconds(*sec);
    if (auto sec = s.integer("default_lifetime_s", 1, 86400)) out.default_lifetime = std::chrono::seconds(*sec);
    return out;
}

std::string_view UpstreamCredentialsError::code() const {
    return kind == Kind::unavailable ? "upstream_credentials_unavailable" : "upstream_authorization_failed";
}

ToolError UpstreamCredentialsError::to_tool_error() const {
    ToolError error(kind == Kind::unavailable ? ToolErrorCode::upstream_credentials_unavailable
                                              : ToolErrorCode::upstream_authorization_failed,
                    what());
    if (!as_error.empty()) error.detail("authorization_server_error", as_error);
    if (kind == Kind::unavailable) {
        error.recoverable(false).suggest(
            "Call through Toolport's HTTP endpoint with an OAuth access token of its authorization server; this "
            "service is reached with a token exchanged for the caller's own");
    } else if (transient) {
        error.transient(true).suggest("The authorization server could not be reached; retry shortly");
    } else if (as_error == "invalid_grant") {
        error.suggest("Your access token could not be exchanged (expired, revoked, or not allowed for this service): "
                      "obtain a new one and call again");
    } else {
        error.suggest("The authorization server refused Toolport's token request; the server's operator must check "
                      "this source's auth: settings");
    }
    return error;
}

UpstreamCredentials::UpstreamCredentials(std::string service, UpstreamAuthSettings settings,
                                         http_client::HttpClient& http, Clock clock)
    : service_(std::move(service)), settings_(std::move(settings)), http_(http), clock_(std::move(clock)) {
    if (settings_.token_endpoint.empty() == settings_.issuer.empty())
        throw std::invalid_argument("give either a token endpoint or an issuer");
    const auto& url = settings_.token_endpoint.empty() ? settings_.issuer : settings_.token_endpoint;
    if (auto problem = url_problem(url, settings_.allow_http); !problem.empty())
        throw std::invalid_argument("the token endpoint or issuer " + problem);
    check_client_authentication(settings_.client);
    token_endpoint_ = settings_.token_endpoint;
}

std::chrono::steady_clock::time_point UpstreamCredentials::now() const {
    return clock_ ? clock_() : std::chrono::steady_clock::now();
}

std::vector<std::pair<std::string, std::string>> UpstreamCredentials::client_credentials_grant() const {
    std::vector<std::pair<std::string, std::string>> grant = {{"grant_type", "client_credentials"}};
    if (!settings_.scope.empty()) grant.emplace_back("scope", settings_.scope);
    if (!settings_.resource.empty()) grant.emplace_back("resource", settings_.resource);
    if (!settings_.audience.empty()) grant.emplace_back("audience", settings_.audience);
    return grant;
}

Task<std::string> UpstreamCredentials::for_source() {
    if (settings_.exchanges() && !settings_.own_requests_authorized) co_return std::string();
    co_return co_await obtain("client_credentials", client_credentials_grant(), false);
}

Task<std::string> UpstreamCredentials::for_caller(std::string subject_token) {
    if (!settings_.exchanges()) co_return co_await for_source();
    if (subject_token.empty()) {
        throw UpstreamCredentialsError(
            UpstreamCredentialsError::Kind::unavailable,
            fmt::format("{} is reached with a token exchanged for the caller's OAuth access token, and this call came "
                        "without one (stdio, or a static bearer token)",
                        service_));
    }
    // Keyed by the token's digest: a caller's new token (other scopes, after a refresh) is
    // exchanged anew, and no token is kept as a key.
    std::string key = "exchange:" + util::sha256_hex(subject_token);
    std::vector<std::pair<std::string, std::string>> grant = {{"grant_type", kTokenExchangeGrant},
                                                              {"subject_token", std::move(subject_token)},
                                                              {"subject_token_type", kAccessTokenType},
                                                              {"requested_token_type", kAccessTokenType}};
    if (!settings_.audience.empty()) grant.emplace_back("audience", settings_.audience);
    if (!settings_.resource.empty()) grant.emplace_back("resource", settings_.resource);
    if (!settings_.scope.empty()) grant.emplace_back("scope", settings_.scope);
    co_return co_await obtain(std::move(key), std::move(grant), true);
}

Task<std::string> UpstreamCredentials::obtain(std::string key, std::vector<std::pair<std::string, std::string>> grant,
                                              bool exchange) {
    if (auto it = cache_.find(key); it != cache_.end()) {
        if (now() < it->second.usable_until) {
            ++stats_.cache_hits;
            co_return it->second.authorization;
        }
        cache_.erase(it);
    }
    Completion<std::string> done;
    auto& waiters = in_flight_[key];
    waiters.push_back(done);
    if (waiters.size() == 1) {
        // The request runs on its own, not in this caller's frame: a caller that gives up
        // (cancelled, its session closed) does not take the others' answer with it.
        spawn(shared_from_this()->run_request(key, std::move(grant), exchange),
              [self = shared_from_this()](std::exception_ptr) {});
    }
    co_return co_await done;
}

Task<void> UpstreamCredentials::run_request(std::string key, std::vector<std::pair<std::string, std::string>> grant,
                                            bool exchange) {
    auto keep = shared_from_this();
    std::string authorization;
    std::exception_ptr error;
    const char* what = exchange ? "the token exchange" : "the client_credentials grant";
    try {
        std::string endpoint_url = co_await endpoint();
        http_client::CallOptions options;
        options.deadline = std::chrono::steady_clock::now() + settings_.timeout;
        ++stats_.token_requests;
        if (exchange) ++stats_.exchanges;
        auto started = now();
        auto token = co_await request_token(http_, endpoint_url, settings_.client, std::move(grant), options);
        if (token.token_type != "Bearer") {
            throw TokenEndpointError(200, "", "it issued a " + token.token_type +
                                                  " token, and Toolport sends Bearer tokens only");
        }
        if (exchange && !token.issued_token_type.empty() && token.issued_token_type != kAccessTokenType) {
            throw TokenEndpointError(200, "", "it issued a token of type " + token.issued_token_type +
                                                  " instead of an access token");
        }
        // Used until a margin before it expires: a quarter of its life for short-lived
        // tokens, so a token is never handed out just as it dies.
        auto lifetime = token.expires_in.value_or(settings_.default_lifetime);
        auto margin = std::min<std::chrono::seconds>(settings_.expiry_margin, lifetime / 4);
        authorization = "Bearer " + token.access_token;
        store(key, {authorization, started + lifetime - margin});
    } catch (const TokenEndpointError& e) {
        error = std::make_exception_ptr(UpstreamCredentialsError(
            UpstreamCredentialsError::Kind::authorization_failed,
            fmt::format("{}: the authorization server refused {}{}{}", service_, what,
                        e.error.empty() ? "" : ": " + e.error,
                        e.description.empty() ? std::string() : " (" + e.description + ")"),
            e.error, e.status >= 500));
    } catch (const UpstreamCredentialsError&) {
        error = std::current_exception();
    } catch (const http_client::HttpError& e) {
        error = std::make_exception_ptr(UpstreamCredentialsError(
            UpstreamCredentialsError::Kind::authorization_failed,
            fmt::format("{}: the authorization server could not be reached for {}: {}", service_, what, e.what()), "",
            e.transient()));
    } catch (const KeySourceError& e) {
        error = std::make_exception_ptr(UpstreamCredentialsError(
            UpstreamCredentialsError::Kind::authorization_failed,
            fmt::format("{}: the authorization server's token endpoint could not be found: {}", service_, e.what()),
            "", true));
    } catch (const http_client::ResponseTooLarge&) {
        error = std::make_exception_ptr(UpstreamCredentialsError(
            UpstreamCredentialsError::Kind::authorization_failed,
            fmt::format("{}: the token endpoint's answer to {} was too large", service_, what)));
    } catch (const std::exception& e) {
        error = std::make_exception_ptr(UpstreamCredentialsError(
            UpstreamCredentialsError::Kind::authorization_failed, fmt::format("{}: {} failed: {}", service_, what, e.what())));
    }
    if (error) ++stats_.failures;
    auto waiters = std::move(in_flight_[key]);
    in_flight_.erase(key);
    for (auto& w : waiters) {
        if (error) w.set_error(error);
        else w.set_value(authorization);
    }
}

Task<std::string> UpstreamCredentials::endpoint() {
    if (!token_endpoint_.empty()) co_return token_endpoint_;
    DiscoveryOptions discovery;
    discovery.issuer = settings_.issuer;
    discovery.allow_http = settings_.allow_http;
    discovery.fetch_timeout = settings_.timeout;
    std::string url = co_await discover_endpoint(http_, discovery, "token_endpoint");
    // Two requests may have discovered it at once: the same answer, kept once.
    token_endpoint_ = url;
    co_return token_endpoint_;
}

void UpstreamCredentials::store(const std::string& key, Entry entry) {
    if (cache_.size() >= settings_.max_cached && !cache_.count(key)) {
        const auto t = now();
        for (auto it = cache_.begin(); it != cache_.end();) {
            if (it->second.usable_until <= t) it = cache_.erase(it);
            else ++it;
        }
        // Still full of live tokens: the one that would expire first goes.
        if (cache_.size() >= settings_.max_cached) {
            auto soonest = std::min_element(cache_.begin(), cache_.end(), [](const auto& a, const auto& b) {
                return a.second.usable_until < b.second.usable_until;
            });
            if (soonest != cache_.end()) cache_.erase(soonest);
        }
    }
    cache_[key] = std::move(entry);
}

void UpstreamCredentials::rejected(const std::string& authorization) {
    for (auto it = cache_.begin(); it != cache_.end();) {
        if (it->second.authorization == authorization) it = cache_.erase(it);
        else ++it;
    }
}

UpstreamCredentials::Stats UpstreamCredentials::stats() const {
    Stats s = stats_;
    s.cached = cache_.size();
    return s;
}

}  // namespace toolport::auth
