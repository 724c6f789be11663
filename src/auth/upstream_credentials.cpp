#include "auth/upstream_credentials.hpp"

#include <fmt/format.h>

#include "auth/key_source.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/digest.hpp"

namespace toolport::auth {

namespace {

constexpr const char* kTokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange";
constexpr const char* kAccessTokenType = "urn:ietf:params:oauth:token-type:access_token";

}  // namespace

std::string_view type_name(UpstreamAuthSettings::Type type) {
    switch (type) {
        case UpstreamAuthSettings::Type::token_exchange: return "token_exchange";
        case UpstreamAuthSettings::Type::login: return "login";
        case UpstreamAuthSettings::Type::client_credentials: break;
    }
    return "client_credentials";
}

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

std::string_view UpstreamCredentialsError::code() const {
    return kind == Kind::unavailable ? "upstream_credentials_unavailable" : "upstream_authorization_failed";
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
            throw TokenEndpointError(200, "",
                                     "it issued a " + token.token_type +
                                         " token, and Toolport sends Bearer tokens only");
        }
        if (exchange && !token.issued_token_type.empty() && token.issued_token_type != kAccessTokenType) {
            throw TokenEndpointError(200, "",
                                     "it issued a token of type " + token.issued_token_type +
                                         " instead of an access token");
        }
        // Used until a margin before it expires: a quarter of its life for short-lived
        // tokens, so a token is never handed out just as it dies.
        auto lifetime = token.expires_in.value_or(settings_.default_lifetime);
        auto margin = std::min<std::chrono::seconds>(settings_.expiry_margin, lifetime / 4);
        authorization = "Bearer " + token.access_token;
        store(key, {authorization, started + lifetime - margin});
    } catch (const TokenEndpointError& e) {
        error = std::make_exception_ptr(
            UpstreamCredentialsError(UpstreamCredentialsError::Kind::authorization_failed,
                                     fmt::format("{}: the authorization server refused {}{}{}", service_, what,
                                                 e.error.empty() ? "" : ": " + e.error,
                                                 e.description.empty() ? std::string() : " (" + e.description + ")"),
                                     e.error, e.status >= 500));
    } catch (const UpstreamCredentialsError&) {
        error = std::current_exception();
    } catch (const http_client::HttpError& e) {
        error = std::make_exception_ptr(
            UpstreamCredentialsError(UpstreamCredentialsError::Kind::authorization_failed,
                                     fmt::format("{}: the authorization server could not be reached for {}: {}",
                                                 service_, what, e.what()),
                                     "", e.transient()));
    } catch (const KeySourceError& e) {
        error = std::make_exception_ptr(
            UpstreamCredentialsError(UpstreamCredentialsError::Kind::authorization_failed,
                                     fmt::format("{}: the authorization server's token endpoint could not be found: {}",
                                                 service_, e.what()),
                                     "", true));
    } catch (const http_client::ResponseTooLarge&) {
        error = std::make_exception_ptr(
            UpstreamCredentialsError(UpstreamCredentialsError::Kind::authorization_failed,
                                     fmt::format("{}: the token endpoint's answer to {} was too large", service_, what)));
    } catch (const std::exception& e) {
        error = std::make_exception_ptr(
            UpstreamCredentialsError(UpstreamCredentialsError::Kind::authorization_failed,
                                     fmt::format("{}: {} failed: {}", service_, what, e.what())));
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
