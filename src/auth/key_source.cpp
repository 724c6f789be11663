#include "auth/key_source.hpp"

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "http_client/http_client.hpp"
#include "http_client/url.hpp"

namespace toolport::auth {

void check_server_url(const std::string& what, const std::string& url, bool allow_http) {
    http_client::Url parsed;
    try {
        parsed = http_client::parse_url(url);
    } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(what + " is not an absolute http(s) URL: " + e.what());
    }
    if (!parsed.https && !allow_http) throw std::invalid_argument(what + " must be an https:// URL");
}

Task<std::shared_ptr<const KeySet>> StaticKeySource::keys() { co_return keys_; }

Task<std::shared_ptr<const KeySet>> StaticKeySource::refresh(std::shared_ptr<const KeySet>) { co_return keys_; }

DiscoveredKeySource::DiscoveredKeySource(http_client::HttpClient& http, DiscoveryOptions options)
    : http_(http), options_(std::move(options)) {
    if (options_.issuer.empty()) throw std::invalid_argument("key source: the issuer is empty");
    check_server_url("the issuer", options_.issuer, options_.allow_http);
    if (options_.issuer.find_first_of("?#") != std::string::npos)
        throw std::invalid_argument("the issuer must not have a query or fragment");
    if (!options_.jwks_uri.empty()) {
        check_server_url("jwks_uri", options_.jwks_uri, options_.allow_http);
        jwks_uri_ = options_.jwks_uri;
    }
    if (options_.refetch_floor.count() < 0 || options_.max_age.count() <= 0 || options_.fetch_timeout.count() <= 0)
        throw std::invalid_argument("key source: refetch_floor, max_age and fetch_timeout must be positive");
}

std::chrono::steady_clock::time_point DiscoveredKeySource::now() const {
    return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

std::vector<std::string> DiscoveredKeySource::metadata_urls(const std::string& issuer) {
    http_client::Url url;
    try {
        url = http_client::parse_url(issuer);
    } catch (const std::invalid_argument&) {
        return {};
    }
    std::string origin = url.origin();
    std::string path = url.target;  // the issuer has no query
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (path.empty()) {
        return {origin + "/.well-known/oauth-authorization-server", origin + "/.well-known/openid-configuration"};
    }
    // RFC 8414 §3.1 inserts the well-known segment before the issuer's path; OpenID
    // Connect Discovery appends it (and some servers answer at the inserted form too).
    return {origin + "/.well-known/oauth-authorization-server" + path,
            origin + "/.well-known/openid-configuration" + path, origin + path + "/.well-known/openid-configuration"};
}

Task<std::shared_ptr<const KeySet>> DiscoveredKeySource::keys() {
    auto t = now();
    if (current_ && t - last_success_ < options_.max_age) co_return current_;
    // Stale (or none yet): fetch again, but not within the floor of the last attempt.
    if (current_ && last_attempt_ && t - *last_attempt_ < options_.refetch_floor) co_return current_;
    if (!current_ && last_attempt_ && t - *last_attempt_ < options_.refetch_floor && !in_flight_)
        throw KeySourceError("the authorization server's keys are unavailable (the last fetch failed)");
    co_return co_await fetch_shared();
}

Task<std::shared_ptr<const KeySet>> DiscoveredKeySource::refresh(std::shared_ptr<const KeySet> seen) {
    // Someone fetched a newer set since `seen` was handed out: that is the one to try.
    if (current_ && current_ != seen) co_return current_;
    if (last_attempt_ && now() - *last_attempt_ < options_.refetch_floor && !in_flight_) {
        if (current_) co_return current_;
        throw KeySourceError("the authorization server's keys are unavailable (the last fetch failed)");
    }
    co_return co_await fetch_shared();
}

Task<std::shared_ptr<const KeySet>> DiscoveredKeySource::fetch_shared() {
    if (in_flight_) {
        Completion<std::shared_ptr<const KeySet>> done;
        waiters_.push_back(done);
        co_return co_await done;
    }
    in_flight_ = true;
    last_attempt_ = now();
    std::shared_ptr<const KeySet> fetched;
    std::exception_ptr error;
    try {
        fetched = co_await fetch_once();
    } catch (...) {
        error = std::current_exception();
    }
    in_flight_ = false;
    if (fetched) {
        current_ = fetched;
        last_success_ = now();
    } else {
        ++stats_.failures;
        if (current_) {
            // Keep serving the keys we have; a refresh may come after the floor.
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                spdlog::warn("auth: re-fetching the authorization server's keys failed, keeping the current set: {}",
                             e.what());
            } catch (...) {
                spdlog::warn("auth: re-fetching the authorization server's keys failed, keeping the current set");
            }
            fetched = current_;
            error = nullptr;
        }
    }
    auto waiters = std::move(waiters_);
    waiters_.clear();
    for (auto& w : waiters) {
        if (error) w.set_error(error);
        else w.set_value(fetched);
    }
    if (error) std::rethrow_exception(error);
    co_return fetched;
}

namespace {

// One document (metadata or JWKS): its body, and its status in `status`.
Task<std::string> fetch_document(http_client::HttpClient& http, const DiscoveryOptions& options, const std::string& url,
                                 unsigned* status) {
    http_client::CallOptions call;
    call.deadline = std::chrono::steady_clock::now() + options.fetch_timeout;
    call.max_response_bytes = options.max_document_bytes;
    std::string shown = url.substr(0, url.find('?'));
    http_client::Response response;
    try {
        response = co_await http.fetch({.url = url, .headers = {{"Accept", "application/json"}}}, call);
    } catch (const http_client::HttpError& e) {
        throw KeySourceError("fetching " + shown + " failed: " + e.what());
    } catch (const http_client::ResponseTooLarge&) {
        throw KeySourceError(shown + " is larger than " + std::to_string(options.max_document_bytes) + " bytes");
    }
    *status = response.status;
    co_return std::move(response.body);
}

}  // namespace

Task<nlohmann::json> fetch_server_metadata(http_client::HttpClient& http, const DiscoveryOptions& options,
                                           std::uint64_t* fetches) {
    std::string tried;
    for (const auto& url : DiscoveredKeySource::metadata_urls(options.issuer)) {
        unsigned status = 0;
        if (fetches) ++*fetches;
        std::string body = co_await fetch_document(http, options, url, &status);
        if (status != 200) {
            tried += (tried.empty() ? "" : ", ") + url + " (" + std::to_string(status) + ")";
            continue;
        }
        auto metadata = nlohmann::json::parse(body, nullptr, false);
        if (metadata.is_discarded() || !metadata.is_object())
            throw KeySourceError("the authorization server metadata at " + url + " is not a JSON object");
        auto issuer = metadata.find("issuer");
        if (issuer == metadata.end() || !issuer->is_string() || *issuer != options.issuer)
            throw KeySourceError("the authorization server metadata at " + url +
                                 " names another issuer than the configured one");
        co_return metadata;
    }
    if (tried.empty()) throw KeySourceError("the issuer is not a URL metadata can be looked up at");
    throw KeySourceError("no authorization server metadata found at " + tried);
}

Task<std::string> discover_endpoint(http_client::HttpClient& http, const DiscoveryOptions& options, std::string member,
                                    std::uint64_t* fetches) {
    auto metadata = co_await fetch_server_metadata(http, options, fetches);
    auto it = metadata.find(member);
    if (it == metadata.end() || !it->is_string())
        throw KeySourceError("the authorization server metadata of " + options.issuer + " names no " + member);
    std::string url = it->get<std::string>();
    try {
        check_server_url(member, url, options.allow_http);
        if (url.find('#') != std::string::npos) throw std::invalid_argument(member + " must not have a fragment");
    } catch (const std::invalid_argument& e) {
        throw KeySourceError("the authorization server metadata of " + options.issuer + ": " + e.what());
    }
    co_return url;
}

Task<std::shared_ptr<const KeySet>> DiscoveredKeySource::fetch_once() {
    if (jwks_uri_.empty())
        jwks_uri_ = co_await discover_endpoint(http_, options_, "jwks_uri", &stats_.metadata_fetches);

    std::string uri = jwks_uri_;
    std::string shown = uri.substr(0, uri.find('?'));
    unsigned status = 0;
    ++stats_.jwks_fetches;
    std::string body = co_await fetch_document(http_, options_, uri, &status);
    if (status != 200) {
        // The metadata may have moved it: discover again next time (unless it was configured).
        if (options_.jwks_uri.empty()) jwks_uri_.clear();
        throw KeySourceError("the JWKS at " + shown + " answered " + std::to_string(status));
    }
    KeySet set;
    try {
        set = parse_jwks(body);
    } catch (const JwksError& e) {
        throw KeySourceError(shown + ": " + e.what());
    }
    for (const auto& skipped : set.skipped) {
        spdlog::warn("auth: key {} (kid \"{}\") of the JWKS at {} is not used: {}", skipped.index, skipped.kid, shown,
                     skipped.reason);
    }
    if (set.keys.empty()) throw KeySourceError("the JWKS at " + shown + " has no key Toolport can use");
    co_return std::make_shared<const KeySet>(std::move(set));
}

}  // namespace toolport::auth
