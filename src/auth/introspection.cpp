#include "auth/introspection.hpp"

#include <algorithm>
#include <cmath>

#include "http_client/http_client.hpp"
#include "auth/key_source.hpp"
#include "auth/scope_policy.hpp"
#include "util/json.hpp"

namespace toolport::auth {

namespace {

using Clock = std::chrono::system_clock;

[[noreturn]] void refuse(TokenErrorReason reason, const std::string& message) { throw TokenError(reason, message); }

[[noreturn]] void unusable(const std::string& message) {
    throw TokenError(TokenErrorReason::introspection_unavailable, message);
}

bool base64url_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// A NumericDate claim (seconds since the epoch), or nullopt when absent.
std::optional<Clock::time_point> date_claim(const Json& body, const char* name) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) return std::nullopt;
    if (!it->is_number() || !std::isfinite(it->get<double>()))
        unusable(std::string("the introspection response's ") + name + " is not a number");
    return numeric_date_time(it->get<double>());
}

std::string string_claim(const Json& body, const char* name) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) return {};
    if (!it->is_string()) unusable(std::string("the introspection response's ") + name + " is not a string");
    return it->get<std::string>();
}

}  // namespace

bool looks_like_jwt(std::string_view token) {
    int dots = 0;
    std::size_t part = 0;
    for (char c : token) {
        if (c == '.') {
            if (part == 0) return false;
            ++dots;
            part = 0;
        } else if (base64url_char(c)) {
            ++part;
        } else {
            return false;
        }
    }
    return dots == 2 && part > 0;
}

TokenIntrospector::TokenIntrospector(http_client::HttpClient& http, IntrospectionOptions options)
    : http_(http), options_(std::move(options)), endpoint_(options_.endpoint), cache_(options_.cache_capacity) {
    if (options_.issuer.empty()) throw std::invalid_argument("introspection: the issuer is empty");
    if (options_.audiences.empty()) throw std::invalid_argument("introspection: no resource (audience) to check");
    if (!endpoint_.empty()) check_server_url("the introspection endpoint", endpoint_, options_.allow_http);
    else check_server_url("the issuer", options_.issuer, options_.allow_http);
    // Method none may go without a client_id (an endpoint that asks for no authentication).
    if (options_.client.method != ClientAuthentication::Method::none) {
        try {
            check_client_authentication(options_.client);
        } catch (const std::invalid_argument& e) {
            throw std::invalid_argument(std::string("introspection: ") + e.what());
        }
    }
    if (options_.timeout.count() <= 0) throw std::invalid_argument("introspection: the timeout must be positive");
}

Clock::time_point TokenIntrospector::now() const { return options_.clock ? options_.clock() : Clock::now(); }

std::shared_ptr<const VerifiedToken> TokenIntrospector::cached(std::string_view token) {
    if (token.size() > options_.max_token_bytes) return nullptr;
    return cache_.find(token, now());
}

void TokenIntrospector::remember_refusal(const TokenDigest& key, const TokenError& error) {
    if (options_.negative_cache.count() <= 0 || options_.cache_capacity == 0) return;
    if (error.reason() == TokenErrorReason::introspection_unavailable) return;  // not the token's fault
    const auto t = now();
    if (refused_.size() >= options_.cache_capacity) {
        std::erase_if(refused_, [t](const auto& entry) { return entry.second.until <= t; });
        // Still full of live refusals: a flood. Forget one; its token costs one more request.
        if (refused_.size() >= options_.cache_capacity) refused_.erase(refused_.begin());
    }
    refused_[key] = Refusal{error.reason(), error.what(), t + options_.negative_cache};
}

Task<std::shared_ptr<const VerifiedToken>> TokenIntrospector::introspect(std::string token) {
    if (token.size() > options_.max_token_bytes) refuse(TokenErrorReason::too_large, "the token is too large");
    if (token.empty()) refuse(TokenErrorReason::malformed, "the token is empty");
    const TokenDigest key = token_digest(token);
    if (auto hit = cache_.find(key, now())) co_return hit;
    if (auto it = refused_.find(key); it != refused_.end()) {
        if (it->second.until > now()) {
            ++stats_.negative_hits;
            throw TokenError(it->second.reason, it->second.message);
        }
        refused_.erase(it);
    }
    if (auto it = in_flight_.find(key); it != in_flight_.end()) {
        Completion<Outcome> done;
        it->second.push_back(done);
        co_return co_await done;
    }
    in_flight_[key];  // later askers of this token wait for this request
    Outcome outcome;
    std::exception_ptr error;
    try {
        outcome = co_await ask(std::move(token), key);
    } catch (...) {
        error = std::current_exception();
    }
    auto waiters = std::move(in_flight_[key]);
    in_flight_.erase(key);
    for (auto& w : waiters) {
        if (error) w.set_error(error);
        else w.set_value(outcome);
    }
    if (error) std::rethrow_exception(error);
    co_return outcome;
}

Task<std::string> TokenIntrospector::endpoint_from_metadata() {
    DiscoveryOptions discovery;
    discovery.issuer = options_.issuer;
    discovery.allow_http = options_.allow_http;
    discovery.fetch_timeout = options_.timeout;
    discovery.max_document_bytes = options_.max_response_bytes * 8;
    std::string endpoint;
    try {
        endpoint = co_await discover_endpoint(http_, discovery, "introspection_endpoint");
    } catch (const KeySourceError& e) {
        unusable(e.what());
    }
    co_return endpoint;
}

Task<std::shared_ptr<const VerifiedToken>> TokenIntrospector::ask(std::string token, TokenDigest key) {
    if (endpoint_.empty()) endpoint_ = co_await endpoint_from_metadata();
    const std::string endpoint = endpoint_;
    const std::string shown = endpoint.substr(0, endpoint.find('?'));
    auto request = client_form_post(endpoint, options_.client,
                                    {{"token", std::move(token)}, {"token_type_hint", "access_token"}});

    http_client::CallOptions call;
    call.deadline = std::chrono::steady_clock::now() + options_.timeout;
    call.max_response_bytes = options_.max_response_bytes;
    call.max_redirects = 0;  // the body holds the token: it goes to the configured endpoint only
    ++stats_.requests;
    http_client::Response response;
    try {
        response = co_await http_.fetch(std::move(request), call);
    } catch (const http_client::HttpError& e) {
        unusable("the introspection request to " + shown + " failed: " + e.what());
    } catch (const http_client::ResponseTooLarge&) {
        unusable("the introspection response from " + shown + " is too large");
    }
    if (response.status != 200) {
        unusable("the introspection endpoint " + shown + " answered " + std::to_string(response.status));
    }
    auto body = Json::parse(response.body, nullptr, false);
    std::shared_ptr<const VerifiedToken> verified;
    try {
        verified = read_response(body, now());
    } catch (const TokenError& e) {
        remember_refusal(key, e);
        throw;
    }
    cache_.insert(key, verified, now());
    co_return verified;
}

std::shared_ptr<const VerifiedToken> TokenIntrospector::read_response(const Json& body, Clock::time_point t) const {
    if (!body.is_object()) unusable("the introspection response is not a JSON object");
    auto active = body.find("active");
    if (active == body.end() || !active->is_boolean()) unusable("the introspection response has no boolean \"active\"");
    if (!active->get<bool>())
        refuse(TokenErrorReason::inactive, "the authorization server says the token is not active");

    auto out = std::make_shared<VerifiedToken>();
    out->claims = body;
    // iss: optional in RFC 7662; when given it must be ours.
    out->issuer = string_claim(body, "iss");
    if (!out->issuer.empty() && out->issuer != options_.issuer)
        refuse(TokenErrorReason::wrong_issuer, "the token was issued by another authorization server");
    if (out->issuer.empty()) out->issuer = options_.issuer;

    auto aud = body.find("aud");
    if (aud == body.end() || aud->is_null())
        refuse(TokenErrorReason::wrong_audience, "the introspection response names no audience for the token");
    if (aud->is_string()) {
        out->audiences.push_back(aud->get<std::string>());
    } else if (aud->is_array()) {
        for (const auto& a : *aud) {
            if (!a.is_string()) unusable("the introspection response's aud holds a non-string");
            out->audiences.push_back(a.get<std::string>());
        }
    } else {
        unusable("the introspection response's aud is neither a string nor an array");
    }
    const bool ours = std::any_of(out->audiences.begin(), out->audiences.end(), [&](const std::string& a) {
        return std::find(options_.audiences.begin(), options_.audiences.end(), a) != options_.audiences.end();
    });
    if (!ours) refuse(TokenErrorReason::wrong_audience, "the token is not meant for this resource");

    auto exp = date_claim(body, "exp");
    if (exp && *exp + options_.skew <= t) refuse(TokenErrorReason::expired, "the token has expired");
    if (auto nbf = date_claim(body, "nbf"); nbf && *nbf > t + options_.skew)
        refuse(TokenErrorReason::not_yet_valid, "the token is not valid yet");
    // Cached until exp (the skew is not added: the cache never extends a token's life), or
    // for max_cache when the server gave no exp.
    out->expires_at = exp ? *exp : t + options_.max_cache;

    out->subject = string_claim(body, "sub");
    out->client_id = string_claim(body, "client_id");
    if (out->subject.empty()) {
        // A client acting for itself (client_credentials) may have no sub: it is its own caller.
        if (out->client_id.empty())
            refuse(TokenErrorReason::missing_claim, "the introspection response names neither sub nor client_id");
        out->subject = "client:" + out->client_id;
    }
    if (auto scope = body.find("scope"); scope != body.end() && !scope->is_null()) {
        if (!scope->is_string()) unusable("the introspection response's scope is not a string");
        out->scopes = split_scope(scope->get<std::string>());
    }
    return out;
}

}  // namespace toolport::auth
