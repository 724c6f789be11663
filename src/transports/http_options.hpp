// Settings of the HTTP transports (Streamable HTTP at /mcp, legacy HTTP+SSE at /sse).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "async/task.hpp"
#include "auth/scope_policy.hpp"
#include "transports/http_exchange.hpp"

namespace toolport {

namespace stores {
class SharedSessions;
}
namespace auth {
class TokenAuthenticator;
}

// `auth.introspection`: opaque access tokens checked at the authorization server (RFC 7662).
struct IntrospectionSettings {
    bool enabled = false;
    std::string endpoint;  // empty: the issuer's metadata introspection_endpoint
    std::string client_id;
    std::string client_secret;                        // never logged
    std::string auth_method = "client_secret_basic";  // or client_secret_post, none
    std::chrono::seconds cache_max{300};              // an active token without exp
    std::chrono::seconds negative_cache{10};          // a refused token
};

// Toolport as an OAuth 2.1 resource server (`auth:`): MCP requests need an access token
// from `issuer` whose audience is `resource`: a JWT verified against the issuer's published
// keys, or an opaque token checked by introspection.
struct ResourceServerOptions {
    std::string issuer;                         // the authorization server; empty: OAuth off
    std::string resource;                       // this server's identifier (RFC 8707), the audience tokens must name
    std::vector<std::string> scopes_supported;  // published in the Protected Resource Metadata
    std::vector<std::string> required_scopes;   // every request's token needs all of these
    bool allow_http = false;                    // a plain-http issuer (tests on loopback)
    std::chrono::seconds clock_skew{60};
    std::chrono::milliseconds jwks_refetch_floor{30'000};  // see auth::DiscoveryOptions
    IntrospectionSettings introspection;
    // `auth.token_format: opaque`: every token is introspected (no JWKS is fetched).
    bool opaque_tokens = false;
    // `auth.admin_scope`: the scope an access token needs for /metrics and /admin/reload
    // (the operator's endpoints). Empty: OAuth tokens never reach them, only the server's
    // own bearer tokens do.
    std::string admin_scope;
    // Scopes needed per tool, source and profile, beyond required_scopes.
    auth::ScopePolicy scopes;
    // Verifies the tokens; set by `toolport serve` from the fields above. Used on the
    // engine's loop only. Null: OAuth off (whatever `issuer` says).
    std::shared_ptr<auth::TokenAuthenticator> authenticator;
};

// What POST /admin/reload answers: `body` (JSON) with 202 when the request started a
// reload, else with 200 and Retry-After: another came too soon after the last (or while it
// ran), and `body` reports that one.
struct AdminReload {
    bool started = true;
    std::string body;
    std::chrono::seconds retry_after{0};
};

// Who asks the operator console (`console:`, src/console/) and whether they may: the
// endpoint decides (Host, Origin, the credential, the operator scope, loopback), the
// console words the answer (the page's HTML or the API's JSON) and serves what is allowed.
struct ConsoleAccess {
    enum class Verdict {
        allowed,
        needs_credential,    // 401: no credential, or one refused (`challenge` says which)
        insufficient_scope,  // 403: an OAuth token without the operator scope
        not_operator,        // 403: a gateway profile's token, never an operator's
        open_off_loopback,   // 403: no authentication configured, and not listening on loopback
    };
    Verdict verdict = Verdict::allowed;
    std::string why;                  // for a refusal: what is missing, for people
    std::string challenge;            // WWW-Authenticate for a 401 or insufficient_scope
    std::string auth = "none";        // how the caller proved who it is: none, bearer, oauth
    std::string principal;            // the caller as sessions and the audit log name it ("" with auth off)
    std::vector<std::string> scopes;  // an OAuth token's
};

// An HTTP session as the console lists it.
struct ConsoleSession {
    std::string id;
    std::string transport;  // "streamable_http" or "legacy_sse"
    std::string client_name;
    std::string client_version;
    std::string protocol_version;
    std::string principal;
    std::string profile;
    std::chrono::steady_clock::duration age{};
    std::chrono::steady_clock::duration idle{};
};

// What the endpoint offers the console beside its requests: the sessions it holds.
class ConsoleHost {
public:
    virtual ~ConsoleHost() = default;
    virtual std::vector<ConsoleSession> sessions() const = 0;
    // Ends session `id` as a DELETE would (its streams and requests end with `reason`);
    // false when this endpoint holds no such session.
    virtual bool end_session(std::string_view id, const std::string& reason) = 0;
};

// The console's side of the endpoint: every request at `console.path` or under it, once
// Host and Origin passed, with the caller's access. Called on the engine's loop.
class ConsoleHandler {
public:
    virtual ~ConsoleHandler() = default;
    // The endpoint that hands requests over, from its start (null: it stopped).
    virtual void attach(std::shared_ptr<ConsoleHost> host) { (void)host; }
    // `subpath` is the request's path after console.path ("" or "/...").
    virtual HttpAnswer answer(const HttpRequestView& request, std::string_view subpath, const ConsoleAccess& access) = 0;
};

// `console:`: the operator console, served at `path` when `enabled` and `handler` is set.
struct ConsoleOptions {
    bool enabled = true;
    std::string path = "/console";
    std::string operator_scope = "toolport:operator";  // what an OAuth token needs
    std::string trace_viewer_url;                      // a template with {trace_id}; empty: none
    std::shared_ptr<ConsoleHandler> handler;
};

// What the server publishes about itself for anyone to read before connecting
// (src/discovery/): the MCP Registry API (/v0.1/servers...), Server Cards (<mcp path>/
// server-card) and the AI Catalog (/.well-known/...). Its paths are answered once the Host
// header passed, without credentials and whatever the Origin: the documents are public,
// read-only and carry no secret (they are served with `Access-Control-Allow-Origin: *`).
// Called on the engine's loop.
class DiscoveryHandler {
public:
    virtual ~DiscoveryHandler() = default;
    // Whether `path` (without its query) is one of the handler's documents.
    virtual bool handles(std::string_view path) const = 0;
    virtual HttpAnswer answer(const HttpRequestView& request, std::string_view path) = 0;
};

struct HttpOptions {
    std::string host = "127.0.0.1";  // loopback unless told otherwise
    unsigned short port = 8080;
    std::string path = "/mcp";
    std::size_t max_body_bytes = 4 * 1024 * 1024;
    std::size_t max_header_bytes = 16 * 1024;
    std::size_t max_json_depth = 64;
    std::size_t max_sessions = 100000;
    std::chrono::seconds session_idle_timeout{30 * 60};
    // A session that sends nothing after its initialize within this long is dropped, so a
    // client cannot fill max_sessions with handshakes it never finishes. 0: no limit.
    std::chrono::seconds handshake_timeout{10};
    // Connections open at once; the next one is answered 503 and closed.
    std::size_t max_connections = 10000;
    // Messages in one JSON-RPC batch (protocol 2025-03-26); a larger batch is refused whole.
    std::size_t max_batch_size = 1000;
    std::chrono::seconds keep_alive_timeout{120};
    // Events (and bytes) kept per stream for resumption with Last-Event-ID. This is also
    // the most a client that stops reading can make the server hold for it; a write that
    // makes no progress for write_timeout drops the connection.
    std::size_t max_replay_events = 1024;
    std::size_t max_replay_bytes = 8 * 1024 * 1024;
    std::chrono::seconds write_timeout{30};
    // Origins allowed to call (exact "scheme://host[:port]" or "scheme://host:*"). Empty
    // means: loopback origins only. Requests without Origin (non-browser clients) pass.
    std::vector<std::string> allowed_origins;
    // Host header values accepted (DNS-rebinding protection). Empty means: loopback names
    // when bound to loopback, anything otherwise.
    std::vector<std::string> allowed_hosts;
    // Bearer tokens accepted; empty disables authentication unless a view (a gateway
    // profile) has tokens of its own (McpServer::view_tokens), which turn it on too.
    std::vector<std::string> bearer_tokens;
    // SSE polling (2025-11-25): ask clients to reconnect after this long when the server
    // closes a stream early. Zero keeps streams open until their requests finish.
    std::chrono::milliseconds sse_retry{1000};
    bool legacy_sse = true;  // serve GET /sse + POST /messages (protocol 2024-11-05)
    // Threads that do the connections' socket work (reading and parsing requests, writing
    // replies) beside the engine's loop, which keeps sessions, tools and the pipeline on one
    // thread. 0: everything on the engine's loop (the fastest on a machine of two cores);
    // kAutoIoThreads: see IoThreads::automatic(). `toolport serve` starts them (IoThreads).
    static constexpr int kAutoIoThreads = -1;
    int io_threads = 0;

    // GET /metrics: the process's metrics in the Prometheus text format. It needs one of
    // the server's own bearer tokens (or an OAuth token with oauth.admin_scope) when
    // authentication is on.
    bool metrics_endpoint = true;
    // GET /health: what `health_report` returns (HTTP status and JSON body). Not served
    // while `health_report` is unset.
    bool health_endpoint = true;
    // /health answers without a bearer token (for load balancers and orchestrators);
    // Origin and Host checks still apply.
    bool public_health = true;
    std::function<std::pair<int, std::string>()> health_report;
    // POST /admin/reload: asks the sources to fetch their definitions again (`toolport
    // reload`), at most once per reload.min_interval_s (see AdminReload). For the
    // server's own bearer tokens and OAuth tokens with oauth.admin_scope; with
    // authentication off it is served only while the server listens on loopback. Not
    // served while unset. Called on the engine's loop.
    std::function<AdminReload()> reload;
    // GET /audit: the audit log's records that match the query string's filters
    // (stores/audit_record.hpp: principal, tool, source, outcome, method, session, since, until,
    // limit), as {status, JSON body}; GET /orchestration: the orchestration summary (JSON).
    // The operator's, protected as /admin/reload is. Not served while unset. Called on the
    // engine's loop (the query does its reading off it).
    std::function<Task<std::pair<int, std::string>>(std::string query)> audit_query;
    // /admin/pins (GET: the pins and what waits for approval) and POST /admin/pins/approve
    // and /admin/pins/reset ({"source", "name"?, "digest"?}): tool-definition pinning's API,
    // protected as /admin/reload is. `who` names the caller for the audit log. Answers
    // {status, JSON body}. Not served while unset. Called on the engine's loop.
    std::function<Task<std::pair<int, std::string>>(std::string method, std::string path, std::string body, std::string who)>
        pins;
    std::function<std::string()> orchestration;
    // Sessions shared with the other replicas on one Redis (`sessions: shared`): any
    // replica serves any Streamable HTTP session (stores/shared_sessions.hpp). Null:
    // a session lives on the replica that created it.
    std::shared_ptr<stores::SharedSessions> shared_sessions;
    // OAuth access tokens beside (not instead of) bearer_tokens.
    ResourceServerOptions oauth;
    // The operator console (off while its handler is unset).
    ConsoleOptions console;
    // Registry entries, Server Cards and the AI Catalog (none while unset).
    std::shared_ptr<DiscoveryHandler> discovery;
};

}  // namespace toolport
