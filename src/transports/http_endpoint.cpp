#include "transports/http_endpoint.hpp"

#include <strings.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "auth/authenticator.hpp"
#include "auth/resource_metadata.hpp"
#include "observability/metrics.hpp"
#include "server/session.hpp"
#include "server/stateless.hpp"
#include "stores/shared_sessions.hpp"
#include "transports/batch.hpp"
#include "transports/event_stream.hpp"
#include "transports/http_policy.hpp"
#include "transports/sse_stream.hpp"
#include "transports/stateless_headers.hpp"
#include "util/digest.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport {

using namespace std::chrono_literals;
namespace ec = protocol::error_code;

namespace {

constexpr std::string_view kRequestsMetric = "toolport_http_requests_total";
constexpr std::string_view kSessionsMetric = "toolport_sessions_open";

// Session lookup by string_view without building a std::string per request.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// 128 bits from the kernel: unguessable, and visible ASCII as the spec requires.
std::string random_session_id() { return util::random_hex(16); }

// What the messages of a POST body are, once parsed.
struct PostBody {
    protocol::ParsedPayload parsed;
    bool has_requests = false;
    bool has_errors = false;  // malformed members, answered on the POST
    bool has_initialize = false;
    const protocol::Request* first_request = nullptr;
    std::string traceparent;  // W3C trace context header, carried into requests' _meta
};

// A POST's messages sorted for one session: what the session runs, the replies the
// transport makes itself (malformed members, ids used twice), and the ids to wait for.
struct SortedPost {
    std::vector<protocol::Message> to_feed;
    std::vector<std::string> local_replies;
    std::vector<protocol::RequestId> request_ids;
};

// HTTP status for a stateless reply: the 2026-07-28 transport maps some JSON-RPC errors.
unsigned stateless_status(std::string_view reply) {
    constexpr std::string_view marker = "\"error\":{\"code\":";  // nlohmann writes keys sorted
    auto pos = reply.find(marker);
    if (pos == std::string::npos) return 200;
    int code = std::atoi(std::string(reply.substr(pos + marker.size(), 12)).c_str());
    switch (code) {
        case ec::kMethodNotFound: return 404;
        case ec::kHeaderMismatch:
        case ec::kMissingRequiredClientCapability:
        case ec::kUnsupportedProtocolVersion: return 400;
        default: return 200;
    }
}

// Whether a POST's stream says how to answer: everything replied (JSON), or something
// other than a reply to send (SSE), or the server wants the response ended (polling).
bool decided(const OutStream& out) { return out.finished() || out.has_non_response() || out.close_requested(); }

}  // namespace

namespace {

// A request kept past the call that brought it (HttpRequestView is the connection's, and
// only for that call): a shared session's first request here waits for Redis.
class OwnedRequest final : public HttpRequestView {
public:
    explicit OwnedRequest(const HttpRequestView& r)
        : method_(r.method()), target_(r.target()), version_(r.version()), keep_alive_(r.keep_alive()), body_(r.body()) {
        r.for_each_header([this](std::string_view name, std::string_view value) {
            headers_.emplace_back(std::string(name), std::string(value));
        });
    }
    HttpMethod method() const override { return method_; }
    std::string_view target() const override { return target_; }
    unsigned version() const override { return version_; }
    bool keep_alive() const override { return keep_alive_; }
    std::string_view header(std::string_view name) const override {
        for (const auto& [n, v] : headers_) {
            if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return v;
        }
        return {};
    }
    bool has_header(std::string_view name) const override {
        for (const auto& [n, v] : headers_) {
            if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return true;
        }
        return false;
    }
    void for_each_header(const std::function<void(std::string_view, std::string_view)>& visit) const override {
        for (const auto& [n, v] : headers_) visit(n, v);
    }
    const std::string& body() const override { return body_; }

private:
    HttpMethod method_;
    std::string target_;
    unsigned version_;
    bool keep_alive_;
    std::vector<std::pair<std::string, std::string>> headers_;
    std::string body_;
};

// An answer decided after an asynchronous step (a Redis lookup or write): resolve() hands
// it the answer it stands for, which may itself still be pending.
class DeferredAnswer final : public PendingAnswer {
public:
    explicit DeferredAnswer(std::function<bool()> stopping) : stopping_(std::move(stopping)) {}

    void resolve(HttpAnswer inner) {
        inner_ = std::move(inner);
        resolved_ = true;
        if (inner_.pending) {
            if (gone_) inner_.pending->client_gone();
            if (waker_) inner_.pending->set_waker(waker_);
        }
        if (waker_) waker_();
    }
    bool ready() const override {
        if (gone_ || stopping_()) return true;
        return resolved_ && (!inner_.pending || inner_.pending->ready());
    }
    void set_waker(std::function<void()> waker) override {
        waker_ = waker;
        if (resolved_ && inner_.pending) inner_.pending->set_waker(std::move(waker));
    }
    HttpAnswer take() override {
        waker_ = nullptr;
        if (!resolved_) return {};
        if (inner_.pending) {
            auto pending = std::move(inner_.pending);
            return pending->take();
        }
        return std::move(inner_);
    }
    void client_gone() override {
        if (gone_) return;
        gone_ = true;
        if (resolved_ && inner_.pending) inner_.pending->client_gone();
        if (waker_) waker_();
    }

private:
    std::function<bool()> stopping_;
    HttpAnswer inner_;
    bool resolved_ = false;
    bool gone_ = false;
    std::function<void()> waker_;
};

// Methods whose handling changes what a shared session's record holds.
bool changes_session_state(std::string_view method) {
    return method == "initialize" || method == "logging/setLevel" || method == "resources/subscribe" ||
           method == "resources/unsubscribe";
}

}  // namespace

void HttpEndpoint::count_request(HttpMethod method, unsigned status) {
    // Series handles cached per thread (connections may answer on I/O threads).
    thread_local std::unordered_map<unsigned, observability::Counter> counters;
    unsigned key = static_cast<unsigned>(method) * 1000u + status;
    auto it = counters.find(key);
    if (it == counters.end()) {
        observability::Labels labels{{"method", std::string(method_label(method))}, {"status", std::to_string(status)}};
        it = counters.emplace(key, observability::metrics().counter(kRequestsMetric, labels)).first;
    }
    it->second.increment();
}

struct HttpEndpoint::State : std::enable_shared_from_this<HttpEndpoint::State> {
    State(McpServer& server, Executor& executor, HttpOptions options)
        : mcp(server), executor(executor), opts(std::move(options)) {
        auto& m = observability::metrics();
        m.describe(kRequestsMetric, "HTTP requests answered, by method and status code.");
        m.describe(kSessionsMetric, "MCP sessions open on the HTTP transports (Streamable HTTP and legacy SSE).");
        sessions_changed();
    }

    McpServer& mcp;
    Executor& executor;
    HttpOptions opts;
    bool stopping = false;
    std::function<void()> cancel_sweep;
    // Shared sessions (null unless `sessions: shared`); see the "shared sessions" part below.
    std::shared_ptr<stores::SharedSessions> shared = opts.shared_sessions;
    bool skip_adoption = false;          // answering a request again after its lookup
    // OAuth (`auth:`): the verifier, the metadata URL and path(s) it publishes.
    std::shared_ptr<auth::TokenAuthenticator> authn = opts.oauth.authenticator;
    std::string metadata_url = authn ? auth::resource_metadata_url(opts.oauth.resource) : std::string();
    std::vector<std::string> metadata_paths = authn ? oauth_metadata_paths() : std::vector<std::string>{};
    // A token verified a moment ago, while its request is answered again (the cache may
    // not keep it).
    const std::pair<std::string, std::shared_ptr<const auth::VerifiedToken>>* just_verified = nullptr;
    // Our requests to a shared session's client are numbered in this replica's own range
    // (bits 32-51 random), so a reply that reaches another replica is told apart there.
    std::int64_t request_id_base = [] {
        std::uint32_t r = 0;
        util::secure_random(&r, sizeof r);
        return static_cast<std::int64_t>((r & 0xFFFFFu) + 1) << 32;
    }();
    std::uint64_t subscriptions_seen = 0;  // stores::SharedSessions::subscriptions_started()
    std::unordered_map<std::string, std::shared_ptr<HttpSession>, StringHash, std::equal_to<>> sessions;

    void sessions_changed() {
        observability::metrics().set(kSessionsMetric, {}, static_cast<double>(sessions.size()));
    }

    // ------------------------------------------------------------------ lifetimes

    void schedule_sweep() {
        if (stopping) return;
        auto every = std::min<std::chrono::milliseconds>(opts.session_idle_timeout / 2, 30s);
        if (opts.handshake_timeout.count() > 0) every = std::min<std::chrono::milliseconds>(every, opts.handshake_timeout / 2);
        every = std::max<std::chrono::milliseconds>(every, 100ms);
        std::weak_ptr<State> weak = weak_from_this();
        cancel_sweep = executor.schedule_after(every, [weak]() {
            auto self = weak.lock();
            if (!self || self->stopping) return;
            self->sweep();
            self->schedule_sweep();
        });
    }

    void sweep() {
        auto now = executor.now();
        std::vector<std::string> expired;
        for (auto& [id, s] : sessions) {
            s->prune(std::chrono::minutes(5));
            if (!s->legacy && !s->established && opts.handshake_timeout.count() > 0 &&
                now - s->created > opts.handshake_timeout) {
                spdlog::info("session {}… dropped: no message after initialize within {} s", id.substr(0, 8),
                             opts.handshake_timeout.count());
                expired.push_back(id);
            } else if (!s->busy() && now - s->last_active > opts.session_idle_timeout) {
                spdlog::info("session {}… expired after {} s idle", id.substr(0, 8), opts.session_idle_timeout.count());
                expired.push_back(id);
            }
        }
        for (const auto& id : expired) drop_session(id, "it expired");
        if (shared) shared_housekeeping();
    }

    // ------------------------------------------------------------------ credentials

    // What a request's bearer token is: one of the server's own (every path, every tool),
    // one of a gateway profile's (that profile only, whatever the path), or neither. Found
    // once per request, by answer(), and handed to whatever needs it (an OAuth token's cache
    // lookup hashes the token).
    struct Credential {
        bool valid = false;
        std::string profile;  // the view a profile's token selects
        // An OAuth access token: verified (from the cache), or still to be verified.
        std::shared_ptr<const auth::VerifiedToken> oauth;
        bool unverified = false;
    };

    // Profile tokens turn authentication on as the server's own tokens do, and so does OAuth.
    bool auth_on() const { return !opts.bearer_tokens.empty() || !mcp.view_tokens().empty() || authn; }

    // Where the Protected Resource Metadata is served: the bare well-known path, and that
    // path followed by the MCP path and by the resource identifier's path (RFC 9728 §3.1).
    std::vector<std::string> oauth_metadata_paths() const {
        const std::string base = "/.well-known/oauth-protected-resource";
        std::vector<std::string> paths{base, base + opts.path, auth::resource_metadata_path(opts.oauth.resource)};
        std::sort(paths.begin(), paths.end());
        paths.erase(std::unique(paths.begin(), paths.end()), paths.end());
        return paths;
    }

    bool is_metadata_path(std::string_view path) const {
        if (!authn || path == opts.path) return false;
        // Not for <path>/<view>: a profile's endpoint is part of the one resource (RFC 9728
        // §3.3 wants a document's `resource` to be the identifier its URL was made from).
        return std::find(metadata_paths.begin(), metadata_paths.end(), path) != metadata_paths.end();
    }

    Credential credential_of(std::string_view authorization) const {
        Credential credential;
        auto token = http_policy::bearer_token(authorization);
        if (token.empty()) return credential;
        // Every profile token is compared (constant time, no early exit). A token that is a
        // profile's and the server's too is served as the profile: a token never widens
        // what its holder sees (start() warns about it).
        for (const auto& [profile_token, view] : mcp.view_tokens()) {
            if (http_policy::same_token(profile_token, token)) credential.profile = view;
        }
        credential.valid = http_policy::token_listed(opts.bearer_tokens, token) || !credential.profile.empty();
        // A static token short-circuits; anything else may be an OAuth access token.
        if (!credential.valid && authn) {
            if (just_verified && just_verified->first == token) credential.oauth = just_verified->second;
            else credential.oauth = authn->cached(token);
            credential.valid = credential.oauth != nullptr;
            credential.unverified = !credential.valid;
        }
        return credential;
    }

    // Who is calling, for sessions, quotas and per-user caches: "" when auth is off. A
    // static token is known by its digest; an OAuth token by its issuer and subject (every
    // token of one user is the same caller), never by the token itself.
    std::string principal_of(const HttpRequestView& req, const Credential& credential) const {
        if (!auth_on() || !credential.valid) return {};
        if (credential.oauth) {
            const auto& t = *credential.oauth;
            return "oauth:" + util::sha256_hex(t.issuer + '\n' + t.subject).substr(0, 24);
        }
        return http_policy::principal_of_token(http_policy::bearer_token(req.header("Authorization")));
    }

    // The headers sources asked to see (per-user credentials), as this request has them, and
    // the scopes of its OAuth access token (none for other callers: not filtered by scope).
    void take_client_headers(const HttpRequestView& req, const Credential& credential, CallerIdentity& caller) const {
        caller.client_headers.clear();
        for (const auto& name : mcp.forwarded_client_headers()) {
            if (req.has_header(name)) caller.client_headers[name] = std::string(req.header(name));
        }
        caller.scopes.reset();
        caller.access_token.clear();
        if (credential.oauth) {
            caller.scopes = credential.oauth->scopes;
            caller.access_token = http_policy::bearer_token(req.header("Authorization"));
        }
    }

    // Why a profile's token may not have `path`, or nullopt when it may: it is served its
    // profile's MCP endpoint (at the MCP path, its own view path, legacy SSE), not another
    // profile's nor the server's own endpoints. Unknown paths get their 404 as for anyone.
    std::optional<std::string> profile_refusal(const Credential& credential, std::string_view path) const {
        if (credential.profile.empty()) return std::nullopt;
        if (path == opts.path) return std::nullopt;
        if (is_view_path(path)) {
            auto asked = path.substr(opts.path.size() + 1);
            if (asked == credential.profile) return std::nullopt;
            return fmt::format("Forbidden: this bearer token selects the gateway profile \"{}\" and is not served "
                               "the profile \"{}\" (a token never widens what its holder sees); use {} or {}/{}",
                               credential.profile, asked, opts.path, opts.path, credential.profile);
        }
        if (path != "/metrics" && path != "/health" && path != "/admin/reload") return std::nullopt;
        return fmt::format("Forbidden: this bearer token selects the gateway profile \"{}\", which is served at {} "
                           "only; {} needs one of the server's own tokens",
                           credential.profile, opts.path, path);
    }

    // /metrics and /admin/reload are the operator's. An OAuth access token is an end user's
    // unless it has auth.admin_scope: without it the answer is 403 (insufficient_scope when
    // there is a scope to ask for). The server's own tokens always reach them, a profile's
    // never (profile_refusal).
    std::optional<HttpAnswer> admin_refusal(const HttpRequestView& req, const auth::VerifiedToken& token,
                                            std::string_view path) {
        const auto& scope = opts.oauth.admin_scope;
        if (scope.empty()) {
            return rpc_error(req, 403, ec::kInvalidRequest,
                             fmt::format("Forbidden: {} is for the server's operators: it needs one of the server's "
                                         "own bearer tokens (OAuth access tokens reach it only with the scope named "
                                         "by auth.admin_scope, and none is set)",
                                         path));
        }
        if (auth::missing_scopes(token.scopes, {scope}).empty()) return std::nullopt;
        return insufficient_scope(req, token, auth::scope_union(scopes_for_path(req), {scope}),
                                  fmt::format("Forbidden: {} is for the server's operators: the access token lacks "
                                              "the scope {}",
                                              path, scope));
    }

    // The view a request is served: its profile token's, else the one its URL chose
    // ("cursor" for <path>/cursor, "" for <path>).
    std::string view_of(const HttpRequestView& req, const Credential& credential) const {
        if (!credential.profile.empty()) return credential.profile;
        auto target = req.target();
        auto path = target.substr(0, target.find('?'));
        if (path.size() <= opts.path.size() + 1 || path.compare(0, opts.path.size(), opts.path) != 0) return {};
        return std::string(path.substr(opts.path.size() + 1));
    }

    // <path>/<view> for a view the server has (a gateway profile).
    bool is_view_path(std::string_view path) const {
        if (path.size() <= opts.path.size() + 1 || path.compare(0, opts.path.size(), opts.path) != 0 ||
            path[opts.path.size()] != '/') {
            return false;
        }
        auto name = path.substr(opts.path.size() + 1);
        return name.find('/') == std::string_view::npos && mcp.has_view(std::string(name));
    }

    std::shared_ptr<HttpSession> create_session(bool legacy, std::string principal, std::string view = {},
                                                std::string id = {}) {
        auto s = std::make_shared<HttpSession>(id.empty() ? random_session_id() : std::move(id),
                                               opts.max_replay_events, opts.max_replay_bytes);
        s->legacy = legacy;
        s->principal = principal;
        s->view = view;
        s->created = s->last_active = executor.now();
        std::weak_ptr<HttpSession> weak = s;
        s->mcp = mcp.open_session(
            [weak](const Json& message, const protocol::RequestId* related) {
                if (auto hs = weak.lock()) hs->route(message, related);
            },
            CallerIdentity{.principal = std::move(principal), .session_id = s->id(), .view = std::move(view)});
        s->mcp->set_stream_closer([weak](const protocol::RequestId& id) {
            if (auto hs = weak.lock()) hs->close_stream(id);
        });
        s->mcp->set_unanswered_listener([weak](const protocol::RequestId& id, const std::string& reason) {
            if (auto hs = weak.lock()) hs->request_ended(id, reason);
        });
        // Shared from the start while Redis is there; a session created while it is away
        // stays on this replica for its life.
        if (!legacy && shared && shared->ready()) share(*s);
        sessions.emplace(s->id(), s);
        sessions_changed();
        return s;
    }

    // Ends a session: its open responses are answered with an error naming `reason`, its
    // streams end, its requests are cancelled.
    void drop_session(std::string_view id, const std::string& reason) {
        auto it = sessions.find(id);
        if (it == sessions.end()) return;
        auto session = std::move(it->second);
        sessions.erase(it);
        sessions_changed();
        session->end(reason);
        session->mcp->close();
    }

    // The session `id` names, if it exists, serves this transport and belongs to the
    // caller (a session is bound to the credential that created it; anyone else gets 404,
    // as if it did not exist).
    std::shared_ptr<HttpSession> find_session(std::string_view id, const HttpRequestView& req,
                                              const Credential& credential, bool legacy) {
        auto it = sessions.find(id);
        if (it == sessions.end() || it->second->legacy != legacy) return nullptr;
        if (!legacy && it->second->view != view_of(req, credential)) return nullptr;  // another URL's session
        if (!it->second->principal.empty() || auth_on()) {
            if (principal_of(req, credential) != it->second->principal) return nullptr;
        }
        return it->second;
    }

    // ------------------------------------------------------------------ shared sessions
    //
    // With `sessions: shared` a Streamable HTTP session is a record in Redis that any replica
    // takes over on its first request there (adopt), and keeps a copy of: changes are saved
    // before they are acknowledged and announced to the others, which apply them; messages
    // for the GET stream go through the bus to whichever replica holds it, numbered by Redis
    // so that Last-Event-ID resumes on any replica. A replica that stops or dies takes
    // nothing with it; DELETE ends the session everywhere; idle expiry is Redis's.

    bool may_adopt() const { return shared && !skip_adoption && !stopping && shared->ready(); }

    void share(HttpSession& s) {
        s.shared = true;
        s.touched = executor.now();
        s.mcp->number_requests_after(request_id_base);
        s.number_streams_after(static_cast<std::uint64_t>(request_id_base >> 32) << 24);
        std::weak_ptr<State> weak = weak_from_this();
        s.standalone_sink = [weak, sid = s.id()](std::string data) {
            if (auto self = weak.lock()) self->publish_standalone(sid, std::move(data));
        };
    }

    static stores::SharedSessionState snapshot(const HttpSession& s) {
        stores::SharedSessionState st;
        st.id = s.id();
        st.principal = s.principal;
        st.view = s.view;
        st.revision = std::string(protocol::name(s.mcp->revision()));
        st.client_capabilities = s.mcp->client_capabilities();
        st.client_info = s.mcp->client_info();
        st.log_level = std::string(to_string(s.mcp->log_level()));
        st.subscriptions.assign(s.mcp->subscriptions().begin(), s.mcp->subscriptions().end());
        return st;
    }

    static void apply(HttpSession& s, const stores::SharedSessionState& st) {
        auto revision = protocol::parse_revision(st.revision);
        auto level = parse_log_level(st.log_level);
        s.mcp->restore(revision ? *revision : protocol::kLatestStateful, st.client_capabilities, st.client_info,
                       level ? *level : LogLevel::debug,
                       std::set<std::string>(st.subscriptions.begin(), st.subscriptions.end()));
    }

    std::shared_ptr<DeferredAnswer> make_deferred() {
        std::weak_ptr<State> weak = weak_from_this();
        return std::make_shared<DeferredAnswer>([weak] {
            auto self = weak.lock();
            return !self || self->stopping;
        });
    }

    static HttpAnswer deferred_answer(std::shared_ptr<DeferredAnswer> deferred) {
        HttpAnswer answer;
        answer.pending = std::move(deferred);
        return answer;
    }

    // The session is not here: look it up in Redis, take it over, and answer the request then.
    HttpAnswer adopt(const HttpRequestView& req, const Credential& credential, std::string sid) {
        auto deferred = make_deferred();
        spawn(adopt_then_answer(shared_from_this(), deferred, std::make_shared<OwnedRequest>(req),
                                principal_of(req, credential), view_of(req, credential), std::move(sid)),
              [deferred](std::exception_ptr error) {
                  if (error) deferred->resolve({});
              });
        return deferred_answer(deferred);
    }
    static Task<void> adopt_then_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                        std::shared_ptr<OwnedRequest> req, std::string principal, std::string view,
                                        std::string sid);

    // An OAuth token not in the verified cache: verify it (the key set may have to be
    // fetched), then answer the request again, or refuse it.
    HttpAnswer verify_then_answer(const HttpRequestView& req) {
        auto deferred = make_deferred();
        spawn(verify_and_answer(shared_from_this(), deferred, std::make_shared<OwnedRequest>(req)),
              [deferred](std::exception_ptr error) {
                  if (error) deferred->resolve({});
              });
        return deferred_answer(deferred);
    }
    static Task<void> verify_and_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                        std::shared_ptr<OwnedRequest> req);

    // 401 for a request without a usable token: the challenge points at the metadata.
    HttpAnswer unauthorized(const HttpRequestView& req, bool token_refused, std::string_view why) {
        auto body = protocol::serialize(protocol::make_error(nullptr, ec::kInvalidRequest, why));
        std::string challenge;
        if (authn) {
            challenge = auth::bearer_challenge(metadata_url, scopes_for_path(req),
                                               token_refused ? "invalid_token" : "");
        } else {
            challenge = token_refused ? "Bearer realm=\"toolport\", error=\"invalid_token\"" : "Bearer realm=\"toolport\"";
        }
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 401,
                                             {{"Content-Type", "application/json"}, {"WWW-Authenticate", challenge}},
                                             std::move(body)));
    }

    // The scopes every request at this request's path needs: the server's required scopes,
    // and a profile's own at <path>/<profile>.
    std::vector<std::string> scopes_for_path(const HttpRequestView& req) const {
        auto target = req.target();
        auto path = target.substr(0, target.find('?'));
        if (!is_view_path(path)) return opts.oauth.required_scopes;
        return auth::scope_union(opts.oauth.required_scopes,
                                 opts.oauth.scopes.for_profile(path.substr(opts.path.size() + 1)));
    }

    // 403 insufficient_scope (RFC 6750 §3.1): the challenge names every scope the request
    // needs, those the token has included, so that a client asking for exactly these gets
    // a token that does all it did before and this too (MCP's step-up rule).
    HttpAnswer insufficient_scope(const HttpRequestView& req, const auth::VerifiedToken& token,
                                  const std::vector<std::string>& needed, const std::string& why) {
        auto body = protocol::serialize(protocol::make_error(nullptr, ec::kInvalidRequest, why));
        auto challenge = auth::bearer_challenge(metadata_url, auth::scope_union(token.scopes, needed), "insufficient_scope");
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 403,
                                             {{"Content-Type", "application/json"}, {"WWW-Authenticate", challenge}},
                                             std::move(body)));
    }

    // A POST's tools/call of a tool whose scopes the caller's OAuth token lacks is refused
    // whole, before any of it runs, with the step-up challenge. Tools outside the caller's
    // view, unknown tools and callers without OAuth tokens are left to the session.
    std::optional<HttpAnswer> tool_scope_refusal(const HttpRequestView& req, const Credential& credential,
                                                 const PostBody& body) {
        if (!credential.oauth || !mcp.scope_policy()) return std::nullopt;
        std::string view;
        std::vector<std::string> needed, missing_all;
        std::string tools;
        for (const auto& item : body.parsed.items) {
            const auto* m = std::get_if<protocol::Message>(&item);
            const auto* r = m ? std::get_if<protocol::Request>(m) : nullptr;
            if (!r || r->method != "tools/call" || !r->params.is_object()) continue;
            auto name = r->params.find("name");
            if (name == r->params.end() || !name->is_string()) continue;
            auto tool = mcp.registry().tool_ptr(name->get<std::string>());
            if (!tool) continue;
            if (view.empty()) view = view_of(req, credential);
            if (!mcp.in_view(view, *tool)) continue;
            auto tool_needs = mcp.tool_scopes(*tool);
            auto missing = auth::missing_scopes(credential.oauth->scopes, tool_needs);
            if (missing.empty()) continue;
            needed = auth::scope_union(needed, tool_needs);
            missing_all = auth::scope_union(missing_all, missing);
            tools += (tools.empty() ? "" : ", ") + util::sanitize_for_message(tool->name, 128);
        }
        if (missing_all.empty()) return std::nullopt;
        return insufficient_scope(req, *credential.oauth, auth::scope_union(scopes_for_path(req), needed),
                                  fmt::format("Forbidden: the access token lacks the scope(s) {} needed to call {}",
                                              auth::join_scopes(missing_all), tools));
    }

    // GET /.well-known/oauth-protected-resource[/path] (RFC 9728), served without a token.
    HttpAnswer metadata_answer(const HttpRequestView& req) {
        if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
        auto doc = auth::protected_resource_metadata(opts.oauth.resource, {opts.oauth.issuer},
                                                     opts.oauth.scopes_supported);
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                             {{"Content-Type", "application/json"}, {"Cache-Control", "max-age=300"}},
                                             doc.dump()));
    }

    // Answers once the session's state is in Redis (or Redis failed: then it is marked to
    // be written again when Redis is back).
    HttpAnswer save_before(std::shared_ptr<HttpSession> session, HttpAnswer answer) {
        auto deferred = make_deferred();
        spawn(save_then_answer(shared_from_this(), deferred, std::move(session), std::move(answer)),
              [deferred](std::exception_ptr error) {
                  if (error) deferred->resolve({});
              });
        return deferred_answer(deferred);
    }
    static Task<void> save_then_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                       std::shared_ptr<HttpSession> session, HttpAnswer answer);

    HttpAnswer remove_everywhere(std::string sid, HttpAnswer answer) {
        auto deferred = make_deferred();
        spawn(remove_then_answer(shared_from_this(), deferred, std::move(sid), std::move(answer)),
              [deferred](std::exception_ptr error) {
                  if (error) deferred->resolve({});
              });
        return deferred_answer(deferred);
    }
    static Task<void> remove_then_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                         std::string sid, HttpAnswer answer);

    void publish_standalone(const std::string& sid, std::string data) {
        spawn(publish_event(shared_from_this(), sid, std::move(data)), [](std::exception_ptr) {});
    }
    static Task<void> publish_event(std::shared_ptr<State> self, std::string sid, std::string data);

    // Fills the session's (fresh) GET stream from the event log; live events wait meanwhile.
    void catch_up(const std::shared_ptr<HttpSession>& session, std::uint64_t after) {
        session->catching_up = true;
        session->held.clear();
        spawn(catch_up_events(shared_from_this(), session, after), [](std::exception_ptr) {});
    }
    static Task<void> catch_up_events(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session,
                                      std::uint64_t after);

    // Pushes the session's expiry in Redis (at most every quarter of the idle timeout), or
    // writes it again if a change could not be.
    void keep_alive_shared(HttpSession& s) {
        if (!shared->ready()) return;
        auto now = executor.now();
        if (!s.dirty && now - s.touched < opts.session_idle_timeout / 4) return;
        s.touched = now;
        auto session = sessions.find(s.id());
        if (session == sessions.end()) return;
        spawn(refresh(shared_from_this(), session->second), [](std::exception_ptr) {});
    }
    static Task<void> refresh(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session);

    // Checks the local copy against Redis (after the bus missed messages): gone there, it
    // goes here; changed there, it changes here.
    static Task<void> revalidate(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session);

    void shared_housekeeping() {
        if (!shared->ready()) return;
        const auto started = shared->subscriptions_started();
        const bool missed = started != subscriptions_seen;
        subscriptions_seen = started;
        std::vector<std::shared_ptr<HttpSession>> shared_sessions;
        for (auto& [id, s] : sessions) {
            if (s->shared) shared_sessions.push_back(s);
        }
        for (auto& s : shared_sessions) {
            if (missed && !s->dirty) spawn(revalidate(shared_from_this(), s), [](std::exception_ptr) {});
            else if (s->dirty || s->busy()) keep_alive_shared(*s);  // a GET stream held here keeps it alive
        }
    }

    // A client's reply to a request another replica sent, or its cancellation of a request
    // another replica serves, goes there through the bus (taken out of `messages`).
    void relay_foreign(HttpSession& s, std::vector<protocol::Message>& messages) {
        for (auto it = messages.begin(); it != messages.end();) {
            if (s.mcp->owns_client_message(*it)) {
                ++it;
                continue;
            }
            Json json = std::visit(
                [](const auto& m) -> Json {
                    using M = std::decay_t<decltype(m)>;
                    if constexpr (std::is_same_v<M, protocol::Response>) return protocol::make_response(m.id, m.result);
                    else if constexpr (std::is_same_v<M, protocol::ErrorResponse>)
                        return protocol::make_error(m.id, m.code, m.message, m.data);
                    else if constexpr (std::is_same_v<M, protocol::Notification>)
                        return protocol::make_notification(m.method, m.params);
                    else return nullptr;
                },
                *it);
            spawn(relay_message(shared_from_this(), s.id(), protocol::serialize(json)), [](std::exception_ptr) {});
            it = messages.erase(it);
        }
    }
    static Task<void> relay_message(std::shared_ptr<State> self, std::string sid, std::string message);

    // A shared session's response stream, once it is an event stream, is mirrored to Redis
    // (every event, then its end), so the client can resume it on any replica.
    void mirror_stream(const std::string& sid, const std::shared_ptr<OutStream>& out) {
        std::weak_ptr<State> weak = weak_from_this();
        out->set_mirror([weak, sid, stream = out->id()](std::uint64_t seq, const std::string& data) {
            auto self = weak.lock();
            if (!self || self->stopping) return;
            spawn(self->shared->publish_stream_event(sid, stream, seq, data, self->opts.max_replay_events,
                                                     self->opts.session_idle_timeout),
                  [sid](std::exception_ptr error) {
                      if (error) spdlog::debug("session {}…: a response stream event was not mirrored", sid.substr(0, 8));
                  });
        });
    }

    HttpAnswer resume_remote(const HttpRequestView& req, const std::shared_ptr<HttpSession>& session,
                             std::uint64_t stream, std::uint64_t after) {
        session->resume_remote_stream(stream, after);  // live events wait in it from now on
        auto deferred = make_deferred();
        spawn(resume_remote_then_answer(shared_from_this(), deferred, std::make_shared<OwnedRequest>(req), session,
                                        stream, after),
              [deferred](std::exception_ptr error) {
                  if (error) deferred->resolve({});
              });
        return deferred_answer(deferred);
    }
    static Task<void> resume_remote_then_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                                std::shared_ptr<OwnedRequest> req,
                                                std::shared_ptr<HttpSession> session, std::uint64_t stream,
                                                std::uint64_t after);

    void on_bus(stores::SessionBusMessage m) {
        if (stopping) return;
        auto it = sessions.find(m.session_id);
        if (it == sessions.end() || !it->second->shared) return;
        auto session = it->second;
        switch (m.kind) {
            case stores::SessionBusMessage::Kind::changed:
                if (m.origin == shared->replica()) return;
                if (auto st = stores::SharedSessionState::from_json_text(m.data)) apply(*session, *st);
                return;
            case stores::SessionBusMessage::Kind::ended:
                drop_session(m.session_id, "the session was ended on another replica");
                return;
            case stores::SessionBusMessage::Kind::event:
                if (!session->has_standalone()) return;  // no GET stream was ever opened here
                if (session->catching_up) session->held.emplace_back(m.seq, std::move(m.data));
                else session->standalone()->push_numbered(m.seq, std::move(m.data));
                return;
            case stores::SessionBusMessage::Kind::stream: {
                if (m.origin == shared->replica()) return;
                auto remote = session->remote_streams.find(m.stream);
                auto out = session->find_stream(m.stream);
                if (remote == session->remote_streams.end() || !out) return;  // not resumed here
                if (remote->second.catching_up) remote->second.held.emplace_back(m.seq, std::move(m.data));
                else if (m.seq == 0) out->end();
                else out->push_numbered(m.seq, std::move(m.data));
                return;
            }
            case stores::SessionBusMessage::Kind::relay: {
                if (m.origin == shared->replica()) return;
                auto parsed = protocol::parse_payload(m.data, protocol::ParseLimits{});
                if (parsed.fatal || parsed.is_batch || parsed.items.size() != 1) return;
                auto* message = std::get_if<protocol::Message>(&parsed.items.front());
                if (message && !std::holds_alternative<protocol::Request>(*message) &&
                    session->mcp->owns_client_message(*message)) {
                    session->mcp->receive(std::move(*message));
                }
                return;
            }
            case stores::SessionBusMessage::Kind::task:
                return;  // the task engine's (app/serve.cpp)
        }
    }

    // ------------------------------------------------------------------ replies

    static HttpReply json_reply(const HttpRequestView& req, unsigned status, std::string body,
                                std::string_view session_id = {}) {
        if (session_id.empty()) {
            return format_reply(req.version(), req.keep_alive(), status, {{"Content-Type", "application/json"}},
                                std::move(body));
        }
        return format_reply(req.version(), req.keep_alive(), status,
                            {{"Content-Type", "application/json"}, {"Mcp-Session-Id", session_id}}, std::move(body));
    }

    // The answer to write: counted now, written by the connection.
    static HttpAnswer answer_with(const HttpRequestView& req, HttpReply reply) {
        count_request(req.method(), reply.status);
        HttpAnswer answer;
        answer.reply = std::move(reply);
        return answer;
    }

    static HttpAnswer rpc_error(const HttpRequestView& req, unsigned status, int code, std::string_view message,
                                const Json& id = nullptr) {
        return answer_with(req, json_reply(req, status, protocol::serialize(protocol::make_error(id, code, message))));
    }

    static HttpAnswer empty(const HttpRequestView& req, unsigned status) {
        return answer_with(req, format_reply(req.version(), req.keep_alive(), status, {}, {}));
    }

    // ------------------------------------------------------------------ routing

    HttpAnswer answer(const HttpRequestView& req) {
        if (stopping) return {};
        auto target = req.target();
        auto path = target.substr(0, target.find('?'));
        // The MCP endpoint wins if it was configured at one of these paths.
        const bool is_metrics = opts.metrics_endpoint && path == "/metrics" && path != opts.path;
        const bool is_health = opts.health_endpoint && opts.health_report && path == "/health" && path != opts.path;
        const bool is_reload = opts.reload && path == "/admin/reload" && path != opts.path;

        // RFC 9112 §3.2: an HTTP/1.1 request without Host is answered 400, and so is any
        // request with more than one Host, or with an empty one (which no check could pass).
        if (req.version() >= 11 && !req.has_header("Host")) {
            return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: HTTP/1.1 requests need a Host header");
        }
        if (auto refusal = host_header_refusal(req)) return rpc_error(req, 400, ec::kInvalidRequest, *refusal);
        // DNS-rebinding protection applies to every endpoint, authentication to every
        // endpoint but a public /health.
        if (!http_policy::host_allowed(opts, req.header("Host"))) {
            return rpc_error(req, 403, ec::kInvalidRequest, "Forbidden: Host header not allowed");
        }
        if (!http_policy::origin_allowed(opts, req.header("Origin"))) {
            return rpc_error(req, 403, ec::kInvalidRequest, "Forbidden: Origin not allowed");
        }
        if (is_metadata_path(path)) return metadata_answer(req);
        const auto credential = auth_on() ? credential_of(req.header("Authorization")) : Credential{.valid = true};
        if (!(is_health && opts.public_health) && !credential.valid) {
            // An OAuth token seen for the first time: answered once it is verified.
            if (credential.unverified) return verify_then_answer(req);
            return unauthorized(req, req.has_header("Authorization"),
                                "Unauthorized: send Authorization: Bearer <token>");
        }
        if (!(is_health && opts.public_health) && credential.oauth) {
            // The server's required scopes, and a profile's at its URL.
            auto needed = scopes_for_path(req);
            if (auto missing = auth::missing_scopes(credential.oauth->scopes, needed); !missing.empty()) {
                return insufficient_scope(req, *credential.oauth, needed,
                                          "Forbidden: the access token lacks the needed scope(s): " +
                                              auth::join_scopes(missing));
            }
        }
        if (!(is_health && opts.public_health)) {
            if (auto refusal = profile_refusal(credential, path)) {
                return rpc_error(req, 403, ec::kInvalidRequest, *refusal);
            }
        }
        if ((is_metrics || is_reload) && credential.oauth) {
            if (auto refusal = admin_refusal(req, *credential.oauth, path)) return std::move(*refusal);
        }

        if (is_metrics || is_health) return observability_answer(req, is_metrics);
        if (is_reload) return reload_answer(req);
        if (path == opts.path || is_view_path(path)) {
            switch (req.method()) {
                case HttpMethod::post: return handle_post(req, credential);
                case HttpMethod::get: return handle_get(req, credential);
                case HttpMethod::delete_: return handle_delete(req, credential);
                default: return method_not_allowed(req, "Method Not Allowed", "GET, POST, DELETE");
            }
        }
        if (opts.legacy_sse && path == "/sse" && req.method() == HttpMethod::get) return handle_legacy_sse(req, credential);
        if (opts.legacy_sse && path == "/messages" && req.method() == HttpMethod::post) return handle_legacy_post(req, credential);
        return rpc_error(req, 404, ec::kInvalidRequest, fmt::format("Not Found: the MCP endpoint is {}", opts.path));
    }

    // Why a request's Host header fields are not one non-empty value, or nullopt when they
    // are (or there is none: HTTP/1.0).
    static std::optional<std::string_view> host_header_refusal(const HttpRequestView& req) {
        int hosts = 0;
        bool empty = false;
        req.for_each_header([&](std::string_view name, std::string_view value) {
            if (name.size() != 4 || strncasecmp(name.data(), "host", 4) != 0) return;
            ++hosts;
            empty = empty || value.find_first_not_of(" \t") == std::string_view::npos;
        });
        if (hosts > 1) return "Bad Request: more than one Host header";
        if (empty) return "Bad Request: the Host header is empty";
        return std::nullopt;
    }

    static HttpAnswer method_not_allowed(const HttpRequestView& req, std::string_view message, std::string_view allow) {
        auto body = protocol::serialize(protocol::make_error(nullptr, ec::kInvalidRequest, message));
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 405,
                                             {{"Content-Type", "application/json"}, {"Allow", allow}}, std::move(body)));
    }

    // GET /metrics (Prometheus text format 0.0.4) and GET /health (the health report).
    HttpAnswer observability_answer(const HttpRequestView& req, bool metrics) {
        if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
        // Both describe this moment: a cached copy would be wrong.
        if (metrics) {
            return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                                 {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"},
                                                  {"Cache-Control", "no-store"}},
                                                 observability::metrics().render()));
        }
        auto [status, body] = health_response();
        return answer_with(req, format_reply(req.version(), req.keep_alive(), static_cast<unsigned>(status),
                                             {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                             std::move(body)));
    }

    // POST /admin/reload. Without authentication the check above let everyone in: then only
    // a loopback listener serves it, so an open port is never an unauthenticated admin door.
    // 202 when this request started a reload; 200 with Retry-After when it was answered with
    // the running (or last) one's outcome instead (reload.min_interval_s).
    HttpAnswer reload_answer(const HttpRequestView& req) {
        if (req.method() != HttpMethod::post) return method_not_allowed(req, "Method Not Allowed: use POST", "POST");
        if (!auth_on() && !http_policy::is_loopback_host(opts.host)) {
            return rpc_error(req, 403, ec::kInvalidRequest,
                             "Forbidden: /admin/reload needs bearer authentication when not listening on loopback");
        }
        AdminReload outcome;
        try {
            outcome = opts.reload();
        } catch (const std::exception& e) {
            spdlog::error("reload failed: {}", util::sanitize_for_message(e.what()));
            return rpc_error(req, 500, ec::kInternalError, "the reload could not be started");
        }
        if (outcome.started) {
            return answer_with(req, format_reply(req.version(), req.keep_alive(), 202,
                                                 {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                                 std::move(outcome.body)));
        }
        const auto retry_after = std::to_string(std::max<long long>(outcome.retry_after.count(), 1));
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                             {{"Content-Type", "application/json"},
                                              {"Cache-Control", "no-store"},
                                              {"Retry-After", retry_after}},
                                             std::move(outcome.body)));
    }

    // /health is public (http.public_health): the states sources report are free text, and a
    // URL in one (an upstream's, a document's) loses its userinfo and query, where keys go.
    static std::string public_report(std::string body) {
        auto report = Json::parse(body, nullptr, false);
        if (report.is_discarded()) return body;
        auto scrub = [](auto& self, Json& value) -> void {
            if (value.is_string()) value = http_policy::public_text(value.get_ref<const std::string&>());
            else if (value.is_structured())
                for (auto& child : value) self(self, child);
        };
        scrub(scrub, report);
        return report.dump(-1, ' ', false, Json::error_handler_t::replace);
    }

    // The health report from the application; a report that cannot be made is itself a
    // sign of trouble (500), never a reason to drop the connection.
    std::pair<int, std::string> health_response() {
        try {
            auto [status, body] = opts.health_report();
            if (status < 100 || status > 599) throw std::runtime_error(fmt::format("HTTP status {} out of range", status));
            return {status, public_report(std::move(body))};
        } catch (const std::exception& e) {
            spdlog::error("health report failed: {}", util::sanitize_for_message(e.what()));
        } catch (...) {
            spdlog::error("health report failed with a non-standard exception");
        }
        return {500, R"({"status":"unhealthy","error":"the health report failed"})"};
    }

    // ------------------------------------------------------------------ POST

    // Reads the body into messages; on failure returns the answer to send.
    std::optional<HttpAnswer> read_post_body(const HttpRequestView& req, PostBody& body) {
        if (!http_policy::is_json_content_type(req.header("Content-Type"))) {
            return rpc_error(req, 415, ec::kInvalidRequest,
                             "Unsupported Media Type: Content-Type must be application/json");
        }
        protocol::ParseLimits limits;
        limits.max_depth = opts.max_json_depth;
        limits.max_batch_size = opts.max_batch_size;
        body.parsed = protocol::parse_payload(req.body(), limits);
        body.traceparent = std::string(req.header("traceparent"));
        if (body.parsed.fatal) {
            return rpc_error(req, 400, body.parsed.fatal->code, body.parsed.fatal->message, body.parsed.fatal->id);
        }
        for (const auto& item : body.parsed.items) {
            const auto* m = std::get_if<protocol::Message>(&item);
            if (!m) body.has_errors = true;
            const auto* r = m ? std::get_if<protocol::Request>(m) : nullptr;
            if (!r) continue;
            body.has_requests = true;
            if (r->method == "initialize") body.has_initialize = true;
            if (!body.first_request) body.first_request = r;
        }
        return std::nullopt;
    }

    // Splits a Streamable HTTP POST for `session`: a request whose id is already waiting
    // for a reply (earlier in this batch, or from another POST) is answered here with an
    // error instead of being run, as is every malformed member of a batch.
    static SortedPost sort_post(PostBody& body, const HttpSession& session) {
        SortedPost sorted;
        std::unordered_set<std::string> seen;
        for (auto& item : body.parsed.items) {
            if (auto* error = std::get_if<protocol::ProtocolError>(&item)) {
                sorted.local_replies.push_back(
                    protocol::serialize(protocol::make_error(error->id, error->code, error->message)));
                continue;
            }
            auto& message = std::get<protocol::Message>(item);
            if (auto* r = std::get_if<protocol::Request>(&message)) {
                auto key = protocol::id_key(r->id);
                const bool in_batch = body.parsed.is_batch && seen.count(key) > 0;
                if (in_batch || session.awaits_reply(key)) {
                    sorted.local_replies.push_back(protocol::serialize(protocol::make_error(
                        r->id, ec::kInvalidRequest,
                        in_batch ? "Invalid Request: another request in this batch has the same id"
                                 : "Invalid Request: a request with this id is still in progress; use a new id")));
                    continue;
                }
                if (body.parsed.is_batch) seen.insert(std::move(key));  // one message: nothing to repeat
                sorted.request_ids.push_back(r->id);
            }
            http_policy::attach_traceparent(message, body.traceparent);
            sorted.to_feed.push_back(std::move(message));
        }
        return sorted;
    }

    // Hands every message of `body` to `session` as it is (malformed ones are answered by
    // the session, on its own stream: the legacy transport and the stateless revision).
    static void feed_all(ServerSession& session, PostBody& body) {
        for (auto& item : body.parsed.items) {
            if (auto* error = std::get_if<protocol::ProtocolError>(&item)) {
                session.reject(*error);
            } else {
                auto& message = std::get<protocol::Message>(item);
                http_policy::attach_traceparent(message, body.traceparent);
                session.receive(std::move(message));
            }
        }
    }

    HttpAnswer handle_post(const HttpRequestView& req, const Credential& credential) {
        PostBody body;
        if (auto error = read_post_body(req, body)) return std::move(*error);
        // One message that is not JSON-RPC: answered on this POST (a GET stream may not exist).
        if (!body.parsed.is_batch) {
            if (auto* error = std::get_if<protocol::ProtocolError>(&body.parsed.items.front())) {
                return rpc_error(req, 400, error->code, error->message, error->id);
            }
        }
        if (auto refusal = tool_scope_refusal(req, credential, body)) return std::move(*refusal);
        const bool answers_needed = body.has_requests || body.has_errors;
        if (answers_needed && !(http_policy::accepts(req.header("Accept"), "text/event-stream") &&
                                http_policy::accepts(req.header("Accept"), "application/json"))) {
            return rpc_error(req, 406, ec::kInvalidRequest,
                             "Not Acceptable: Accept must list both application/json and text/event-stream");
        }

        // The stateless revision: the version travels in the request's _meta.
        if (body.first_request && !body.parsed.is_batch) {
            auto meta = read_stateless_meta(body.first_request->params);
            auto header_version = protocol::parse_revision(req.header("MCP-Protocol-Version"));
            if ((meta.present && (!meta.revision || protocol::is_stateless(*meta.revision))) ||
                (!meta.present && header_version && protocol::is_stateless(*header_version))) {
                return handle_stateless_post(req, credential, body, meta);
            }
        }

        auto version = http_policy::read_version_header(req.header("MCP-Protocol-Version"),
                                                        req.has_header("MCP-Protocol-Version"));
        if (version.present && !version.revision) {
            return rpc_error(req, 400, ec::kInvalidRequest,
                             fmt::format("Bad Request: unsupported MCP-Protocol-Version \"{}\"; supported: {}",
                                         util::sanitize_for_message(req.header("MCP-Protocol-Version"), 40),
                                         protocol::supported_revisions_list()));
        }

        auto session_id = req.header("Mcp-Session-Id");
        if (!session_id.empty() && !http_policy::valid_session_id(session_id)) {
            return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: malformed Mcp-Session-Id header");
        }
        if (session_id.empty() && !body.has_requests && !body.has_errors && !body.has_initialize &&
            version.revision && protocol::is_stateless(*version.revision)) {
            // A notification in the stateless revision has no session to reach; over HTTP it
            // means nothing (a client cancels by closing the request's stream), so it is
            // accepted and dropped, as JSON-RPC lets a receiver do with a notification.
            return empty(req, 202);
        }
        std::shared_ptr<HttpSession> session;
        bool created = false;
        if (body.has_initialize) {
            if (body.parsed.is_batch) {
                return rpc_error(req, 400, ec::kInvalidRequest, "Invalid Request: initialize must not be batched");
            }
            if (!session_id.empty()) {
                session = find_session(session_id, req, credential, false);
                if (!session && may_adopt()) return adopt(req, credential, std::string(session_id));
                if (!session) {
                    return rpc_error(req, 404, ec::kInvalidRequest,
                                     "Session not found: initialize without Mcp-Session-Id to start a new session");
                }
                // The session answers "already initialized".
            } else {
                if (sessions.size() >= opts.max_sessions) {
                    return rpc_error(req, 503, ec::kInvalidRequest,
                                     fmt::format("Service Unavailable: the server already holds {} sessions; retry "
                                                 "later or end unused sessions with DELETE",
                                                 opts.max_sessions));
                }
                session = create_session(false, principal_of(req, credential), view_of(req, credential));
                created = true;
            }
        } else {
            if (session_id.empty()) {
                return rpc_error(req, 400, ec::kInvalidRequest,
                                 "Bad Request: Mcp-Session-Id header is required (initialize first)");
            }
            session = find_session(session_id, req, credential, false);
            if (!session && may_adopt()) return adopt(req, credential, std::string(session_id));
            if (!session) {
                return rpc_error(req, 404, ec::kInvalidRequest,
                                 "Session not found: it expired or was ended; initialize a new session");
            }
        }
        session->last_active = executor.now();
        if (!created) session->established = true;
        if (session->shared) keep_alive_shared(*session);
        take_client_headers(req, credential, session->mcp->caller());

        if (body.parsed.is_batch &&
            (!session->mcp->initialized() || !protocol::allows_batches(session->mcp->revision()))) {
            auto refusal = batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision())
                                                                     : std::nullopt);
            return rpc_error(req, 400, refusal.code, refusal.message);
        }

        auto sorted = sort_post(body, *session);
        if (session->shared) relay_foreign(*session, sorted.to_feed);
        if (sorted.request_ids.empty()) {
            for (auto& message : sorted.to_feed) session->mcp->receive(std::move(message));
            if (sorted.local_replies.empty()) return empty(req, 202);  // only notifications and responses
            // Nothing to run, only errors to answer: the request id reused, or a batch of
            // malformed members.
            std::string reply = std::move(sorted.local_replies.front());
            if (body.parsed.is_batch) {
                for (std::size_t i = 1; i < sorted.local_replies.size(); ++i) reply += "," + sorted.local_replies[i];
                reply = "[" + reply + "]";
            }
            return answer_with(req, json_reply(req, 400, std::move(reply)));
        }

        const bool state_changes =
            session->shared && std::any_of(sorted.to_feed.begin(), sorted.to_feed.end(), [](const auto& m) {
                const auto* r = std::get_if<protocol::Request>(&m);
                return r && changes_session_state(r->method);
            });
        auto out = session->open_stream(sorted.request_ids);
        for (auto& reply : sorted.local_replies) out->push_local_reply(std::move(reply));
        for (auto& message : sorted.to_feed) session->mcp->receive(std::move(message));
        std::string sid = session->id();
        // Once the replies are out: a session whose initialize failed is not kept, nor a
        // stream nobody can need to resume.
        std::weak_ptr<State> weak = weak_from_this();
        auto after = [weak, session, out, created, sid]() {
            auto self = weak.lock();
            if (!self || self->stopping) return;
            if (created && !session->mcp->initialized()) self->drop_session(sid, "its initialize failed");
            else if (out->fully_delivered()) session->drop_stream(out->id());
        };
        auto answer = write_stream(req, out, body.parsed.is_batch, sid, true, std::move(after), nullptr);
        // A new or changed shared session is answered once Redis has its state, so the
        // client's next request finds it on any replica.
        if (state_changes && session->mcp->initialized()) return save_before(session, std::move(answer));
        return answer;
    }

    HttpAnswer handle_stateless_post(const HttpRequestView& req, const Credential& credential, PostBody& body,
                                     const StatelessMeta& meta) {
        if (auto problem = check_headers(req, body, meta)) {
            return answer_with(req, json_reply(req, static_cast<unsigned>(problem->http_status),
                                               protocol::serialize(problem->body)));
        }
        auto out = std::make_shared<OutStream>(1, opts.max_replay_events, opts.max_replay_bytes);
        out->expect_reply(protocol::id_key(body.first_request->id));
        std::weak_ptr<OutStream> weak = out;
        auto session = mcp.open_session(
            [weak](const Json& message, const protocol::RequestId* related) {
                auto s = weak.lock();
                if (!s) return;
                std::string key = related ? related->dump() : std::string();
                s->push(protocol::serialize(message), related && !message.contains("method") ? &key : nullptr);
            },
            CallerIdentity{.principal = principal_of(req, credential), .view = view_of(req, credential)});
        take_client_headers(req, credential, session->caller());
        session->set_unanswered_listener([weak](const protocol::RequestId& id, const std::string& reason) {
            if (auto s = weak.lock()) s->end_request(protocol::id_key(id), cancelled_reply(id, reason));
        });
        feed_all(*session, body);
        // Closing the connection early is cancellation in this revision.
        auto close = [session]() { session->close(); };
        return write_stream(req, out, false, "", false, close, close);
    }

    // The 2026-07-28 HTTP rules (version header vs _meta, Mcp-Method/Mcp-Name/Mcp-Param-*).
    std::optional<HeaderProblem> check_headers(const HttpRequestView& req, const PostBody& body,
                                               const StatelessMeta& meta) {
        StatelessHeaders h;
        h.protocol_version = std::string(req.header("MCP-Protocol-Version"));
        h.has_protocol_version = req.has_header("MCP-Protocol-Version");
        h.method = std::string(req.header("Mcp-Method"));
        h.has_method = req.has_header("Mcp-Method");
        h.name = std::string(req.header("Mcp-Name"));
        h.has_name = req.has_header("Mcp-Name");
        req.for_each_header([&h](std::string_view name, std::string_view value) {
            if (name.size() > 10 && strncasecmp(name.data(), "Mcp-Param-", 10) == 0) {
                h.params.emplace_back(std::string(name.substr(10)), std::string(value));
            }
        });
        return check_stateless_headers(h, *body.first_request, meta, mcp);
    }

    // The replies of one POST: a JSON body when everything is ready and nothing but replies
    // was produced, an event stream otherwise, or an answer still pending. `after` runs once
    // the replies are handed over (JSON) or the stream has ended (SSE); `on_client_gone`
    // when the client leaves before.
    HttpAnswer write_stream(const HttpRequestView& req, std::shared_ptr<OutStream> out, bool batch,
                            std::string session_id, bool resumable, std::function<void()> after,
                            std::function<void()> on_client_gone);

    // JSON when every reply is there and nothing else was said, an event stream otherwise.
    HttpAnswer decided_answer(HttpMethod method, unsigned version, bool keep_alive, std::shared_ptr<OutStream> out,
                              bool batch, std::string session_id, bool resumable, std::function<void()> after) {
        if (out->finished() && !out->has_non_response()) {
            std::string body = out->take_json_body(batch);
            out->mark_delivered(out->last_seq());
            after();
            unsigned status = resumable ? 200 : stateless_status(body);
            count_request(method, status);
            HttpAnswer answer;
            answer.reply = session_id.empty()
                               ? format_reply(version, keep_alive, status, {{"Content-Type", "application/json"}},
                                              std::move(body))
                               : format_reply(version, keep_alive, status,
                                              {{"Content-Type", "application/json"}, {"Mcp-Session-Id", session_id}},
                                              std::move(body));
            return answer;
        }
        if (resumable && shared && out->id() != 0 && !out->mirrored()) {
            if (auto it = sessions.find(session_id); it != sessions.end() && it->second->shared) {
                mirror_stream(session_id, out);
            }
        }
        EventStreamSettings settings;
        settings.session_id = std::move(session_id);
        settings.resumable = resumable;
        return event_stream(method, version, std::move(out), std::move(settings), std::move(after));
    }

    HttpAnswer event_stream(HttpMethod method, unsigned version, std::shared_ptr<OutStream> out,
                            EventStreamSettings settings, std::function<void()> after) {
        settings.retry = opts.sse_retry;
        count_request(method, 200);
        HttpAnswer answer;
        answer.stream = std::make_shared<EventStream>(std::move(out), version, std::move(settings), std::move(after));
        return answer;
    }

    // ------------------------------------------------------------------ GET, DELETE

    HttpAnswer handle_get(const HttpRequestView& req, const Credential& credential) {
        if (!http_policy::accepts(req.header("Accept"), "text/event-stream")) {
            return rpc_error(req, 406, ec::kInvalidRequest, "Not Acceptable: Accept must include text/event-stream");
        }
        auto session_id = req.header("Mcp-Session-Id");
        if (session_id.empty()) {
            return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
        }
        auto session = find_session(session_id, req, credential, false);
        if (!session && may_adopt()) return adopt(req, credential, std::string(session_id));
        if (!session) return rpc_error(req, 404, ec::kInvalidRequest, "Session not found: initialize a new session");
        session->last_active = executor.now();
        session->established = true;
        if (session->shared) keep_alive_shared(*session);

        std::shared_ptr<OutStream> out;
        std::uint64_t after = 0;
        auto last_event = req.header("Last-Event-ID");
        if (!last_event.empty()) {
            std::uint64_t stream_id = 0, seq = 0;
            const bool parsed = HttpSession::parse_event_id(last_event, &stream_id, &seq);
            // A shared session's GET stream is numbered by Redis: any replica can resume it.
            if (parsed && stream_id == 0 && session->shared && !session->standalone()->attached()) {
                session->fresh_standalone(seq);
                catch_up(session, seq);
            }
            // A response stream another replica opened: resumed here from its mirror, once
            // Redis has said it exists.
            if (parsed && stream_id != 0 && session->shared && !session->find_stream(stream_id) && !skip_adoption) {
                return resume_remote(req, session, stream_id, seq);
            }
            if (!parsed || !(out = session->find_stream(stream_id))) {
                return rpc_error(req, 404, ec::kInvalidRequest, "Not Found: unknown Last-Event-ID; the stream is gone");
            }
            after = seq;
            if (!out->can_replay_after(seq)) {
                spdlog::warn("session {}…: resuming stream {} after event {}, but older events were already dropped "
                             "from its replay log (raise http.max_replay_events/bytes)",
                             session->id().substr(0, 8), stream_id, seq);
            }
        } else {
            // A shared session's first GET stream here starts with what the event log holds.
            if (session->shared && !session->has_standalone()) {
                session->fresh_standalone(0);
                catch_up(session, 0);
            }
            out = session->standalone();
        }
        if (out->attached()) {
            return rpc_error(req, 409, ec::kInvalidRequest,
                             "Conflict: this stream is already being read by another connection");
        }
        std::weak_ptr<State> weak = weak_from_this();
        EventStreamSettings settings;
        settings.session_id = session->id();
        settings.resumable = true;
        settings.after_seq = after;
        return event_stream(req.method(), req.version(), out, std::move(settings), [weak, session, out]() {
            auto self = weak.lock();
            if (!self || self->stopping) return;  // at shutdown the executor may be gone
            session->last_active = self->executor.now();
            if (out->id() != 0 && out->fully_delivered()) session->drop_stream(out->id());
        });
    }

    HttpAnswer handle_delete(const HttpRequestView& req, const Credential& credential) {
        auto session_id = req.header("Mcp-Session-Id");
        if (session_id.empty()) {
            return rpc_error(req, 400, ec::kInvalidRequest, "Bad Request: Mcp-Session-Id header is required");
        }
        auto session = find_session(session_id, req, credential, false);
        if (!session && may_adopt()) return adopt(req, credential, std::string(session_id));
        if (!session) return rpc_error(req, 404, ec::kInvalidRequest, "Session not found");
        const bool was_shared = session->shared;
        drop_session(session_id, "the client deleted the session");
        if (was_shared) return remove_everywhere(std::string(session_id), empty(req, 200));
        return empty(req, 200);
    }

    // ------------------------------------------------------------ legacy HTTP+SSE

    HttpAnswer handle_legacy_sse(const HttpRequestView& req, const Credential& credential) {
        if (sessions.size() >= opts.max_sessions) {
            return rpc_error(req, 503, ec::kInvalidRequest, "Service Unavailable: too many sessions");
        }
        auto session = create_session(true, principal_of(req, credential), view_of(req, credential));
        std::string sid = session->id();
        // The first event tells the client where to POST its messages. The legacy session
        // lives exactly as long as its stream.
        EventStreamSettings settings;
        settings.prelude = fmt::format("event: endpoint\ndata: /messages?sessionId={}\n\n", sid);
        std::weak_ptr<State> weak = weak_from_this();
        return event_stream(req.method(), req.version(), session->standalone(), std::move(settings), [weak, sid]() {
            auto self = weak.lock();
            if (self && !self->stopping) self->drop_session(sid, "its event stream closed");
        });
    }

    HttpAnswer handle_legacy_post(const HttpRequestView& req, const Credential& credential) {
        auto target = req.target();
        std::string sid;
        if (auto q = target.find("sessionId="); q != std::string_view::npos) {
            auto v = target.substr(q + 10);
            sid = std::string(v.substr(0, v.find('&')));
        }
        auto session = sid.empty() ? nullptr : find_session(sid, req, credential, true);
        if (!session) return rpc_error(req, 404, ec::kInvalidRequest, "Session not found: open GET /sse first");
        PostBody body;
        if (auto error = read_post_body(req, body)) return std::move(*error);
        if (auto refusal = tool_scope_refusal(req, credential, body)) return std::move(*refusal);
        session->last_active = executor.now();
        take_client_headers(req, credential, session->mcp->caller());
        if (body.parsed.is_batch) {
            session->mcp->reject(batch_refusal(session->mcp->initialized() ? std::make_optional(session->mcp->revision())
                                                                           : std::nullopt));
        } else {
            // Every reply, errors included, goes on the session's event stream.
            feed_all(*session->mcp, body);
        }
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 202, {{"Content-Type", "text/plain"}},
                                             "Accepted"));
    }
};

// An answer waiting for the requests of a POST (see PendingAnswer).
class PendingPost final : public PendingAnswer {
public:
    struct Reply {
        HttpMethod method;
        unsigned version;
        bool keep_alive;
        bool batch;
        std::string session_id;
        bool resumable;
    };

    PendingPost(std::shared_ptr<HttpEndpoint::State> endpoint, Reply reply, std::shared_ptr<OutStream> out,
                std::function<void()> after, std::function<void()> on_client_gone)
        : endpoint_(std::move(endpoint)),
          reply_(std::move(reply)),
          out_(std::move(out)),
          after_(std::move(after)),
          on_client_gone_(std::move(on_client_gone)) {
        out_->set_waker([] {});  // claimed: no GET may attach to it meanwhile
    }
    ~PendingPost() override { release(); }

    bool ready() const override { return gone_ || endpoint_->stopping || decided(*out_); }

    void set_waker(std::function<void()> waker) override {
        waker_ = waker;
        out_->set_waker(std::move(waker));
    }

    HttpAnswer take() override {
        // Whatever this holds of the engine's goes now, on its loop: the connection may drop
        // its last reference to this object on an I/O thread.
        waker_ = nullptr;
        on_client_gone_ = nullptr;
        if (!out_) return {};
        out_->clear_waker();
        if (gone_ || endpoint_->stopping) {
            release();
            return {};
        }
        auto out = std::move(out_);
        return endpoint_->decided_answer(reply_.method, reply_.version, reply_.keep_alive, std::move(out),
                                         reply_.batch, std::move(reply_.session_id), reply_.resumable,
                                         std::exchange(after_, nullptr));
    }

    void client_gone() override {
        if (gone_) return;
        gone_ = true;
        if (auto gone = std::exchange(on_client_gone_, nullptr)) gone();
        if (waker_) waker_();
    }

private:
    // Lets go of the stream without answering: a stateful client may come back for it
    // with Last-Event-ID.
    void release() {
        if (!out_) return;
        out_->clear_waker();
        out_.reset();
        if (auto after = std::exchange(after_, nullptr)) after();
    }

    std::shared_ptr<HttpEndpoint::State> endpoint_;
    Reply reply_;
    std::shared_ptr<OutStream> out_;
    std::function<void()> after_;
    std::function<void()> on_client_gone_;
    std::function<void()> waker_;
    bool gone_ = false;
};

HttpAnswer HttpEndpoint::State::write_stream(const HttpRequestView& req, std::shared_ptr<OutStream> out, bool batch,
                                             std::string session_id, bool resumable, std::function<void()> after,
                                             std::function<void()> on_client_gone) {
    if (decided(*out)) {
        return decided_answer(req.method(), req.version(), req.keep_alive(), std::move(out), batch,
                              std::move(session_id), resumable, std::move(after));
    }
    HttpAnswer answer;
    answer.pending = std::make_shared<PendingPost>(
        shared_from_this(),
        PendingPost::Reply{req.method(), req.version(), req.keep_alive(), batch, std::move(session_id), resumable},
        std::move(out), std::move(after), std::move(on_client_gone));
    return answer;
}

// The shared-session coroutines are defined out of the class: clang 14 cannot build an
// inline coroutine under -fsanitize=function (see redis_client.cpp).
Task<void> HttpEndpoint::State::adopt_then_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                                  std::shared_ptr<OwnedRequest> req, std::string principal,
                                                  std::string view, std::string sid) {
    std::optional<stores::SharedSessionState> state;
    try {
        state = co_await self->shared->load(sid);
    } catch (const std::exception& e) {
        spdlog::debug("session {}…: cannot look it up in Redis: {}", sid.substr(0, 8), e.what());
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    // Taken over only by the caller and the URL it belongs to (anyone else gets the 404
    // of a session that does not exist), and not twice by two requests racing here.
    if (state && !self->sessions.count(sid) && self->sessions.size() < self->opts.max_sessions &&
        state->principal == principal && state->view == view) {
        auto session = self->create_session(false, state->principal, state->view, sid);
        if (!session->shared) self->share(*session);
        session->established = true;
        apply(*session, *state);
        spdlog::info("session {}… taken over from the shared store", sid.substr(0, 8));
    }
    self->skip_adoption = true;
    HttpAnswer answer = self->answer(*req);
    self->skip_adoption = false;
    deferred->resolve(std::move(answer));
}

Task<void> HttpEndpoint::State::verify_and_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                                  std::shared_ptr<OwnedRequest> req) {
    std::string token(http_policy::bearer_token(req->header("Authorization")));
    std::shared_ptr<const auth::VerifiedToken> verified;
    std::optional<auth::TokenError> refused;
    try {
        verified = co_await self->authn->authenticate(token);
    } catch (const auth::TokenError& e) {
        refused = e;
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    if (refused && (refused->reason() == auth::TokenErrorReason::keys_unavailable ||
                    refused->reason() == auth::TokenErrorReason::introspection_unavailable)) {
        spdlog::warn("auth: a token could not be verified: {}", refused->what());
        deferred->resolve(rpc_error(*req, 503, ec::kInternalError,
                                    refused->reason() == auth::TokenErrorReason::keys_unavailable
                                        ? "Service Unavailable: the authorization server's keys cannot be had; retry later"
                                        : "Service Unavailable: the authorization server cannot check the token now; "
                                          "retry later"));
        co_return;
    }
    if (refused) {
        // The reason, never the token: TokenError's messages quote nothing of it.
        spdlog::debug("auth: access token refused ({}): {}", auth::reason_name(refused->reason()), refused->what());
        deferred->resolve(self->unauthorized(
            *req, true, fmt::format("Unauthorized: the access token was refused ({}): {}",
                                    auth::reason_name(refused->reason()), refused->what())));
        co_return;
    }
    const std::pair<std::string, std::shared_ptr<const auth::VerifiedToken>> fresh{std::move(token), verified};
    self->just_verified = &fresh;
    HttpAnswer answer = self->answer(*req);
    self->just_verified = nullptr;
    deferred->resolve(std::move(answer));
}

Task<void> HttpEndpoint::State::save_then_answer(std::shared_ptr<State> self, std::shared_ptr<DeferredAnswer> deferred,
                                                 std::shared_ptr<HttpSession> session, HttpAnswer answer) {
    try {
        co_await self->shared->save(snapshot(*session), self->opts.session_idle_timeout);
        session->dirty = false;
    } catch (const std::exception& e) {
        if (!session->dirty) {
            spdlog::warn("session {}…: its state could not be shared ({}); other replicas see it once Redis is back",
                         session->id().substr(0, 8), e.what());
        }
        session->dirty = true;
    }
    deferred->resolve(std::move(answer));
}

Task<void> HttpEndpoint::State::remove_then_answer(std::shared_ptr<State> self,
                                                   std::shared_ptr<DeferredAnswer> deferred, std::string sid,
                                                   HttpAnswer answer) {
    try {
        co_await self->shared->remove(sid);
    } catch (const std::exception& e) {
        spdlog::warn("session {}… ended here, but Redis could not be told ({}): other replicas keep it until it "
                     "expires",
                     sid.substr(0, 8), e.what());
    }
    deferred->resolve(std::move(answer));
}

Task<void> HttpEndpoint::State::publish_event(std::shared_ptr<State> self, std::string sid, std::string data) {
    try {
        co_await self->shared->publish_event(sid, data, self->opts.max_replay_events, self->opts.session_idle_timeout);
        co_return;
    } catch (const std::exception& e) {
        spdlog::debug("session {}…: a message for its GET stream stays here: {}", sid.substr(0, 8), e.what());
    }
    // Redis away: the message goes to a GET stream on this replica, if the client holds one here.
    if (self->stopping) co_return;
    if (auto it = self->sessions.find(sid); it != self->sessions.end()) {
        it->second->standalone()->push(std::move(data), nullptr);
    }
}

Task<void> HttpEndpoint::State::relay_message(std::shared_ptr<State> self, std::string sid, std::string message) {
    try {
        co_await self->shared->relay_client_message(sid, std::move(message));
    } catch (const std::exception& e) {
        spdlog::warn("session {}…: a client message for another replica was dropped ({})", sid.substr(0, 8), e.what());
    }
}

Task<void> HttpEndpoint::State::catch_up_events(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session,
                                                std::uint64_t after) {
    std::vector<stores::SessionEvent> events;
    try {
        events = co_await self->shared->events_after(session->id(), after);
    } catch (const std::exception& e) {
        spdlog::warn("session {}…: its GET stream resumes without the events Redis holds ({})",
                     session->id().substr(0, 8), e.what());
    }
    auto out = session->standalone();
    for (auto& e : events) out->push_numbered(e.seq, std::move(e.data));
    for (auto& [seq, data] : session->held) out->push_numbered(seq, std::move(data));
    session->held.clear();
    session->catching_up = false;
}

Task<void> HttpEndpoint::State::resume_remote_then_answer(std::shared_ptr<State> self,
                                                          std::shared_ptr<DeferredAnswer> deferred,
                                                          std::shared_ptr<OwnedRequest> req,
                                                          std::shared_ptr<HttpSession> session, std::uint64_t stream,
                                                          std::uint64_t after) {
    stores::SharedSessions::StreamLog log;
    try {
        log = co_await self->shared->stream_events_after(session->id(), stream, after);
    } catch (const std::exception& e) {
        spdlog::warn("session {}…: stream {} cannot be resumed here ({})", session->id().substr(0, 8), stream, e.what());
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    auto out = session->find_stream(stream);
    auto remote = session->remote_streams.find(stream);
    if (!log.exists || !out || remote == session->remote_streams.end()) {
        // No replica mirrored such a stream (or it expired): the answer a local unknown
        // stream gets.
        session->drop_stream(stream);
        session->remote_streams.erase(stream);
        deferred->resolve(rpc_error(*req, 404, ec::kInvalidRequest, "Not Found: unknown Last-Event-ID; the stream is gone"));
        co_return;
    }
    bool ended = log.ended;
    for (auto& e : log.events) out->push_numbered(e.seq, std::move(e.data));
    for (auto& [seq, data] : remote->second.held) {
        if (seq == 0) ended = true;
        else out->push_numbered(seq, std::move(data));
    }
    remote->second.held.clear();
    remote->second.catching_up = false;
    if (ended) out->end();
    // Answered again: the stream is here now.
    self->skip_adoption = true;
    HttpAnswer answer = self->answer(*req);
    self->skip_adoption = false;
    deferred->resolve(std::move(answer));
}

Task<void> HttpEndpoint::State::refresh(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session) {
    try {
        if (session->dirty) {
            co_await self->shared->save(snapshot(*session), self->opts.session_idle_timeout);
            session->dirty = false;
        } else {
            co_await self->shared->touch(session->id(), self->opts.session_idle_timeout);
        }
    } catch (const std::exception& e) {
        spdlog::debug("session {}…: Redis not refreshed: {}", session->id().substr(0, 8), e.what());
    }
}

Task<void> HttpEndpoint::State::revalidate(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session) {
    std::optional<stores::SharedSessionState> state;
    try {
        state = co_await self->shared->load(session->id());
    } catch (const std::exception&) {
        co_return;  // Redis away again: keep the copy
    }
    if (self->stopping || session->mcp->closed()) co_return;
    if (!state) self->drop_session(session->id(), "it was ended on another replica or expired");
    else apply(*session, *state);
}

HttpEndpoint::HttpEndpoint(McpServer& server, Executor& executor, HttpOptions options)
    : state_(std::make_shared<State>(server, executor, std::move(options))) {}

HttpEndpoint::~HttpEndpoint() { stop(); }

HttpAnswer HttpEndpoint::answer(const HttpRequestView& request) { return state_->answer(request); }

void HttpEndpoint::start() {
    for (const auto& [token, view] : state_->mcp.view_tokens()) {
        if (http_policy::token_listed(state_->opts.bearer_tokens, token)) {
            spdlog::warn("a token of the server's bearer tokens is also the gateway profile {}'s: it is served as that "
                         "profile only",
                         view);
        }
    }
    if (state_->shared) {
        std::weak_ptr<State> weak = state_;
        state_->shared->set_listener([weak](stores::SessionBusMessage message) {
            if (auto self = weak.lock()) self->on_bus(std::move(message));
        });
    }
    state_->schedule_sweep();
}

void HttpEndpoint::stop() {
    auto& s = *state_;
    if (s.stopping) return;
    s.stopping = true;
    if (s.cancel_sweep) s.cancel_sweep();
    std::vector<std::string> ids;
    for (auto& [id, session] : s.sessions) ids.push_back(id);
    for (const auto& id : ids) s.drop_session(id, "the server is shutting down");
}

std::size_t HttpEndpoint::session_count() const { return state_->sessions.size(); }

}  // namespace toolport
