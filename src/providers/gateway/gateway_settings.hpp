// The gateway's settings: the upstream MCP servers it aggregates (`upstreams:`, one entry
// per server, by name) and how their tools are named and exposed (`gateway:`):
//
//   gateway:
//     prefix_mode: conditional      # conditional (on a collision only), always, never
//     separator: "_"
//     tool_search: false            # serve search_tools + call_tool instead of every tool
//     profiles:
//       cursor: {tools: ["github_*", "everything_echo"]}   # /mcp/cursor serves only these
//       ide: {upstreams: [remote], token_env: IDE_TOKEN}    # so does /mcp for this token
//   upstreams:
//     everything:
//       command: npx                # stdio: the program, its args, env, cwd
//       args: ["-y", "@modelcontextprotocol/server-everything", "stdio"]
//       env: {LOG_LEVEL: debug}     # on top of PATH, HOME, ... (inherit_env: true for all)
//       output_limits: {stderr_lines: 100}   # per 10 s window (output_limits.hpp)
//     remote:
//       url: https://mcp.example.com/mcp      # Streamable HTTP (transport: sse for the 2024 one)
//       bearer_token_env: REMOTE_TOKEN
//       deny: ["delete_*"]
//     weather:
//       registry: io.github.example/weather   # an MCP Registry entry (registry/registry_launch.hpp)
//       version: 1.4.2                        # or latest: resolved once, kept in the state directory
//       arguments: {units: metric}            # its declared arguments; env: its variables
//     files:
//       url: https://files.example.com/mcp
//       auth: {type: token_exchange, token_endpoint: https://as.example.com/token, client_id: toolport,
//              client_secret: "${TOOLPORT_SECRET}", audience: https://files.example.com}
//
// `auth:` (auth/upstream_credentials.hpp): client_credentials authorizes the gateway's one
// connection; token_exchange gives each caller a connection of its own, authorized with the
// token exchanged for the caller's OAuth access token (the gateway's own connection, which
// lists the catalog, uses a client_credentials token unless own_requests: none); login
// authorizes the one connection with the tokens `toolport login <url>` kept (refreshed,
// never authorized anew: a server opens no browser).
//
// The configuration loader puts both sections into one source's settings
// ({upstreams: {...}, prefix_mode: ...}); everything is checked when the file is loaded.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "auth/upstream_credentials.hpp"
#include "providers/gateway/output_limits.hpp"
#include "providers/source_settings.hpp"
#include "server/view.hpp"
#include "util/glob.hpp"

namespace toolport::gateway {

enum class UpstreamTransport { stdio, streamable_http, legacy_sse };

// An upstream named by its MCP Registry entry: resolved when it first connects (the kept
// entry, else the registry's answer) into the command or URL it would otherwise be
// configured with (providers/gateway/registry/).
struct RegistryUpstream {
    std::string name;                // the server's name in the registry
    std::string version = "latest";  // an exact version, or latest
    std::string url;                 // the registry's base URL
    std::string run = "auto";        // auto, remote, npm, pypi, oci
    std::map<std::string, std::string> arguments;
    std::chrono::milliseconds timeout{std::chrono::seconds(20)};
    std::size_t max_response_bytes = 4u << 20;
};
enum class PrefixMode { conditional, always, never };

struct UpstreamSettings {
    std::string name;    // the key under upstreams: (its tools' source and service)
    std::string prefix;  // put before its names when they are prefixed (the name by default)
    UpstreamTransport transport = UpstreamTransport::stdio;
    // The revision to speak: "" (auto: initialize, or the stateless 2026-07-28 when the
    // server has no initialize), a stateful one ("2025-06-18"), or "2026-07-28".
    std::string protocol_version;
    // Set for a registry upstream: its transport, argv or url are filled in by the entry.
    std::optional<RegistryUpstream> registry;

    // stdio
    std::vector<std::string> argv;  // program and arguments (no shell)
    // Set in the child's environment, on top of what it inherits of Toolport's: PATH,
    // HOME, LANG, TERM, USER, LOGNAME, SHELL and TMPDIR, or all of it with inherit_env
    // (Toolport's environment holds its own tokens and keys).
    std::map<std::string, std::string> env;
    bool inherit_env = false;
    std::string cwd;

    // HTTP
    std::string url;
    std::vector<std::pair<std::string, std::string>> headers;  // values may hold secrets
    std::string bearer_token;                                  // from bearer_token_env
    std::string ca_file;
    bool insecure_skip_verify = false;
    // Credentials obtained from an authorization server (Streamable HTTP only); with it,
    // neither bearer_token nor an Authorization header.
    std::optional<auth::UpstreamAuthSettings> auth;

    // Which of its tools and prompts are served, by their upstream names (glob: * and ?).
    // Empty allow: all. Deny wins over allow.
    std::vector<std::string> allow;
    std::vector<std::string> deny;

    std::chrono::milliseconds connect_timeout{std::chrono::seconds(20)};
    std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
    // Any one message from the upstream larger than this is refused while it is read
    // (MCP_RESPONSE_TOO_LARGE for the call it answers).
    std::size_t max_response_bytes = 4u << 20;
    // Counted against the per-request budget when a result carries no
    // _meta.downstream_api_calls; unset: the pipeline's default_downstream_per_call (12,
    // seed 002's DEFAULT_DOWNSTREAM_PER_MCP_CALL), as for any source.
    std::optional<int> downstream_calls_estimate;
    // Arguments a tool's inputSchema does not name are refused before the call reaches the
    // upstream, even where the schema allows them (by default the schema decides).
    bool strict_arguments = false;
    // A lost connection that had worked is made again after restart_delay; attempts that
    // fail wait 0.5 s, doubling up to max_backoff.
    std::chrono::milliseconds restart_delay{std::chrono::milliseconds(200)};
    std::chrono::milliseconds max_backoff{std::chrono::seconds(30)};
    // A ping this often (0: none); a failed one counts as the connection's loss.
    std::chrono::milliseconds ping_interval{0};
    // What its stderr and log messages may make us write and relay (output_limits.hpp).
    OutputLimits output_limits;

    // Secrets (header values, the token) to blank out of any message.
    std::vector<std::string> secrets() const;
    // "node server.js" or the URL, for logs.
    std::string describe() const;
};

// A profile is a view (server/view.hpp) of every primitive: its tools, and the resources,
// resource templates, prompts and completions of its upstreams (`upstreams:`; without it,
// of the upstreams whose tools `tools:` selects; a profile with neither serves everything).
struct ProfileSettings {
    std::string name;
    std::vector<std::string> tools;      // exposed names (globs); empty: every tool
    std::vector<std::string> upstreams;  // only these upstreams' tools, resources and prompts (empty: all)
    // Bearer tokens that select this profile, read from the environment variables named
    // by token_env / token_envs (a secret never sits in the file). A request bearing one
    // is authenticated and served this profile, at /mcp as at /mcp/<name>.
    std::vector<std::string> tokens;
};

struct GatewaySettings {
    std::vector<UpstreamSettings> upstreams;  // in configuration order
    PrefixMode prefix_mode = PrefixMode::conditional;
    std::string separator = "_";
    bool tool_search = false;
    std::vector<ProfileSettings> profiles;
    // `registry:` (its url, timeout and size cap), the defaults of every registry upstream.
    RegistryUpstream registry;

    // Reads and checks the merged section (throws providers::SettingsError).
    static GatewaySettings from(const providers::SourceSettings& settings);
};

// The view `profile` serves. `meta_tools` (search_tools and call_tool in tool search mode,
// registered by `gateway_source`) are in every profile: they answer within the caller's view.
ViewSpec profile_view(const ProfileSettings& profile, std::vector<std::string> meta_tools, std::string gateway_source);

// Whether `name` matches `pattern` (* any run, ? one character): util/glob.hpp.
using util::glob_match;

// An upstream name: 1-64 of A-Z a-z 0-9 _ -.
bool valid_upstream_name(std::string_view name);

}  // namespace toolport::gateway
