// HttpEndpoint::State: what the files of the HTTP endpoint share. Internal to transports/:
// only the endpoint's own files include it (users see http_endpoint.hpp, which keeps Asio,
// Beast and all of this out of their way). One State per endpoint, on the engine's loop.
// Its member functions are defined by concern, one file each, so that a change to one
// concern (OAuth, Redis sharing, legacy SSE...) reads and touches one file:
//   http_endpoint.cpp             routing, the checks every request passes; start and stop
//   endpoint_sessions.cpp         the session table: create, find, end; idle expiry
//   endpoint_auth.cpp             credentials, principal, views, scopes; 401 and 403 challenges
//   endpoint_shared_sessions.cpp  sessions shared between replicas through Redis
//   endpoint_post.cpp             POST at the MCP path (sessions; the stateless revision)
//   endpoint_streams.cpp          GET streams (resumption included) and DELETE
//   endpoint_legacy_sse.cpp       legacy HTTP+SSE (/sse, /messages)
//   endpoint_admin.cpp            the operator's /metrics, /health, /admin/reload, /audit, /orchestration
//   endpoint_answers.cpp          replies, event streams, pending POSTs, deferred answers
//   endpoint_console.cpp          the operator console's door: access, then its handler
#pragma once

#include <strings.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "async/task.hpp"
#include "protocol/jsonrpc.hpp"
#include "transports/http_endpoint.hpp"
#include "transports/http_policy.hpp"
#include "transports/sse_stream.hpp"

namespace toolport {

namespace auth {
class TokenAuthenticator;
struct VerifiedToken;
}  // namespace auth

namespace stores {
class SharedSessions;
struct SharedSessionState;
struct SessionBusMessage;
}  // namespace stores

class ServerSession;
struct CallerIdentity;
struct EventStreamSettings;
struct StatelessMeta;
struct HeaderProblem;

namespace endpoint {

inline constexpr std::string_view kRequestsMetric = "toolport_http_requests_total";
inline constexpr std::string_view kSessionsMetric = "toolport_sessions_open";

// Session lookup by string_view without building a std::string per request.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

// A request kept past the call that brought it (http_exchange.hpp).
using OwnedRequest = OwnedHttpRequest;

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

}  // namespace endpoint

struct HttpEndpoint::State : std::enable_shared_from_this<HttpEndpoint::State> {
    State(McpServer& server, Executor& executor, HttpOptions options);

    McpServer& mcp;
    Executor& executor;
    HttpOptions opts;
    bool stopping = false;               // stop() ran: nothing is answered any more
    std::function<void()> cancel_sweep;  // the next expiry sweep (endpoint_sessions.cpp)
    // Shared sessions (null unless `sessions: shared`; endpoint_shared_sessions.cpp).
    std::shared_ptr<stores::SharedSessions> shared = opts.shared_sessions;
    // OAuth (`auth:`): the verifier, the metadata URL and path(s) it publishes.
    std::shared_ptr<auth::TokenAuthenticator> authn = opts.oauth.authenticator;
    std::string metadata_url;
    std::vector<std::string> metadata_paths;
    // Our requests to a shared session's client are numbered in this replica's own range
    // (bits 32-51 random), so a reply that reaches another replica is told apart there.
    std::int64_t request_id_base;
    std::uint64_t subscriptions_seen = 0;  // stores::SharedSessions::subscriptions_started()
    // The open sessions by id, Streamable HTTP and legacy SSE (endpoint_sessions.cpp).
    std::unordered_map<std::string, std::shared_ptr<HttpSession>, endpoint::StringHash, std::equal_to<>> sessions;

    // What a request answered again after an asynchronous step already knows: answer() is
    // re-entered with it by the coroutines that verified the request's token, looked its
    // session up in Redis or fetched a stream's mirror. A pass started by such a step
    // carries what the pass before it knew.
    struct Reentry {
        // The session (or the stream) was looked up in Redis, and taken over if it was
        // there: not again.
        bool looked_up = false;
        // An OAuth access token verified a moment ago (the cache may not keep it).
        std::string verified_token;
        std::shared_ptr<const auth::VerifiedToken> verified;
        // A console request's OAuth token was refused, for this reason: the console words
        // the 401 (verify_and_answer).
        std::string refused_token;
    };

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

    // What the messages of a POST body are, once parsed.
    struct PostBody {
        protocol::ParsedPayload parsed;
        bool has_requests = false;
        bool has_errors = false;  // malformed members, answered on the POST
        bool has_initialize = false;
        const protocol::Request* first_request = nullptr;
        http_policy::TraceHeaders trace;  // W3C trace context headers, carried into requests' _meta
    };

    // A POST's messages sorted for one session: what the session runs, the replies the
    // transport makes itself (malformed members, ids used twice), and the ids to wait for.
    struct SortedPost {
        std::vector<protocol::Message> to_feed;
        std::vector<std::string> local_replies;
        std::vector<protocol::RequestId> request_ids;
    };

    // ------------------------------------ routing and the checks every request passes (http_endpoint.cpp)
    HttpAnswer answer(const HttpRequestView& req, const Reentry& reentry);
    static std::optional<std::string_view> host_header_refusal(const HttpRequestView& req);

    // ----------------------------------------------- the session table and expiry (endpoint_sessions.cpp)
    void sessions_changed();
    void schedule_sweep();
    void sweep();
    std::shared_ptr<HttpSession> create_session(bool legacy, std::string principal, std::string view = {},
                                                std::string id = {});
    void drop_session(std::string_view id, const std::string& reason);
    std::shared_ptr<HttpSession> find_session(std::string_view id, const HttpRequestView& req,
                                              const Credential& credential, bool legacy);

    // ----------------------------------------- credentials, views, scopes, challenges (endpoint_auth.cpp)
    bool auth_on() const;
    std::vector<std::string> oauth_metadata_paths() const;
    bool is_metadata_path(std::string_view path) const;
    Credential credential_of(std::string_view authorization, const Reentry& reentry) const;
    std::string principal_of(const HttpRequestView& req, const Credential& credential) const;
    void take_client_headers(const HttpRequestView& req, const Credential& credential, CallerIdentity& caller) const;
    std::optional<std::string> profile_refusal(const Credential& credential, std::string_view path) const;
    std::optional<HttpAnswer> admin_refusal(const HttpRequestView& req, const auth::VerifiedToken& token,
                                            std::string_view path);
    std::string view_of(const HttpRequestView& req, const Credential& credential) const;
    bool is_view_path(std::string_view path) const;
    HttpAnswer verify_then_answer(const HttpRequestView& req, const Reentry& reentry);
    static Task<void> verify_and_answer(std::shared_ptr<State> self, std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                        std::shared_ptr<endpoint::OwnedRequest> req, Reentry reentry);
    HttpAnswer unauthorized(const HttpRequestView& req, bool token_refused, std::string_view why);
    std::vector<std::string> scopes_for_path(const HttpRequestView& req) const;
    HttpAnswer insufficient_scope(const HttpRequestView& req, const auth::VerifiedToken& token,
                                  const std::vector<std::string>& needed, const std::string& why);
    std::optional<HttpAnswer> tool_scope_refusal(const HttpRequestView& req, const Credential& credential,
                                                 const PostBody& body);
    HttpAnswer metadata_answer(const HttpRequestView& req);

    // ----------------------------------------------------- shared sessions (endpoint_shared_sessions.cpp)
    // The coroutines are defined out of the class: clang 14 cannot build an inline
    // coroutine under -fsanitize=function (see redis_client.cpp).
    bool may_adopt(const Reentry& reentry) const;
    void share(HttpSession& s);
    static stores::SharedSessionState snapshot(const HttpSession& s);
    static void apply(HttpSession& s, const stores::SharedSessionState& st);
    HttpAnswer adopt(const HttpRequestView& req, const Credential& credential, std::string sid, const Reentry& reentry);
    static Task<void> adopt_then_answer(std::shared_ptr<State> self, std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                        std::shared_ptr<endpoint::OwnedRequest> req, std::string principal,
                                        std::string view, std::string sid, Reentry reentry);
    HttpAnswer save_before(std::shared_ptr<HttpSession> session, HttpAnswer answer);
    static Task<void> save_then_answer(std::shared_ptr<State> self, std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                       std::shared_ptr<HttpSession> session, HttpAnswer answer);
    HttpAnswer remove_everywhere(std::string sid, HttpAnswer answer);
    static Task<void> remove_then_answer(std::shared_ptr<State> self, std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                         std::string sid, HttpAnswer answer);
    void publish_standalone(const std::string& sid, std::string data);
    static Task<void> publish_event(std::shared_ptr<State> self, std::string sid, std::string data);
    void catch_up(const std::shared_ptr<HttpSession>& session, std::uint64_t after);
    static Task<void> catch_up_events(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session,
                                      std::uint64_t after);
    void keep_alive_shared(HttpSession& s);
    static Task<void> refresh(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session);
    static Task<void> revalidate(std::shared_ptr<State> self, std::shared_ptr<HttpSession> session);
    void shared_housekeeping();
    void relay_foreign(HttpSession& s, std::vector<protocol::Message>& messages);
    static Task<void> relay_message(std::shared_ptr<State> self, std::string sid, std::string message);
    void mirror_stream(const std::string& sid, const std::shared_ptr<OutStream>& out);
    HttpAnswer resume_remote(const HttpRequestView& req, const std::shared_ptr<HttpSession>& session,
                             std::uint64_t stream, std::uint64_t after, const Reentry& reentry);
    static Task<void> resume_remote_then_answer(std::shared_ptr<State> self,
                                                std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                                std::shared_ptr<endpoint::OwnedRequest> req,
                                                std::shared_ptr<HttpSession> session, std::uint64_t stream,
                                                std::uint64_t after, Reentry reentry);
    void on_bus(stores::SessionBusMessage m);
    static std::int64_t shared_request_id_base();
    static bool changes_session_state(std::string_view method);

    // --------------------------------------------------------------------------- POST (endpoint_post.cpp)
    std::optional<HttpAnswer> read_post_body(const HttpRequestView& req, PostBody& body);
    static SortedPost sort_post(PostBody& body, const HttpSession& session);
    static void feed_all(ServerSession& session, PostBody& body);
    HttpAnswer handle_post(const HttpRequestView& req, const Credential& credential, const Reentry& reentry);
    HttpAnswer handle_stateless_post(const HttpRequestView& req, const Credential& credential, PostBody& body,
                                     const StatelessMeta& meta);
    std::optional<HeaderProblem> check_headers(const HttpRequestView& req, const PostBody& body,
                                               const StatelessMeta& meta);

    // ----------------------------------------------------------------- GET, DELETE (endpoint_streams.cpp)
    HttpAnswer handle_get(const HttpRequestView& req, const Credential& credential, const Reentry& reentry);
    HttpAnswer handle_delete(const HttpRequestView& req, const Credential& credential, const Reentry& reentry);

    // ---------------------------------------------------------- legacy HTTP+SSE (endpoint_legacy_sse.cpp)
    HttpAnswer handle_legacy_sse(const HttpRequestView& req, const Credential& credential);
    HttpAnswer handle_legacy_post(const HttpRequestView& req, const Credential& credential);

    // ------------------------------------------------------------ operator endpoints (endpoint_admin.cpp)
    HttpAnswer observability_answer(const HttpRequestView& req, bool metrics);
    HttpAnswer reload_answer(const HttpRequestView& req);
    // GET /audit?principal=&tool=&outcome=&since=&until=&limit= and GET /orchestration.
    std::optional<HttpAnswer> open_admin_refusal(const HttpRequestView& req, std::string_view path);
    HttpAnswer audit_answer(const HttpRequestView& req, std::string_view query);
    HttpAnswer orchestration_answer(const HttpRequestView& req);
    HttpAnswer pins_answer(const HttpRequestView& req, std::string_view path, const Credential& credential);
    // Answers `req` with the JSON (status, body) `work` makes, when it is done; a failure is
    // logged as `what` and answered 500 with `failure_body`.
    static Task<void> answer_json_later(std::shared_ptr<State> self, std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                        std::shared_ptr<endpoint::OwnedRequest> req,
                                        std::function<Task<std::pair<int, std::string>>()> work, std::string what,
                                        std::string failure_body);
    static std::string public_report(std::string body);
    std::pair<int, std::string> health_response();

    // ------------------------------------------------------------ the console (endpoint_console.cpp)
    bool is_console_path(std::string_view path) const;
    class ConsoleHostAdapter;
    void attach_console();  // the console learns of this endpoint (start) and forgets it (stop)
    void detach_console();
    HttpAnswer console_answer(const HttpRequestView& req, std::string_view path, const Reentry& reentry);

    // --------------------------------------------------------------------- answers (endpoint_answers.cpp)
    std::shared_ptr<endpoint::DeferredAnswer> make_deferred();
    static HttpAnswer deferred_answer(std::shared_ptr<endpoint::DeferredAnswer> deferred);
    static HttpReply json_reply(const HttpRequestView& req, unsigned status, std::string body,
                                std::string_view session_id = {});
    static HttpAnswer answer_with(const HttpRequestView& req, HttpReply reply);
    static HttpAnswer rpc_error(const HttpRequestView& req, unsigned status, int code, std::string_view message,
                                const Json& id = nullptr);
    static HttpAnswer empty(const HttpRequestView& req, unsigned status);
    static HttpAnswer method_not_allowed(const HttpRequestView& req, std::string_view message, std::string_view allow);
    HttpAnswer write_stream(const HttpRequestView& req, std::shared_ptr<OutStream> out, bool batch,
                            std::string session_id, bool resumable, std::function<void()> after,
                            std::function<void()> on_client_gone);
    HttpAnswer decided_answer(HttpMethod method, unsigned version, bool keep_alive, std::shared_ptr<OutStream> out,
                              bool batch, std::string session_id, bool resumable, std::function<void()> after);
    HttpAnswer event_stream(HttpMethod method, unsigned version, std::shared_ptr<OutStream> out,
                            EventStreamSettings settings, std::function<void()> after);
};

}  // namespace toolport
