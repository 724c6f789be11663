// Every key of Toolport's configuration file, declared once (config/declaration.hpp): what
// the loaders read (config.cpp, pipeline_config.cpp) and refuse, what `toolport config
// schema` publishes (schema/toolport.schema.json) and what docs/configuration.md lists.
// A new key: declare it here, add it to its section's table, read it through its
// declaration; then regenerate the schema and the page (`toolport config schema`,
// `toolport config docs`; a test fails while they differ).
//
// The sources' own sections (packs.<name>, rest.<name>, openapi.<name>, gateway,
// upstreams.<name>) are declared, read and checked by each source kind in its folder
// (providers/source_table.hpp: SourceKind::settings, SourceKind::file_keys).
#pragma once

#include "config/declaration.hpp"
#include "config/generate.hpp"
#include "providers/source_table.hpp"
#include "telemetry/telemetry_keys.hpp"

namespace toolport::gateway {
// The registry client's keys under `registry:` (providers/gateway/gateway_settings.cpp).
std::vector<const config::Key*> registry_client_keys();
}  // namespace toolport::gateway

namespace toolport::config_table {

using namespace toolport::config;

// ---- server ----
namespace server {
inline const Key name = string_key("name", "The server's name in the initialize result (serverInfo.name).", "toolport");
inline const Key title = string_key("title", "The server's display name (serverInfo.title).", "Toolport");
inline const Key instructions =
    string_key("instructions", "Text for the client's model on how to use this server (initialize instructions).");
inline const Key transport = one_of_key("transport", {"http", "stdio"},
                                        "Serve Streamable HTTP (with legacy SSE) or one client on stdin/stdout.",
                                        "http");
inline const Key page_size = integer_key("page_size", 1, 10000,
                                         "Entries per page of tools/list, resources/list, "
                                         "prompts/list.",
                                         "100");
inline const Key client_request_timeout_ms =
    duration_key("client_request_timeout_ms", "ms", 1, 86400000,
                 "How long a request to the client (sampling, elicitation, roots) may wait for its answer.", "300000");
inline const Key task_ttl_ms = duration_key("task_ttl_ms", "ms", 1000, 7.0 * 86400000,
                                            "How long a task's record is kept after it is created.", "3600000");
inline const Key task_poll_interval_ms = duration_key("task_poll_interval_ms", "ms", 1, 3600000,
                                                      "How often clients are asked to poll a task.", "500");
inline const Key task_threshold_ms =
    duration_key("task_threshold_ms", "ms", 0, 3600000,
                 "A call of an optional-task tool becomes a task when it outlives this (0: at once).", "1000");
inline const Key wait_for_sources_ms =
    duration_key("wait_for_sources_ms", "ms", 0, 600000,
                 "How long the first list requests wait for sources that load in the background.", "5000");
inline const Section section{"server",
                             "The MCP server itself: its name, transport and task timing.",
                             {&name, &title, &instructions, &transport, &page_size, &client_request_timeout_ms,
                              &task_ttl_ms, &task_poll_interval_ms, &task_threshold_ms, &wait_for_sources_ms},
                             true,
                             true};
}  // namespace server

// ---- http ----
namespace http {
inline const Key listen = string_key("listen", "Address to listen on: HOST:PORT, [IPv6]:PORT or :PORT.",
                                     "127.0.0.1:8080");
inline const Key path = string_key("path", "The MCP endpoint's path.", "/mcp");
inline const Key io_threads = [] {
    auto key = string_key("io_threads",
                          "Threads for the connections' socket work beside the engine's loop: 0-64 or "
                          "auto (0: all on the engine's loop).",
                          "0");
    key.schema = [] {
        return nlohmann::json{{"anyOf",
                               {{{"type", "integer"}, {"minimum", 0}, {"maximum", 64}},
                                {{"type", "string"}, {"pattern", "^(auto|[0-9]{1,2})$"}}}}};
    };
    return key;
}();
inline const Key max_body_bytes = integer_key("max_body_bytes", 1024, 4294967296.0, "Largest request body accepted.",
                                              "4194304");
inline const Key max_header_bytes = integer_key("max_header_bytes", 1024, 1 << 20,
                                                "Largest request header block accepted.", "16384");
inline const Key max_json_depth = integer_key("max_json_depth", 4, 10000, "Deepest nesting of a JSON request accepted.",
                                              "64");
inline const Key max_sessions = integer_key("max_sessions", 1, 10000000, "Streamable HTTP sessions at once.", "100000");
inline const Key session_idle_timeout_s = duration_key("session_idle_timeout_s", "s", 1, 86400.0 * 30,
                                                       "A session unused this long is closed.", "1800");
inline const Key handshake_timeout_s =
    duration_key("handshake_timeout_s", "s", 0, 86400,
                 "A session that sends nothing after its initialize within this long is dropped (0: no limit).", "10");
inline const Key max_connections = integer_key("max_connections", 1, 10000000,
                                               "Connections open at once; the next is answered 503.", "10000");
inline const Key max_batch_size = integer_key("max_batch_size", 1, 1000000,
                                              "Messages in one JSON-RPC batch (protocol 2025-03-26).", "1000");
inline const Key allowed_origins = list_key(
    "allowed_origins", "Origins allowed to call (scheme://host[:port] or scheme://host:*); empty: loopback only.");
inline const Key allowed_hosts =
    list_key("allowed_hosts",
             "Host header values accepted (DNS-rebinding protection); empty: loopback names when bound "
             "to loopback, any otherwise.");
inline const Key bearer_tokens =
    as_secret(string_key("bearer_tokens",
                         "Bearer tokens clients must send, comma-separated, from the environment "
                         "variable this names."),
              Secret::env_only);
inline const Key bearer_tokens_file = string_key("bearer_tokens_file",
                                                 "A file of accepted bearer tokens, one a line (# starts a comment).");
inline const Key legacy_sse = boolean_key("legacy_sse", "Serve GET /sse + POST /messages (protocol 2024-11-05).",
                                          "true");
inline const Key sse_retry_ms = duration_key(
    "sse_retry_ms", "ms", 0, 600000,
    "SSE polling: clients reconnect after this long when a stream closes early (0: streams stay open).", "1000");
inline const Key max_replay_events = integer_key("max_replay_events", 1, 1000000,
                                                 "Events kept per stream for resumption with Last-Event-ID.", "1024");
inline const Key max_replay_bytes = integer_key("max_replay_bytes", 1024, 17179869184.0,
                                                "Bytes kept per stream for resumption with Last-Event-ID.", "8388608");
inline const Key write_timeout_s = duration_key("write_timeout_s", "s", 1, 3600,
                                                "A write that makes no progress this long drops the connection.", "30");
inline const Key keep_alive_timeout_s = duration_key("keep_alive_timeout_s", "s", 1, 3600,
                                                     "An idle keep-alive connection is closed after this.", "120");
inline const Key metrics_endpoint = boolean_key("metrics_endpoint",
                                                "Serve GET /metrics (Prometheus text; needs an operator's token when "
                                                "authentication is on).",
                                                "true");
inline const Key health_endpoint = boolean_key("health_endpoint", "Serve GET /health.", "true");
inline const Key public_health = boolean_key("public_health",
                                             "/health answers without a bearer token (for load balancers).", "true");
inline const Section section{"http",
                             "The Streamable HTTP transport: address, limits, origins and hosts, bearer tokens.",
                             {&listen,
                              &path,
                              &io_threads,
                              &max_body_bytes,
                              &max_header_bytes,
                              &max_json_depth,
                              &max_sessions,
                              &session_idle_timeout_s,
                              &handshake_timeout_s,
                              &max_connections,
                              &max_batch_size,
                              &allowed_origins,
                              &allowed_hosts,
                              &bearer_tokens,
                              &bearer_tokens_file,
                              &legacy_sse,
                              &sse_retry_ms,
                              &max_replay_events,
                              &max_replay_bytes,
                              &write_timeout_s,
                              &keep_alive_timeout_s,
                              &metrics_endpoint,
                              &health_endpoint,
                              &public_health},
                             true,
                             true};
}  // namespace http

// ---- stdio ----
namespace stdio {
inline const Key max_message_bytes = integer_key("max_message_bytes", 1024, 4294967296.0,
                                                 "Largest message (one line) read from stdin.", "4194304");
inline const Section section{"stdio", "The stdio transport (server.transport: stdio).", {&max_message_bytes}, true, true};
}  // namespace stdio

// ---- auth ----
namespace auth {
namespace introspection {
inline const Key endpoint =
    string_key("endpoint", "The introspection endpoint (RFC 7662); default: the one the issuer's metadata names.");
inline const Key client_id = string_key("client_id", "Toolport's client id at the introspection endpoint.");
inline const Key client_secret = as_secret(string_key("client_secret",
                                                      "Toolport's client secret at the introspection endpoint."),
                                           Secret::inline_or_env);
inline const Key auth_method = one_of_key("auth_method", {"client_secret_basic", "client_secret_post", "none"},
                                          "How Toolport authenticates to the endpoint.",
                                          "client_secret_basic with a client_id, else none");
inline const Key cache_max_s = duration_key("cache_max_s", "s", 0, 86400,
                                            "How long an active token without exp is remembered.", "300");
inline const Key negative_cache_s = duration_key("negative_cache_s", "s", 0, 3600,
                                                 "How long a refused token is remembered.", "10");
inline const Section section{"introspection",
                             "Opaque tokens checked at the authorization server (RFC 7662); empty: the discovered "
                             "endpoint without client authentication.",
                             {&endpoint, &client_id, &client_secret, &auth_method, &cache_max_s, &negative_cache_s},
                             true,
                             true};
}  // namespace introspection
namespace profile {
inline const Key scopes = list_key("scopes", "Scopes a token needs to use this gateway profile (required).");
inline const Section section{"profile", "A gateway profile's scopes.", {&scopes}, true, true};
}  // namespace profile
inline const Key issuer = string_key("issuer",
                                     "The authorization server that issues the access tokens (https URL; required).");
inline const Key resource = string_key("resource", "This server's resource identifier (what clients name).");
inline const Key scopes_supported = list_key("scopes_supported", "Scopes the protected resource metadata lists.");
inline const Key required_scopes = list_key("required_scopes", "Scopes every access token needs.");
inline const Key allow_http = boolean_key("allow_http", "Permit http:// URLs (for tests on loopback).", "false");
inline const Key clock_skew_s = duration_key("clock_skew_s", "s", 0, 600,
                                             "Tolerance when checking exp and nbf of tokens.", "60");
inline const Key jwks_refetch_floor_ms = duration_key("jwks_refetch_floor_ms", "ms", 0, 86400000,
                                                      "The JWKS is fetched again at most this often.", "30000");
inline const Key introspection_key = [] {
    auto key = section_key("introspection", introspection::section, introspection::section.doc);
    key.nullable = true;
    return key;
}();
inline const Key token_format = one_of_key("token_format", {"jwt", "opaque"},
                                           "Access tokens are JWTs, or opaque (needs introspection).", "jwt");
inline const Key profiles = named_sections_key("profiles", profile::section,
                                               "Scopes per gateway profile (gateway.profiles), by profile name.");
inline const Key admin_scope =
    string_key("admin_scope", "The scope that makes an access token an operator's (/metrics, /admin/reload).");
inline const Section section{"auth",
                             "Toolport as an OAuth 2.1 resource server: access tokens of this issuer are required.",
                             {&issuer, &resource, &scopes_supported, &required_scopes, &allow_http, &clock_skew_s,
                              &jwks_refetch_floor_ms, &introspection_key, &token_format, &profiles, &admin_scope},
                             true,
                             true};
}  // namespace auth

// ---- access ----
namespace access {
namespace rule {
inline const Key name = string_key("name", "How refusals name the rule (unnamed: access.rules[N], N from 0).");
inline const Key effect = one_of_key("effect", {"allow", "deny"}, "What the rule decides when it matches (required).");
inline const Key principals = list_key("principals",
                                       "Principal names (globs: * and ?): an OAuth token's sub, a static bearer "
                                       "token's bearer:<digest>, the stdio client's access.stdio_principal, "
                                       "anonymous without authentication.");
inline const Key groups = list_key("groups", "Groups (the token's access.groups_claim) the caller is in one of.");
inline const Key scopes = list_key("scopes", "Scopes the caller's OAuth access token holds one of.");
inline const Key profiles = list_key("profiles", "Gateway profiles (gateway.profiles) the request is served one of.");
inline const Key sources = list_key("sources",
                                    "Sources (a pack, REST catalog, OpenAPI document or upstream) the tool, resource "
                                    "or prompt is one of.");
inline const Key tools = list_key("tools",
                                  "Tool names (globs: * and ?); a rule that names tools decides tool calls only.");
inline const Section section{"rule",
                             "One access rule: its effect, and the conditions that must all hold for it to match (a "
                             "condition left out holds for everyone; within one, any listed value will do).",
                             {&name, &effect, &principals, &groups, &scopes, &profiles, &sources, &tools},
                             true,
                             true};
}  // namespace rule
inline const Key default_effect = one_of_key("default", {"allow", "deny"}, "What is decided when no rule matches.",
                                             "allow");
inline const Key groups_claim = string_key("groups_claim", "The access token claim that lists the caller's groups.",
                                           "groups");
inline const Key stdio_principal = string_key("stdio_principal", "The principal name of the stdio client.", "stdio");
inline const Key rules = section_list_key("rules", rule::section,
                                          "The rules, in order: the first that matches a call decides.");
inline const Section section{"access",
                             "Who may call what: allow and deny rules by principal, group, scope, gateway profile, "
                             "source and tool (docs/authorization.md).",
                             {&default_effect, &groups_claim, &stdio_principal, &rules},
                             true,
                             true};
}  // namespace access

// ---- log ----
namespace log {
inline const Key level = one_of_key("level", {"trace", "debug", "info", "warn", "error", "critical", "off"},
                                    "Lowest level logged.", "info");
inline const Key format = one_of_key("format", {"json", "text"}, "One JSON object per line, or text.", "json");
inline const Key file = string_key("file", "Log to this file instead of stderr.");
inline const Section section{"log", "Logging.", {&level, &format, &file}, true, true};
}  // namespace log

// ---- downstream ----
namespace downstream {
inline const Key ca_file = string_key("ca_file", "CA certificates (PEM) to trust for the web APIs sources call.");
inline const Key insecure_skip_verify =
    boolean_key("insecure_skip_verify", "Skip TLS certificate checks (never by default; logged as a warning).", "false");
inline const Key max_idle_per_origin = integer_key("max_idle_per_origin", 0, 10000,
                                                   "Idle pooled connections kept per origin.", "8");
inline const Key max_connections_per_origin = integer_key("max_connections_per_origin", 1, 10000,
                                                          "Connections at once per origin.", "32");
inline const Key connect_timeout_ms = duration_key("connect_timeout_ms", "ms", 1, 600000, "Connect timeout.", "10000");
inline const Key idle_timeout_ms = duration_key("idle_timeout_ms", "ms", 1, 3600000,
                                                "An idle pooled connection is closed after this.", "60000");
inline const Key max_response_bytes = integer_key("max_response_bytes", 1024, 4294967296.0,
                                                  "Largest response body read from a web API.", "67108864");
inline const Section section{"downstream",
                             "The HTTP client sources use to call web APIs (proxies come from the environment).",
                             {&ca_file, &insecure_skip_verify, &max_idle_per_origin, &max_connections_per_origin,
                              &connect_timeout_ms, &idle_timeout_ms, &max_response_bytes},
                             true,
                             true};
}  // namespace downstream

// ---- reload ----
namespace reload {
inline const Key min_interval_s =
    duration_key("min_interval_s", "s", 0, 86400,
                 "A reload (SIGHUP, POST /admin/reload) starts at most this often, never while one runs.", "3");
inline const Section section{"reload", "Reloading the sources' definitions.", {&min_interval_s}, true, true};
}  // namespace reload

// ---- audit ----
namespace audit {
inline const Key enabled = boolean_key("enabled",
                                       "Write one audit record per tools/call, resources/read and prompts/get "
                                       "(toolport audit reads them). Off by default: on two cores it costs more "
                                       "than the 10 % of throughput it may (bench/run_observability_bench.sh).",
                                       "false");
inline const Key path = string_key("path", "The audit file (JSON lines); rotated files are kept beside it.",
                                   "$XDG_STATE_HOME/toolport/audit.jsonl (else ~/.local/state/toolport/audit.jsonl)");
inline const Key rotate_bytes = integer_key("rotate_bytes", 0, 1099511627776.0,
                                            "The file is rotated before it grows past this (0: never by size).",
                                            "67108864");
inline const Key rotate_age_s = duration_key("rotate_age_s", "s", 0, 86400.0 * 366,
                                             "The file is rotated when its first record is this old (0: never by age).",
                                             "86400");
inline const Key keep_files = integer_key("keep_files", 0, 1000000, "Rotated files kept (0: no limit by count).", "10");
inline const Key keep_age_s = duration_key("keep_age_s", "s", 0, 86400.0 * 3660,
                                           "Rotated files older than this are removed (0: no limit by age).", "2592000");
inline const Key fsync = one_of_key("fsync", {"always", "interval", "never"},
                                    "When the file is synced to disk: after every write, once per flush interval, "
                                    "or when the kernel chooses.",
                                    "interval");
inline const Key flush_interval_ms =
    duration_key("flush_interval_ms", "ms", 10, 60000,
                 "Records are written at least this often: what a killed process can lose at most.", "1000");
inline const Key include_arguments =
    boolean_key("include_arguments",
                "Records carry the call's arguments (secret-looking values redacted), not only their digest.", "false");
inline const Key queue_size = integer_key("queue_size", 1, 100000000,
                                          "Records waiting to be written; past it they are dropped and counted.",
                                          "65536");
inline const Key redis = boolean_key("redis", "With a redis:// store, also add every record to a capped Redis stream.",
                                     "true");
inline const Key stream = string_key("stream", "The Redis stream's key.", "<store.key_prefix>audit");
inline const Key stream_max_len = integer_key("stream_max_len", 1, 1e12,
                                              "Entries the stream keeps, about (XADD MAXLEN ~).", "1000000");
inline const Section section{"audit",
                             "The audit log: who called what, when, with what outcome.",
                             {&enabled, &path, &rotate_bytes, &rotate_age_s, &keep_files, &keep_age_s, &fsync,
                              &flush_interval_ms, &include_arguments, &queue_size, &redis, &stream, &stream_max_len},
                             true,
                             true};
}  // namespace audit

// ---- pinning ----
namespace pinning {
inline const Key default_policy =
    one_of_key("default", {"off", "warn", "quarantine", "block-source"},
               "What happens when a definition of a gateway upstream, REST catalog or OpenAPI document differs from "
               "its pin: warn (served, logged, counted, audited), quarantine (the changed tool is withheld until "
               "approved), block-source (the whole source is). docs/pinning.md says why warn is the default.",
               "warn");
inline const Key store =
    one_of_key("store", {"auto", "file", "redis"},
               "Where the pins are kept: file (pinning.path, this process's), redis (the redis:// store's, so every "
               "replica judges listings against the same pins and an approval on one reaches all), auto (redis with a "
               "redis:// store, else file).",
               "auto");
inline const Key path = string_key("path", "The pins file (pinning.store: file).",
                                   "$XDG_STATE_HOME/toolport/pins.json (else ~/.local/state/toolport/pins.json)");
inline const Key poll_ms = duration_key("poll_ms", "ms", 100, 3600000,
                                        "How often the store is checked for approvals made elsewhere.", "2000");
inline const Section section{"pinning",
                             "Tool-definition pinning: each definition of a source Toolport does not own is pinned "
                             "on first sight; changes are detected at every listing.",
                             {&default_policy, &store, &path, &poll_ms},
                             true,
                             true};
}  // namespace pinning

// ---- console ----
namespace console {
inline const Key enabled = boolean_key("enabled",
                                       "Serve the operator console (a web page and its JSON API) at console.path "
                                       "(HTTP transport only).",
                                       "true");
inline const Key path = string_key("path", "Where the console is served; its JSON API is under <path>/api/.",
                                   "/console");
inline const Key operator_scope = string_key("operator_scope",
                                             "The scope an OAuth access token needs to use the console (the "
                                             "server's own bearer tokens always may).",
                                             "toolport:operator");
inline const Key trace_viewer_url = string_key("trace_viewer_url",
                                               "A trace viewer's URL with {trace_id} in it: calls link their trace "
                                               "there (empty: no link).");
inline const Section section{"console",
                             "The operator console: who may use it, where, and where traces are viewed.",
                             {&enabled, &path, &operator_scope, &trace_viewer_url},
                             true,
                             true};
}  // namespace console

// ---- registry ----
namespace registry {
namespace serve {
namespace profile {
inline const Key name = string_key("name",
                                   "The profile's registry entry name, reverse-DNS namespace/name; default: the "
                                   "server's entry name, '-' and the profile's name.");
inline const Key description = string_key("description", "The profile's entry description (at most 100 characters).");
inline const Section section{"profile", "One gateway profile's registry entry.", {&name, &description}, true, true};
}  // namespace profile
inline const Key enabled = boolean_key("enabled",
                                       "Serve the MCP Registry API (/v0.1/servers), a Server Card per entry and the "
                                       "AI Catalog (HTTP transport only).",
                                       "true");
inline const Key public_url = string_key("public_url",
                                         "The MCP endpoint's URL as clients reach it (https://host/mcp), for remotes "
                                         "behind a proxy; unset: auth.resource, else http://<Host><http.path>.");
inline const Key name = string_key("name",
                                   "The whole server's registry entry name, reverse-DNS namespace/name; default: "
                                   "public_url's host reversed (else local.toolport), '/', server.name.");
inline const Key description = string_key("description",
                                          "The whole server's entry description (at most 100 characters).");
inline const Key website_url = string_key("website_url", "The entries' websiteUrl (http or https).");
inline const Key repository = string_key("repository", "The source repository's URL, the entries' repository.url.");
inline const Key profiles = named_sections_key("profiles", profile::section,
                                               "Registry entries of gateway profiles, by profile name.");
inline const Section section{"serve",
                             "What this server publishes as registry entries and Server Cards (docs/registry.md).",
                             {&enabled, &public_url, &name, &description, &website_url, &repository, &profiles},
                             true,
                             true};
}  // namespace serve
inline const Key serve_key = section_key("serve", serve::section, serve::section.doc);
// With the registry client's keys (url, timeout_ms, max_response_bytes), which the gateway
// declares: its registry upstreams are what reads them (and `toolport registry`).
inline const Section& section() {
    static const Section table = [] {
        Section t{"registry",
                  "The MCP Registry: the one registry upstreams are resolved from, and what this server "
                  "serves of its API.",
                  {&serve_key},
                  true,
                  true};
        for (const auto* key : gateway::registry_client_keys()) t.keys.push_back(key);
        return t;
    }();
    return table;
}
}  // namespace registry

// ---- store ----
namespace store {
inline const Key url = with_env(string_key("url", "memory, or redis://[:password@]host:port[/db] shared by replicas.",
                                           "memory"),
                                "TOOLPORT_STORE");
inline const Key memory_cache_max_bytes = integer_key("memory_cache_max_bytes", 0, 1099511627776.0,
                                                      "Bound of the local LRU cache (also the Redis fallback).",
                                                      "67108864");
inline const Key memory_cache_max_entries = integer_key("memory_cache_max_entries", 0, 4294967296.0,
                                                        "Entries of the local LRU cache.", "100000");
inline const Key key_prefix = string_key("key_prefix", "Every Redis key starts with it.", "toolport:");
inline const Key rate_limit_fail_open = boolean_key("rate_limit_fail_open",
                                                    "When Redis is away: allow calls (true) or refuse them.", "true");
inline const Key redis_timeout_ms = duration_key("redis_timeout_ms", "ms", 1, 60000,
                                                 "Per Redis command; slower counts as away.", "250");
inline const Key reconnect_interval_ms = duration_key("reconnect_interval_ms", "ms", 10, 600000,
                                                      "How often a lost Redis is tried again.", "1000");
inline const Section section{"store",
                             "Where caches, rate limits, budgets and tasks live: memory or Redis. May be written as "
                             "just the URL (store: redis://host:6379).",
                             {&url, &memory_cache_max_bytes, &memory_cache_max_entries, &key_prefix,
                              &rate_limit_fail_open, &redis_timeout_ms, &reconnect_interval_ms},
                             true,
                             true};
}  // namespace store

// ---- pipeline, sources, tools, services ----
namespace pipeline {
inline const Key stages =
    list_key("stages",
             "The stages in order (a stage not listed is off): validate, client_quota, "
             "guard, cache, content_scan, circuit_breaker, budget, rate_limit, timeout, size_cap.",
             "all, in that order");
inline const Key disable = list_key("disable", "Stages switched off without restating the order.");
inline const Key timeout_ms = duration_key("timeout_ms", "ms", 0, 86400000, "A call's deadline.", "30000");
inline const Key max_response_bytes = integer_key("max_response_bytes", 0, 17179869184.0,
                                                  "Largest tool result (size_cap).", "1048576");
inline const Key max_response_bytes_env = with_env(max_response_bytes, "MAX_MCP_RESPONSE_SIZE_BYTES");
namespace cache {
inline const Key mode = [] {
    auto key = one_of_key("mode", {"read_only", "all", "off"},
                          "Which tools are cached: those with readOnlyHint, all, or none.", "read_only");
    key.echo_value = true;
    return key;
}();
inline const Key enabled = boolean_key("enabled", "Cache this tool's results, whatever the mode says.");
inline const Key ttl_s = duration_key("ttl_s", "s", 1, 86400.0 * 30, "How long a result is kept.", "300");
inline const Key per_user = boolean_key("per_user",
                                        "Results differ per caller: the caller's identity is part of the key.", "false");
inline const Section section{"cache", "The result cache.", {&mode, &enabled, &ttl_s, &per_user}, true, true};
}  // namespace cache
namespace budget {
inline const Key max_downstream_calls_per_request = integer_key("max_downstream_calls_per_request", 0, 1000000000,
                                                                "Web API calls one user request may cause in all.",
                                                                "120");
inline const Key default_downstream_per_call = integer_key("default_downstream_per_call", 0, 1000000,
                                                           "What a call counts when its result reports nothing.", "12");
inline const Key scope_ttl_s = duration_key("scope_ttl_s", "s", 1, 86400.0 * 7,
                                            "A request's tally is forgotten after this.", "3600");
inline const Key session_idle_s = duration_key("session_idle_s", "s", 1, 86400.0 * 7,
                                               "A session's tally is forgotten after this long without calls.", "60");
inline const Section section{"budget",
                             "The downstream-call budget of one user request.",
                             {&max_downstream_calls_per_request, &default_downstream_per_call, &scope_ttl_s,
                              &session_idle_s},
                             true,
                             true};
// The pipeline's defaults, which environment variables may set.
inline const Key max_downstream_calls_per_request_env = with_env(max_downstream_calls_per_request,
                                                                 "MAX_DOWNSTREAM_CALLS_PER_REQUEST");
inline const Key default_downstream_per_call_env = with_env(default_downstream_per_call,
                                                            "DEFAULT_DOWNSTREAM_PER_MCP_CALL");
inline const Section defaults_section{"budget",
                                      section.doc,
                                      {&max_downstream_calls_per_request_env, &default_downstream_per_call_env,
                                       &scope_ttl_s, &session_idle_s},
                                      true,
                                      true};
}  // namespace budget
namespace client_quota {
inline const Key per_minute = number_key("per_minute", 0, 1e9, "Calls a minute per client identity (0: unlimited).",
                                         "0");
inline const Key burst = number_key("burst", 0, 1e9, "Saved-up calls (0: same as per_minute).", "0");
inline const Section section{"client_quota", "Calls per client identity.", {&per_minute, &burst}, true, true};
}  // namespace client_quota
namespace redact {
inline const Key results = list_key("results",
                                    "Detectors run on the tool's results: api_key, jwt, bearer, private_key, token, "
                                    "email, phone, card, ssn, iban, or the groups secrets, personal, all.",
                                    "none");
inline const Key payloads = list_key("payloads",
                                     "Detectors run on the audit record's arguments and on trace payloads (same "
                                     "names; [] for none).",
                                     "all");
inline const Section section{"redact",
                             "The built-in redaction of secrets and personal data (content_scan stage).",
                             {&results, &payloads},
                             true,
                             true};
}  // namespace redact
namespace injection_scan {
inline const Key enabled = boolean_key("enabled", "Label results that hold prompt-injection markers.",
                                       "true for gateway upstreams, REST catalogs and OpenAPI documents");
inline const Key warning = boolean_key("warning", "The label puts a text block warning the model first.", "true");
inline const Section section{"injection_scan",
                             "The prompt-injection marker scan of results (content_scan stage): labels, never edits.",
                             {&enabled, &warning},
                             true,
                             true};
}  // namespace injection_scan
inline const Key redact_key = section_key("redact", redact::section, redact::section.doc);
inline const Key injection_scan_key = section_key("injection_scan", injection_scan::section,
                                                  injection_scan::section.doc);
inline const Key cache_key = section_key("cache", cache::section, cache::section.doc);
inline const Key budget_key = section_key("budget", budget::section, budget::section.doc);
inline const Key budget_defaults_key = section_key("budget", budget::defaults_section, budget::section.doc);
inline const Key client_quota_key = section_key("client_quota", client_quota::section, client_quota::section.doc);
inline const Key service = string_key("service", "The downstream service (services.<name>) its calls go to.");
inline const Key scopes = list_key("scopes", "OAuth scopes a token needs to call it (needs auth:).");
inline const Key task_support = [] {
    auto key = one_of_key("task_support", {"forbidden", "optional", "required"},
                          "Replaces the tool's own execution.taskSupport.");
    key.echo_value = true;
    return key;
}();
inline const Key guards = list_key("guards",
                                   "Guards (guards.<name>) its calls pass; added to those of pipeline: and the "
                                   "source, never replacing them.");
inline const Section section{"pipeline",
                             "Defaults of the call pipeline for every tool.",
                             {&stages, &disable, &timeout_ms, &max_response_bytes_env, &cache_key, &budget_defaults_key,
                              &client_quota_key, &redact_key, &injection_scan_key, &guards},
                             true,
                             true};
inline const Key pinning = one_of_key("pinning", {"off", "warn", "quarantine", "block-source"},
                                      "Tool-definition pinning of this source (docs/pinning.md); replaces "
                                      "pinning.default.",
                                      "pinning.default");
inline const Section source_section{"source",
                                    "The pipeline for one source's tools (same keys as pipeline:), its service, "
                                    "scopes and pinning.",
                                    {&stages, &disable, &timeout_ms, &max_response_bytes, &cache_key, &budget_key,
                                     &client_quota_key, &redact_key, &injection_scan_key, &service, &scopes, &guards,
                                     &pinning},
                                    true,
                                    true};
inline const Section tool_section{"tool",
                                  "The pipeline for one tool (same keys as pipeline:), its service, scopes and task "
                                  "support.",
                                  {&stages, &disable, &timeout_ms, &max_response_bytes, &cache_key, &budget_key,
                                   &client_quota_key, &redact_key, &injection_scan_key, &service, &scopes,
                                   &task_support, &guards},
                                  true,
                                  true};
}  // namespace pipeline

namespace service {
inline const Key min_spacing_ms = duration_key("min_spacing_ms", "ms", 0, 3600000,
                                               "Least time between two calls to the service.", "0");
inline const Key rate_per_s = number_key("rate_per_s", 0, 1e9, "Calls a second (token bucket; 0: unlimited).", "0");
inline const Key burst = number_key("burst", 0, 1e9, "Saved-up calls of the bucket.", "max(1, rate_per_s)");
inline const Key max_wait_ms = duration_key("max_wait_ms", "ms", 0, 3600000,
                                            "How long a call may wait for its turn before it is refused.", "5000");
namespace breaker {
inline const Key failure_threshold = integer_key("failure_threshold", 0, 1000,
                                                 "Consecutive failures that open the circuit (0: no breaker).", "3");
inline const Key cooldown_s = duration_key("cooldown_s", "s", 1, 86400, "How long the circuit stays open.", "30");
inline const Section section{"breaker", "The circuit breaker.", {&failure_threshold, &cooldown_s}, true, true};
}  // namespace breaker
inline const Key breaker_key = section_key("breaker", breaker::section, breaker::section.doc);
inline const Section section{"service",
                             "Rate limit and circuit breaker of one downstream service.",
                             {&min_spacing_ms, &rate_per_s, &burst, &max_wait_ms, &breaker_key},
                             true,
                             true};
}  // namespace service

// `guards:`: external checks of calls (pipeline/guard.hpp), attached with `guards: [...]`
// in pipeline:, sources.<name> and tools.<name>.
namespace guard {
inline const Key url = string_key("url", "Where each check is POSTed (http:// or https://).");
inline const Key headers = map_key("headers", "Headers sent with every request (values may be ${ENV} references).");
inline const Key bearer_token = as_secret(string_key("bearer_token", "Sent as Authorization: Bearer <token>."),
                                          config::Secret::inline_or_env);
inline const Key max_response_bytes = integer_key("max_response_bytes", 1, 67108864, "Largest reply read.", "1048576");
inline const Section webhook_section{"webhook",
                                     "An HTTP endpoint that answers each check with a verdict (docs/security.md).",
                                     {&url, &headers, &bearer_token, &max_response_bytes},
                                     true,
                                     true};
inline const Key command = string_key("command", "stdio: the program to start (no shell).");
inline const Key args = list_key("args", "stdio: its arguments.");
inline const Key env = map_key("env", "stdio: set in its environment, on top of PATH, HOME, LANG and the like.");
inline const Key mcp_url = string_key("url", "Streamable HTTP: the server's URL.");
inline const Key interceptors = list_key("interceptors", "The interceptors to apply, by name.",
                                         "every one hooked on tools/call");
inline const Key invoke_config = any_key("config", "Passed as each invocation's config.");
inline const Section mcp_section{"mcp",
                                 "An MCP server offering SEP-2624 interceptors (interceptors/list, "
                                 "interceptor/invoke), over stdio or Streamable HTTP.",
                                 {&command, &args, &env, &mcp_url, &headers, &bearer_token, &interceptors,
                                  &invoke_config},
                                 true,
                                 true};
inline const Key webhook_key = section_key("webhook", webhook_section, webhook_section.doc);
inline const Key mcp_key = section_key("mcp", mcp_section, mcp_section.doc);
inline const Key timeout_ms = duration_key("timeout_ms", "ms", 1, 600000,
                                           "How long one check may take, a wait for a free slot included.", "2000");
inline const Key failure_mode = [] {
    auto key = one_of_key("failure_mode", {"open", "closed"},
                          "No verdict (down, too slow, a bad reply): closed refuses the call, open lets it "
                          "proceed with a warning.",
                          "closed (mcp: each interceptor's own failOpen)");
    key.echo_value = true;
    return key;
}();
inline const Key max_concurrency = integer_key("max_concurrency", 1, 100000,
                                               "Checks at once; more wait for a slot within timeout_ms.", "64");
inline const Key cache_verdicts_s = duration_key("cache_verdicts_s", "s", 0, 86400,
                                                 "Keep verdicts the guard marks cacheable up to this long (0: never).",
                                                 "0");
inline const Key phases = list_key("phases", "When it checks: before (the arguments), after (the result).",
                                   "[before, after]");
inline const Section section{"guard",
                             "One external guard: a webhook or an MCP interceptor server, and how it is used.",
                             {&webhook_key, &mcp_key, &timeout_ms, &failure_mode, &max_concurrency, &cache_verdicts_s,
                              &phases},
                             true,
                             true};
}  // namespace guard

// `packs:` as a mapping: each pack's settings, by name (whether the pack is available in
// this process or not, so the schema is the same everywhere).
inline nlohmann::json packs_by_name() {
    nlohmann::json properties = nlohmann::json::object();
    for (const auto* kind : providers::all_source_kinds()) {
        if (kind->named_instances || !kind->settings) continue;
        auto schema = config::section_schema(*kind->settings);
        schema["type"] = {"object", "null"};
        properties[kind->name] = std::move(schema);
    }
    return {{"type", "object"}, {"properties", properties}, {"additionalProperties", {{"type", {"object", "null"}}}}};
}

// ---- the file ----
inline const Key server_key = section_key("server", server::section, server::section.doc);
inline const Key http_key = section_key("http", http::section, http::section.doc);
inline const Key stdio_key = section_key("stdio", stdio::section, stdio::section.doc);
inline const Key auth_key = section_key("auth", auth::section, auth::section.doc);
inline const Key access_key = section_key("access", access::section, access::section.doc);
inline const Key log_key = section_key("log", log::section, log::section.doc);
inline const Key downstream_key = section_key("downstream", downstream::section, downstream::section.doc);
inline const Key reload_key = section_key("reload", reload::section, reload::section.doc);
inline const Key telemetry_key = section_key("telemetry", telemetry::keys::section, telemetry::keys::section.doc);
inline const Key audit_key = section_key("audit", audit::section, audit::section.doc);
inline const Key console_key = section_key("console", console::section, console::section.doc);
inline const Key pinning_key = section_key("pinning", pinning::section, pinning::section.doc);
inline const Key& registry_key() {
    static const Key key = section_key("registry", registry::section(), registry::section().doc);
    return key;
}
inline const Key sessions = with_env(
    one_of_key("sessions", {"shared", "local"},
               "shared: Streamable HTTP sessions live in the Redis store, so any replica serves any session.", "local"),
    "TOOLPORT_SESSIONS");
inline const Key store_key = [] {
    auto key = section_key("store", store::section, store::section.doc);
    key.also_string = true;
    return key;
}();
inline const Key pipeline_key = section_key("pipeline", pipeline::section, pipeline::section.doc);
inline const Key guards_key = named_sections_key("guards", guard::section,
                                                 "External guards of tool calls, by name (attach them with guards: in "
                                                 "pipeline:, sources: or tools:).");
inline const Key services = named_sections_key("services", service::section,
                                               "Rate limits and circuit breakers, by downstream service name.");
inline const Key sources_key = named_sections_key("sources", pipeline::source_section,
                                                  "Pipeline overrides per source (by source name).");
inline const Key tools = named_sections_key("tools", pipeline::tool_section,
                                            "Pipeline overrides per tool (by tool name).");
inline const Key packs = [] {
    auto key = any_key("packs",
                       "The packs to start: a list of names, a comma-separated string, or a mapping of pack "
                       "name to its settings.");
    key.schema = [] {
        return nlohmann::json{
            {"anyOf", {{{"type", "array"}, {"items", {{"type", "string"}}}}, {{"type", "string"}}, packs_by_name()}}};
    };
    return key;
}();
// The file's own sections, with the keys each kind of named instances declares in its
// folder (`rest:`, `openapi:`, `upstreams:` and `gateway:`) after `packs:`. Built on first
// use: the kinds' keys live in other files.
inline const Section& file() {
    static const Section section = [] {
        Section s{"", "Toolport's configuration file.", {&server_key, &http_key, &stdio_key, &packs}, true, true};
        for (const auto* kind : providers::instance_kinds()) {
            for (const auto* key : kind->file_keys) s.keys.push_back(key);
        }
        for (const auto* key : {&log_key, &pipeline_key, &guards_key, &services, &sources_key, &tools, &store_key,
                                &downstream_key, &sessions, &auth_key, &access_key, &reload_key, &telemetry_key,
                                &audit_key, &console_key, &pinning_key, &registry_key()}) {
            s.keys.push_back(key);
        }
        return s;
    }();
    return section;
}

}  // namespace toolport::config_table
