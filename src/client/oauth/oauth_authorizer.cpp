#include "client/oauth/oauth_authorizer.hpp"

#include <algorithm>
#include <ctime>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "async/asio_executor.hpp"
#include "async/completion.hpp"
#include "auth/token_endpoint.hpp"
#include "client/oauth/authorization_request.hpp"
#include "client/oauth/dpop.hpp"
#include "client/oauth/pkce.hpp"
#include "client/oauth/protected_resource.hpp"
#include "client/oauth/redirect_listener.hpp"
#include "client/oauth/scope_selection.hpp"
#include "client/oauth/server_metadata.hpp"
#include "client/oauth/www_authenticate.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/base64.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport::client::oauth {

namespace {

// Authorizations one command may run: the first, a step-up and one more (a moved
// authorization server). A server that keeps refusing after that will not change its
// mind, and each one may put a page in front of the user (the MCP spec asks clients to
// bound step-up retries).
constexpr int kMaxAuthorizations = 3;
// A token this close to its expiry is refreshed before use rather than sent to be refused.
constexpr std::int64_t kExpirySlackSeconds = 30;
constexpr auto kTokenTimeout = std::chrono::seconds(30);
constexpr const char* kJwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer";
constexpr const char* kIdJag = "urn:ietf:params:oauth:token-type:id-jag";

std::int64_t unix_now() { return static_cast<std::int64_t>(std::time(nullptr)); }

std::string random_state() {
    unsigned char bytes[24];
    util::secure_random(bytes, sizeof bytes);
    return util::base64url_encode(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

auth::ClientAuthentication::Method method_of(const std::string& name) {
    auto method = auth::parse_method(name);
    if (!method) {
        throw AuthorizationError(
            fmt::format("the client is registered with token endpoint authentication \"{}\", "
                        "which Toolport does not support",
                        util::sanitize_for_message(name, 60)));
    }
    return *method;
}

bool contains(const std::vector<std::string>& list, std::string_view item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// Asks the page opener's check (OAuthOptions::show_authorization_url) every 50 ms for 2 s
// while the flow waits for the redirect, on the loop (the check never blocks), and ends
// the wait when the opener failed. stop() before the listener goes away.
class OpenerWatch : public std::enable_shared_from_this<OpenerWatch> {
public:
    OpenerWatch(AsioExecutor& executor, RedirectListener& listener, OAuthOptions::OpenerCheck check)
        : executor_(executor), listener_(listener), check_(std::move(check)) {}

    void start() { arm(); }
    void stop() {
        stopped_ = true;
        if (cancel_) cancel_();
        cancel_ = nullptr;
        check_ = nullptr;  // lets the browser process go (reaped on its own if still running)
    }

private:
    void arm() {
        std::weak_ptr<OpenerWatch> weak = shared_from_this();
        cancel_ = executor_.schedule_after(std::chrono::milliseconds(50), [weak] {
            if (auto self = weak.lock()) self->tick();
        });
    }
    void tick() {
        cancel_ = nullptr;
        if (stopped_ || !check_) return;
        if (auto outcome = check_()) {
            if (!outcome->empty()) listener_.abandon(*outcome);
            check_ = nullptr;
            return;
        }
        if (--ticks_left_ > 0) arm();
        else check_ = nullptr;
    }

    AsioExecutor& executor_;
    RedirectListener& listener_;
    OAuthOptions::OpenerCheck check_;
    std::function<void()> cancel_;
    int ticks_left_ = 40;
    bool stopped_ = false;
};

http_client::ClientOptions http_options(const OAuthOptions& options) {
    http_client::ClientOptions o;
    o.ca_file = options.ca_file;
    o.max_response_bytes = 1 << 20;
    return o;
}

}  // namespace

struct OAuthAuthorizer::Impl {
    Impl(AsioExecutor& executor, OAuthOptions opts)
        : executor(executor),
          options(std::move(opts)),
          server(canonical_server_url(options.server_url)),
          store(options.store_path.empty() ? std::nullopt : std::optional<TokenStore>(options.store_path)),
          http(executor, http_options(options)) {}

    AsioExecutor& executor;
    OAuthOptions options;
    std::string server;               // canonical: the store's key
    std::optional<TokenStore> store;  // none: tokens live as long as the authorizer
    http_client::HttpClient http;
    bool loaded = false;
    ServerEntry entry;
    int authorizations = 0;
    bool refreshed_since_refusal = false;
    std::string last_sent;  // the access token the last request carried
    std::string reloaded;   // non-interactive: the access token last taken from a re-read store
    bool busy = false;      // a refusal is being handled
    std::vector<Completion<bool>> waiters;
    // DPoP nonces (RFC 9449 §8, §9): the latest each token endpoint gave, and the MCP
    // server's. Short-lived, so kept in memory only.
    std::map<std::string, std::string> token_endpoint_nonces;
    std::string resource_nonce;
    std::optional<DpopKey> bound_key;  // entry.tokens->dpop_key, parsed once

    // ------------------------------------------------------------ the store

    void load() {
        if (loaded) return;
        try {
            if (!store) {
                loaded = true;
                return;
            }
            if (auto found = store->load(server)) entry = std::move(*found);
        } catch (const TokenStoreError& e) {
            throw AuthorizationError(e.what());
        }
        loaded = true;
    }

    void save() {
        if (!store) return;
        try {
            store->save(server, entry);
        } catch (const TokenStoreError& e) {
            throw AuthorizationError(e.what());
        }
    }

    // `key`: the DPoP key whose proof went with the request (nullptr: none did).
    void keep(const auth::TokenResponse& response, const std::string& issuer, std::vector<std::string> scopes,
              const DpopKey* key) {
        // A DPoP-bound token without a key to prove possession of would be refused with every
        // request it is sent on: better said now. A server that advertised DPoP may still
        // issue a Bearer token (RFC 9449 §5); the key is kept then for the refresh token,
        // which a server binds for public clients.
        if (response.token_type != "Bearer" && !(response.token_type == "DPoP" && key)) {
            throw AuthorizationError(fmt::format(
                "{} issued a {} token without being sent a DPoP proof; Toolport presents Bearer tokens, and "
                "DPoP-bound ones only from servers advertising ES256 in dpop_signing_alg_values_supported",
                util::sanitize_for_message(issuer, 200), response.token_type));
        }
        StoredTokens tokens;
        tokens.issuer = issuer;
        tokens.access_token = response.access_token;
        tokens.token_type = response.token_type;
        // A refresh answer without a new refresh token leaves the old one valid (RFC 6749 §6).
        tokens.refresh_token = !response.refresh_token.empty()
                                   ? response.refresh_token
                                   : (entry.tokens && entry.tokens->issuer == issuer ? entry.tokens->refresh_token : "");
        tokens.expires_at = response.expires_in ? unix_now() + response.expires_in->count() : 0;
        tokens.scopes = std::move(scopes);
        tokens.dpop_key = key ? key->pem() : "";
        entry.tokens = std::move(tokens);
        bound_key.reset();
        if (key) bound_key = *key;
        save();
    }

    // A new DPoP key when the server binds tokens with ES256 proofs (the one algorithm
    // Toolport signs them with); nullopt otherwise, and the tokens are Bearer ones.
    static std::optional<DpopKey> dpop_key_for(const ServerMetadata& metadata) {
        if (!contains(metadata.dpop_signing_alg_values_supported, "ES256")) return std::nullopt;
        try {
            return DpopKey::generate();
        } catch (const std::exception& e) {
            throw AuthorizationError(e.what());
        }
    }

    // The key the current tokens are bound to (they must be). Throws AuthorizationError
    // when the store's copy of it is unusable.
    const DpopKey& key_of_tokens() {
        if (!bound_key) {
            try {
                bound_key = DpopKey::from_pem(entry.tokens->dpop_key);
            } catch (const std::exception& e) {
                throw AuthorizationError(fmt::format("the DPoP key kept for {} is unusable: {}", server, e.what()));
            }
        }
        return *bound_key;
    }

    // ------------------------------------------------------------ discovery

    struct Discovered {
        std::string resource;
        std::vector<std::string> resource_scopes;
        ServerMetadata metadata;
    };

    // `challenge_url`: the 401's resource_metadata. `bearer_challenge`: the server asked for a
    // Bearer token, so a server without protected resource metadata is taken for one of the
    // 2025-03-26 revision (its own authorization server).
    Task<std::optional<Discovered>> discover(std::string challenge_url, bool bearer_challenge) {
        auto prm = co_await discover_protected_resource(http, options.server_url, challenge_url);
        Discovered d;
        if (prm) {
            d.resource = prm->resource;
            d.resource_scopes = prm->scopes_supported;
            // The first server the resource names, unless the user's registration is for another it names.
            std::string issuer = prm->authorization_servers.front();
            if (entry.client && entry.client->kind == "pre-registered" &&
                contains(prm->authorization_servers, entry.client->issuer)) {
                issuer = entry.client->issuer;
            }
            auto metadata = co_await discover_server_metadata(http, issuer);
            if (!metadata) {
                throw AuthorizationError(fmt::format("the authorization server {} publishes no metadata",
                                                     util::sanitize_for_message(issuer, 200)));
            }
            d.metadata = std::move(*metadata);
            co_return d;
        }
        if (!bearer_challenge) co_return std::nullopt;
        const std::string origin = http_client::parse_url(options.server_url).origin();
        d.resource = server;
        auto metadata = co_await discover_server_metadata(http, origin);
        d.metadata = metadata ? std::move(*metadata) : default_endpoints(origin);
        co_return d;
    }

    // ------------------------------------------------------------ grants

    auth::ClientAuthentication authentication(const RegisteredClient& client, const ServerMetadata& metadata) const {
        auth::ClientAuthentication a;
        a.method = method_of(client.auth_method);
        a.client_id = client.client_id;
        a.client_secret = client.client_secret;
        if (a.method == auth::ClientAuthentication::Method::private_key_jwt) {
            a.private_key_pem = options.identity.private_key_pem;
            a.signing_alg = options.signing_alg;
            // RFC 7523bis: the authorization server's issuer identifier is the audience
            // every server accepts (the token endpoint URL is not).
            a.assertion_audience = metadata.issuer;
        }
        return a;
    }

    Task<auth::TokenResponse> token(const ServerMetadata& metadata, const auth::ClientAuthentication& client,
                                    std::vector<std::pair<std::string, std::string>> grant,
                                    const DpopKey* key = nullptr) {
        return token_at(metadata.token_endpoint, metadata.issuer, client, std::move(grant), key);
    }

    // `endpoint`, `client` and `key` must outlive the task (co_await at once). With `key`,
    // each request carries a DPoP proof of it, with the endpoint's latest nonce; a
    // use_dpop_nonce refusal naming a new one is asked again once with it (RFC 9449 §8).
    Task<auth::TokenResponse> token_at(const std::string& endpoint, std::string server_name,
                                       const auth::ClientAuthentication& client,
                                       std::vector<std::pair<std::string, std::string>> grant,
                                       const DpopKey* key = nullptr) {
        http_client::CallOptions call;
        call.deadline = std::chrono::steady_clock::now() + kTokenTimeout;
        try {
            for (int attempt = 0;; ++attempt) {
                auth::TokenRequestExtras extras;
                std::string& nonce = token_endpoint_nonces[endpoint];
                if (key) extras.headers.emplace_back("DPoP", key->proof("POST", endpoint, {}, nonce));
                try {
                    auto response = co_await auth::request_token(http, endpoint, client, grant, call, std::move(extras));
                    if (key && !response.dpop_nonce.empty()) token_endpoint_nonces[endpoint] = response.dpop_nonce;
                    co_return response;
                } catch (const auth::TokenEndpointError& e) {
                    std::string& latest = token_endpoint_nonces[endpoint];
                    if (!key || attempt > 0 || e.error != "use_dpop_nonce" || e.dpop_nonce.empty() ||
                        e.dpop_nonce == latest)
                        throw;
                    latest = e.dpop_nonce;  // the next attempt's proof carries it
                }
            }
        } catch (const auth::TokenEndpointError& e) {
            std::string what = fmt::format("the token endpoint of {} refused",
                                           util::sanitize_for_message(server_name, 200));
            if (!e.error.empty()) what += ": " + e.error;
            if (!e.description.empty()) what += " (" + e.description + ")";
            throw AuthorizationError(what);
        } catch (const http_client::HttpError& e) {
            throw AuthorizationError(fmt::format("the token endpoint could not be reached: {}", e.what()));
        } catch (const std::invalid_argument& e) {
            throw AuthorizationError(fmt::format("cannot ask the token endpoint: {}", e.what()));
        }
    }

    // The registration to use at `metadata`'s server: the stored one when it was made there.
    Task<RegisteredClient> client_for(const ServerMetadata& metadata, const std::string& redirect_uri,
                                      std::vector<std::string> grant_types) {
        if (options.identity.client_id.empty() && entry.client && entry.client->kind == "dynamic" &&
            entry.client->issuer == metadata.issuer) {
            co_return *entry.client;
        }
        // A registration (or token) from another authorization server is never shown to this one.
        RegisteredClient client = co_await register_client(http, metadata, options.identity, redirect_uri,
                                                           std::move(grant_types));
        entry.client = client;
        save();
        co_return client;
    }

    Task<void> authorization_code(const Discovered& d, std::vector<std::string> scopes) {
        const ServerMetadata& metadata = d.metadata;
        if (metadata.authorization_endpoint.empty()) {
            throw AuthorizationError(fmt::format("the authorization server {} has no authorization endpoint",
                                                 util::sanitize_for_message(metadata.issuer, 200)));
        }
        // PKCE is how the code is bound to this client; a server that does not say it does
        // S256 may drop it silently (MCP spec: clients must refuse to proceed then).
        if (!contains(metadata.code_challenge_methods_supported, "S256")) {
            throw AuthorizationError(
                fmt::format("the authorization server {} does not advertise PKCE with S256: refusing to authorize",
                            util::sanitize_for_message(metadata.issuer, 200)));
        }
        RedirectListener listener(executor);
        const std::string redirect_uri = listener.redirect_uri();
        RegisteredClient client = co_await client_for(metadata, redirect_uri, {"authorization_code", "refresh_token"});
        const Pkce pkce = make_pkce();
        AuthorizationRequest request;
        request.client_id = client.client_id;
        request.redirect_uri = redirect_uri;
        request.code_challenge = pkce.challenge;
        request.state = random_state();
        request.resource = d.resource;
        request.scopes = scopes;
        std::shared_ptr<OpenerWatch> watch;
        if (options.show_authorization_url) {
            if (auto check = options.show_authorization_url(authorization_url(metadata.authorization_endpoint, request))) {
                watch = std::make_shared<OpenerWatch>(executor, listener, std::move(check));
                watch->start();
            }
        }
        AuthorizationResponse response;
        try {
            response = co_await listener.wait(request.state, options.redirect_timeout);
        } catch (...) {
            if (watch) watch->stop();
            throw;
        }
        if (watch) watch->stop();
        check_authorization_response(response, metadata);
        const auto key = dpop_key_for(metadata);
        auto tokens = co_await token(metadata, authentication(client, metadata),
                                     {{"grant_type", "authorization_code"},
                                      {"code", response.code},
                                      {"redirect_uri", redirect_uri},
                                      {"code_verifier", pkce.verifier},
                                      {"resource", d.resource}},
                                     key ? &*key : nullptr);
        keep(tokens, metadata.issuer, std::move(scopes), key ? &*key : nullptr);
    }

    Task<void> machine_grant(const Discovered& d, std::vector<std::string> scopes) {
        const ServerMetadata& metadata = d.metadata;
        const auto& id = options.identity;
        RegisteredClient client;
        client.issuer = metadata.issuer;
        client.kind = "pre-registered";
        client.client_id = id.client_id;
        client.client_secret = id.client_secret;
        std::vector<std::pair<std::string, std::string>> grant;
        if (options.grant == OAuthOptions::Grant::client_credentials) {
            client.auth_method = choose_auth_method(metadata, !id.client_secret.empty(), !id.private_key_pem.empty());
            grant.emplace_back("grant_type", "client_credentials");
        } else if (options.grant == OAuthOptions::Grant::jwt_bearer) {
            // The assertion is the credential; the client authenticates no further (RFC 7523 §2.1).
            client.auth_method = "none";
            grant.emplace_back("grant_type", kJwtBearerGrant);
            grant.emplace_back("assertion", options.assertion);
        } else {
            // The ID-JAG says who the user is; the client still authenticates as itself.
            client.auth_method = choose_auth_method(metadata, !id.client_secret.empty(), !id.private_key_pem.empty());
            grant.emplace_back("grant_type", kJwtBearerGrant);
            grant.emplace_back("assertion", co_await identity_assertion(d, scopes));
        }
        grant.emplace_back("resource", d.resource);
        if (!scopes.empty()) grant.emplace_back("scope", join_scopes(scopes));
        entry.client = client;
        const auto key = dpop_key_for(metadata);
        auto tokens = co_await token(metadata, authentication(client, metadata), std::move(grant),
                                     key ? &*key : nullptr);
        keep(tokens, metadata.issuer, std::move(scopes), key ? &*key : nullptr);
    }

    // SEP-990: the enterprise IdP exchanges the user's ID token for an ID-JAG, an assertion
    // for this authorization server (audience) and this resource.
    Task<std::string> identity_assertion(const Discovered& d, const std::vector<std::string>& scopes) {
        auth::ClientAuthentication idp_client;
        idp_client.method = auth::ClientAuthentication::Method::none;
        idp_client.client_id = options.idp_client_id;
        std::vector<std::pair<std::string, std::string>> exchange = {
            {"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
            {"requested_token_type", kIdJag},
            {"audience", d.metadata.issuer},
            {"resource", d.resource},
            {"subject_token", options.idp_id_token},
            {"subject_token_type", "urn:ietf:params:oauth:token-type:id_token"}};
        if (!scopes.empty()) exchange.emplace_back("scope", join_scopes(scopes));
        auto jag = co_await token_at(options.idp_token_endpoint, "the identity provider", idp_client,
                                     std::move(exchange));
        if (jag.issued_token_type != kIdJag) {
            throw AuthorizationError(fmt::format("the identity provider issued a {} instead of an ID-JAG",
                                                 util::sanitize_for_message(jag.issued_token_type, 100)));
        }
        co_return jag.access_token;
    }

    // A full authorization. Returns false when the server turned out not to use OAuth.
    Task<bool> authorize(std::optional<Challenge> challenge, bool step_up) {
        if (!options.interactive && options.grant == OAuthOptions::Grant::authorization_code) {
            // The operator may have logged in again since the store was read (another
            // process wrote it): those tokens are used without asking anyone.
            loaded = false;
            entry = {};
            load();
            // Each one once: an expired one that cannot be refreshed must not be retried forever.
            if (entry.tokens && !entry.tokens->access_token.empty() && entry.tokens->access_token != last_sent &&
                entry.tokens->access_token != reloaded) {
                reloaded = entry.tokens->access_token;
                co_return true;
            }
            throw AuthorizationError(fmt::format(
                "no usable OAuth token for {} (none kept, or it expired and could not be refreshed), and a new "
                "authorization needs a user at a browser",
                server));
        }
        if (++authorizations > kMaxAuthorizations) {
            throw AuthorizationError(
                fmt::format("{} still refuses after {} authorizations; giving up", server, kMaxAuthorizations));
        }
        std::string challenge_url = challenge ? challenge->param("resource_metadata").value_or("") : "";
        auto d = co_await discover(challenge_url, challenge.has_value());
        if (!d) co_return false;
        entry.resource = d->resource;
        if (entry.tokens && entry.tokens->issuer != d->metadata.issuer) entry.tokens.reset();
        ScopeInputs inputs;
        inputs.challenge_scope = challenge ? challenge->param("scope").value_or("") : "";
        inputs.resource_scopes = d->resource_scopes;
        if (step_up && entry.tokens) inputs.previously_requested = entry.tokens->scopes;
        inputs.server_scopes = d->metadata.scopes_supported;
        inputs.want_refresh_token = options.grant == OAuthOptions::Grant::authorization_code;
        auto scopes = select_scopes(inputs);
        if (options.grant == OAuthOptions::Grant::authorization_code)
            co_await authorization_code(*d, std::move(scopes));
        else co_await machine_grant(*d, std::move(scopes));
        co_return true;
    }

    // Trades the refresh token for new tokens; false when there is none or it was refused
    // (the refresh token is dropped then).
    Task<bool> refresh() {
        if (!entry.tokens || entry.tokens->refresh_token.empty() || !entry.client) co_return false;
        const std::string issuer = entry.tokens->issuer;
        std::optional<ServerMetadata> metadata;
        try {
            metadata = co_await discover_server_metadata(http, issuer);
        } catch (const AuthorizationError&) {}
        if (!metadata) co_return false;
        std::vector<std::pair<std::string, std::string>> grant = {{"grant_type", "refresh_token"},
                                                                  {"refresh_token", entry.tokens->refresh_token}};
        if (!entry.resource.empty()) grant.emplace_back("resource", entry.resource);
        auto scopes = entry.tokens->scopes;
        // Tokens bound to a key are refreshed with a proof of the same key (RFC 9449 §5).
        std::optional<DpopKey> key;
        try {
            if (!entry.tokens->dpop_key.empty()) key = key_of_tokens();
            auto tokens = co_await token(*metadata, authentication(*entry.client, *metadata), std::move(grant),
                                         key ? &*key : nullptr);
            keep(tokens, issuer, std::move(scopes), key ? &*key : nullptr);
            co_return true;
        } catch (const AuthorizationError&) {
            entry.tokens->refresh_token.clear();
            save();
            co_return false;
        }
    }
};

OAuthAuthorizer::OAuthAuthorizer(AsioExecutor& executor, OAuthOptions options) {
    if (options.grant == OAuthOptions::Grant::jwt_bearer && options.assertion.empty()) {
        throw std::invalid_argument("the JWT-bearer grant needs an assertion");
    }
    if (options.grant == OAuthOptions::Grant::enterprise &&
        (options.idp_token_endpoint.empty() || options.idp_client_id.empty() || options.idp_id_token.empty())) {
        throw std::invalid_argument(
            "enterprise-managed authorization needs the IdP's token endpoint, a client_id there "
            "and the user's ID token");
    }
    if (options.grant != OAuthOptions::Grant::authorization_code && options.identity.client_id.empty()) {
        throw std::invalid_argument("a client_credentials or JWT-bearer grant needs a client_id");
    }
    if (options.grant == OAuthOptions::Grant::client_credentials && options.identity.client_secret.empty() &&
        options.identity.private_key_pem.empty()) {
        throw std::invalid_argument("the client_credentials grant needs a client secret or a private key");
    }
    impl_ = std::make_unique<Impl>(executor, std::move(options));  // canonical_server_url throws for a bad URL
}

OAuthAuthorizer::~OAuthAuthorizer() = default;

Task<std::string> OAuthAuthorizer::authorization() {
    Impl& i = *impl_;
    try {
        i.load();
    } catch (const AuthorizationError&) {
        // An unreadable store matters only to a server that asks for authorization: then
        // refused() reports it. A server without OAuth is used as if there were no store.
        co_return std::string();
    }
    if (i.entry.tokens && i.entry.tokens->expires_at != 0 &&
        unix_now() + kExpirySlackSeconds >= i.entry.tokens->expires_at) {
        if (!co_await i.refresh()) i.entry.tokens.reset();
    }
    if (!i.entry.tokens || i.entry.tokens->access_token.empty()) {
        i.last_sent.clear();
        co_return std::string();
    }
    i.last_sent = i.entry.tokens->access_token;
    // A DPoP-bound token goes with the DPoP scheme (RFC 9449 §7.1) and a proof, which
    // request_headers() adds.
    co_return (i.entry.tokens->token_type == "DPoP" ? "DPoP " : "Bearer ") + i.entry.tokens->access_token;
}

Task<std::vector<std::pair<std::string, std::string>>> OAuthAuthorizer::request_headers(std::string method,
                                                                                        std::string url) {
    Impl& i = *impl_;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string authorization = co_await this->authorization();
    if (authorization.empty()) co_return headers;
    if (i.entry.tokens->token_type == "DPoP") {
        // A fresh proof per request (jti), naming it and the token, with the server's nonce.
        headers.emplace_back("DPoP",
                             i.key_of_tokens().proof(method, url, i.entry.tokens->access_token, i.resource_nonce));
    }
    headers.emplace_back("Authorization", std::move(authorization));
    co_return headers;
}

Task<bool> OAuthAuthorizer::refused_request(unsigned status, std::string www_authenticate, std::string dpop_nonce) {
    Impl& i = *impl_;
    // RFC 9449 §9: a server that wants its nonce in proofs refuses with use_dpop_nonce and
    // gives it; the request is sent again with it, nothing else changes. The transport
    // bounds how often one request is sent again, so a server refusing every nonce ends.
    if (status == 401 && !dpop_nonce.empty() && i.entry.tokens && i.entry.tokens->token_type == "DPoP") {
        auto dpop = parse_challenge(www_authenticate, "DPoP");
        if (dpop && dpop->param("error").value_or("") == "use_dpop_nonce") {
            i.resource_nonce = std::move(dpop_nonce);
            co_return true;
        }
    }
    co_return co_await refused(status, std::move(www_authenticate));
}

Task<bool> OAuthAuthorizer::refused(unsigned status, std::string www_authenticate) {
    Impl& i = *impl_;
    // Requests refused together (a GET stream and a POST, a gateway's concurrent calls) share
    // one authorization: the user sees one page, and each request is sent again after it.
    if (i.busy) {
        Completion<bool> done;
        i.waiters.push_back(done);
        co_return co_await done;
    }
    i.busy = true;
    bool result = false;
    std::exception_ptr error;
    try {
        result = co_await refused_alone(status, std::move(www_authenticate));
    } catch (...) {
        error = std::current_exception();
    }
    i.busy = false;
    auto waiters = std::move(i.waiters);
    i.waiters.clear();
    for (auto& waiter : waiters) {
        if (error) waiter.set_error(error);
        else waiter.set_value(result);
    }
    if (error) std::rethrow_exception(error);
    co_return result;
}

Task<bool> OAuthAuthorizer::refused_alone(unsigned status, std::string www_authenticate) {
    Impl& i = *impl_;
    i.load();
    auto challenge = parse_bearer_challenge(www_authenticate);
    if (status == 403) {
        // Only a missing scope is something authorizing again can fix.
        if (!challenge || challenge->param("error").value_or("") != "insufficient_scope") co_return false;
        co_return co_await i.authorize(challenge, true);
    }
    if (status != 401) co_return false;
    // A refused token that has a refresh token is refreshed once before anything heavier.
    if (!i.last_sent.empty() && !i.refreshed_since_refusal) {
        i.refreshed_since_refusal = true;
        if (co_await i.refresh()) co_return true;
    }
    i.refreshed_since_refusal = false;
    co_return co_await i.authorize(challenge, false);
}

Task<void> OAuthAuthorizer::login() {
    Impl& i = *impl_;
    i.load();
    // No challenge to read: the protected resource metadata at its well-known URLs says
    // how to authorize; a server without any is taken for a 2025-03-26 one.
    Challenge none{"Bearer", {}};
    if (!co_await i.authorize(none, false)) {
        throw AuthorizationError(fmt::format("{} does not say how to authorize", i.server));
    }
}

std::string OAuthAuthorizer::issuer() const { return impl_->entry.tokens ? impl_->entry.tokens->issuer : ""; }

}  // namespace toolport::client::oauth
