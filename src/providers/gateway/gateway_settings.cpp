#include "providers/gateway/gateway_settings.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "client/shell_words.hpp"
#include "protocol/versions.hpp"
#include "providers/gateway/registry/registry_api.hpp"
#include "providers/upstream_auth_settings.hpp"
#include "server/registry.hpp"
#include "util/http_text.hpp"

namespace toolport::gateway {

namespace {

using providers::SourceSettings;

// The keys of the gateway's settings: `gateway:` and each of `upstreams:`.
namespace keys {
using namespace config;

namespace limits {
const Key window_ms = duration_key("window_ms", "ms", 100, 3600000, "The window the limits below count in.", "10000");
const Key stderr_lines = integer_key("stderr_lines", 1, 1000000, "Lines of the upstream's stderr logged per window.",
                                     "100");
const Key stderr_bytes = integer_key("stderr_bytes", 1, 4294967296.0, "Bytes of its stderr logged per window.", "65536");
const Key log_messages = integer_key("log_messages", 1, 1000000, "Its log notifications passed on per window.", "200");
const Key log_bytes = integer_key("log_bytes", 1, 4294967296.0, "Bytes of its log notifications per window.", "262144");
const Key line_bytes = integer_key("line_bytes", 80, 8192, "A longer line is cut.", "2000");
const Key call_notification_bytes = integer_key("call_notification_bytes", 1024, 4294967296.0,
                                                "Bytes of notifications one call may pass on.", "1048576");
const Section table{"output_limits",
                    "What an upstream's output (stderr, log and progress notifications) may take.",
                    {&window_ms, &stderr_lines, &stderr_bytes, &log_messages, &log_bytes, &line_bytes,
                     &call_notification_bytes}};
}  // namespace limits

namespace upstream {
const Key command = any_key("command",
                            "stdio: the command, one string split as a shell would (without a shell) or "
                            "a list.");
const Key args = list_key("args", "stdio: the command's arguments (then command is the program alone).");
const Key env = map_key("env", "stdio: environment variables of the process.");
const Key cwd = string_key("cwd", "stdio: the process's working directory.");
const Key url = string_key("url", "HTTP: the upstream's MCP endpoint (http:// or https://).");
const Key transport = string_key("transport", "stdio with a command; streamable-http (or http) or sse with a url.");
const Key headers = map_key("headers", "HTTP: headers sent with every request.");
const Key bearer_token = as_secret(string_key("bearer_token", "HTTP: the bearer token sent to the upstream."),
                                   Secret::env_only);
const Key ca_file = string_key("ca_file", "HTTP: CA certificates (PEM) to trust.");
const Key insecure_skip_verify = boolean_key("insecure_skip_verify", "HTTP: skip TLS certificate checks.", "false");
const Key prefix = string_key("prefix", "Put before its tool names (1-64 of A-Z a-z 0-9 _ -); default: its name.");
const Key allow = list_key("allow", "Only these tools (glob patterns).");
const Key deny = list_key("deny", "Not these tools (glob patterns).");
const Key connect_timeout_ms = duration_key("connect_timeout_ms", "ms", 100, 600000,
                                            "Connect (and initialize) timeout.", "20000");
const Key timeout_ms = duration_key("timeout_ms", "ms", 100, 86400000, "A request's timeout.", "60000");
const Key max_response_bytes = integer_key("max_response_bytes", 1024, 4294967296.0, "Largest answer accepted.",
                                           "4194304");
const Key downstream_calls_estimate = integer_key(
    "downstream_calls_estimate", 0, 100000, "What its call counts in the budget when its result reports nothing.");
const Key restart_delay_ms = duration_key("restart_delay_ms", "ms", 0, 3600000, "Wait before restarting it.");
const Key max_backoff_ms = duration_key("max_backoff_ms", "ms", 100, 3600000, "Longest wait between restarts.");
const Key ping_interval_ms = duration_key("ping_interval_ms", "ms", 0, 86400000, "Ping it this often (0: never).");
const Key protocol_version = string_key("protocol_version", "auto, or the MCP revision to speak.", "auto");
const Key auth = providers::auth_key(
    "Streamable HTTP: how Toolport authenticates (OAuth client credentials, token exchange, or {type: login} with the "
    "tokens of `toolport login`).",
    /*login_allowed=*/true);
const Key inherit_env = boolean_key("inherit_env", "stdio: the process inherits Toolport's environment.", "false");
const Key output_limits = section_key("output_limits", limits::table, limits::table.doc);
const Key strict_arguments = boolean_key("strict_arguments", "Refuse arguments a tool's schema does not define.",
                                         "false");
const Key registry = string_key("registry",
                                "An MCP Registry entry's name (io.github.example/weather), instead of command or url.");
const Key version = string_key("version", "registry: the entry's version, or latest (resolved once, then kept).",
                               "latest");
const Key arguments = map_key("arguments",
                              "registry: values of the entry's declared arguments and variables, by valueHint, flag "
                              "or variable name.");
const Key run = one_of_key("run", {"auto", "remote", "npm", "pypi", "oci"},
                           "registry: run its remote, or its package of this type (auto: the remote when it has "
                           "one, else the first package whose runner is installed).",
                           "auto");
const Section table{"upstream",
                    "One upstream MCP server: a command (stdio), a url (Streamable HTTP or SSE), or a registry entry.",
                    {&registry,
                     &version,
                     &arguments,
                     &run,
                     &command,
                     &args,
                     &env,
                     &cwd,
                     &url,
                     &transport,
                     &headers,
                     &bearer_token,
                     &ca_file,
                     &insecure_skip_verify,
                     &prefix,
                     &allow,
                     &deny,
                     &connect_timeout_ms,
                     &timeout_ms,
                     &max_response_bytes,
                     &downstream_calls_estimate,
                     &restart_delay_ms,
                     &max_backoff_ms,
                     &ping_interval_ms,
                     &protocol_version,
                     &auth,
                     &inherit_env,
                     &output_limits,
                     &strict_arguments}};
}  // namespace upstream

namespace profile {
const Key tools = list_key("tools", "Only these tools (glob patterns).");
const Key upstreams = list_key("upstreams", "Only these upstreams' tools.");
const Key token_env = string_key("token_env",
                                 "The environment variable holding a bearer token that selects this profile.");
const Key token_envs = list_key("token_envs", "Environment variables holding more bearer tokens that select it.");
const Section table{"profile",
                    "A view of the gateway's tools, chosen by the client's bearer token.",
                    {&tools, &upstreams, &token_env, &token_envs}};
}  // namespace profile

namespace registry {
const Key url = string_key("url", "The MCP Registry's base URL (its API is under /v0.1/).",
                           "https://registry.modelcontextprotocol.io");
const Key timeout_ms = duration_key("timeout_ms", "ms", 100, 600000, "A request to the registry's timeout.", "20000");
const Key max_response_bytes = integer_key("max_response_bytes", 1024, 268435456.0,
                                           "Largest answer accepted from the registry.", "4194304");
const Section table{"registry",
                    "The MCP Registry that registry upstreams and `toolport registry` ask.",
                    {&url, &timeout_ms, &max_response_bytes}};
}  // namespace registry

const Key upstreams = named_sections_key("upstreams", upstream::table, "The upstream MCP servers, by name.");
const Key file_registry = section_key("registry", registry::table, registry::table.doc);
const Key prefix_mode = one_of_key("prefix_mode", {"conditional", "always", "never"},
                                   "When tool names get their upstream's prefix: on a collision, always, or never.",
                                   "conditional");
const Key separator = string_key("separator", "Between prefix and tool name (1-3 of A-Z a-z 0-9 _ -).");
const Key tool_search = boolean_key("tool_search", "Serve a search tool over the upstreams' tools.", "false");
const Key profiles = named_sections_key("profiles", profile::table, "Views of the tools, by profile name.");
// What the gateway's source reads (`gateway:` and the top-level `upstreams:` together).
const Section table{"gateway",
                    "The gateway.",
                    {&upstreams, &prefix_mode, &separator, &tool_search, &profiles, &file_registry}};
// `gateway:` as written in the file (its upstreams are the file's top-level key).
const Section file_table{"gateway",
                         "The gateway's own settings (its upstreams are the top-level upstreams:).",
                         {&prefix_mode, &separator, &tool_search, &profiles}};
// The file's keys that hold them.
const Key file_upstreams = named_sections_key("upstreams", upstream::table,
                                              "The gateway's upstream MCP servers, by name.");
const Key file_gateway = section_key("gateway", file_table, file_table.doc);
}  // namespace keys

std::vector<std::string> read_argv(const SourceSettings& s) {
    namespace k = keys::upstream;
    std::vector<std::string> argv;
    auto command = s.value(k::command.name);
    if (command && command->is_array()) {
        argv = *s.list(k::command);
    } else if (command) {
        auto text = *s.string(k::command);
        if (s.value(k::args.name)) {
            argv.push_back(text);
        } else {
            // One string without args: split as a shell would, without a shell.
            try {
                argv = client::split_shell_words(text);
            } catch (const std::invalid_argument& e) {
                s.fail(k::command, e.what());
            }
        }
    }
    if (auto args = s.list(k::args)) argv.insert(argv.end(), args->begin(), args->end());
    if (argv.empty() || argv[0].empty()) s.fail(k::command, "is empty");
    return argv;
}

// output_limits: each bound at least 1 (a limit of nothing would hide every line, which
// is no limit but a switch; a line cut to nothing says nothing).
OutputLimits read_output_limits(const SourceSettings& s) {
    namespace k = keys::limits;
    s.check_keys(k::table);
    OutputLimits limits;
    auto size = [&](const config::Key& key, std::size_t& field) {
        if (auto n = s.integer(key)) field = static_cast<std::size_t>(*n);
    };
    if (auto ms = s.duration<std::chrono::milliseconds>(k::window_ms)) limits.window = *ms;
    size(k::stderr_lines, limits.stderr_lines);
    size(k::stderr_bytes, limits.stderr_bytes);
    size(k::log_messages, limits.log_messages);
    size(k::log_bytes, limits.log_bytes);
    size(k::line_bytes, limits.line_bytes);
    size(k::call_notification_bytes, limits.call_notification_bytes);
    return limits;
}

UpstreamSettings read_upstream(const std::string& name, const SourceSettings& s, const RegistryUpstream& defaults) {
    namespace k = keys::upstream;
    s.check_keys(k::table);
    UpstreamSettings u;
    u.name = name;
    u.prefix = s.string(k::prefix).value_or(name);
    if (!valid_upstream_name(u.prefix)) s.fail(k::prefix, "must be 1-64 of A-Z a-z 0-9 _ -");

    const bool has_command = s.value(k::command.name).has_value();
    const bool has_url = s.value(k::url.name).has_value();
    const bool has_registry = s.value(k::registry.name).has_value();
    if (int(has_command) + int(has_url) + int(has_registry) != 1)
        s.fail(has_registry ? k::registry
               : has_url    ? k::url
                            : k::command,
               "give either command (stdio), url (HTTP) or registry (an MCP Registry entry)");
    // A key of the other transport is refused by its spelling as written.
    auto refuse = [&s](std::initializer_list<const config::Key*> keys, const char* what) {
        for (const auto* key : keys) {
            for (const auto& spelling : key->spellings()) {
                if (s.value(spelling)) s.fail(spelling, what);
            }
        }
    };
    auto transport = s.string(k::transport);
    if (has_registry) {
        RegistryUpstream r = defaults;
        r.name = *s.string(k::registry);
        // server.json's name: reverse-DNS namespace, one '/', a name.
        const auto slash = r.name.find('/');
        if (r.name.size() < 3 || r.name.size() > 200 || slash == std::string::npos || slash == 0 ||
            slash + 1 == r.name.size() || r.name.find('/', slash + 1) != std::string::npos) {
            s.fail(k::registry, "must be a registry name like io.github.example/weather");
        }
        r.version = s.string(k::version).value_or("latest");
        if (r.version.empty()) s.fail(k::version, "is empty (give an exact version or latest)");
        r.run = s.one_of(k::run).value_or("auto");
        if (auto arguments = s.string_map(k::arguments)) r.arguments = *arguments;
        u.registry = std::move(r);
        if (transport) s.fail(k::transport, "comes from the registry entry");
        refuse({&k::command, &k::args, &k::url, &k::auth}, "does not apply to a registry upstream");
        if (auto env = s.string_map(k::env)) u.env = *env;
        u.inherit_env = s.boolean(k::inherit_env).value_or(false);
        u.cwd = s.string(k::cwd).value_or("");
        if (auto headers = s.string_map(k::headers)) {
            for (auto& [header, value] : *headers) u.headers.emplace_back(header, value);
        }
        if (auto token = s.secret(k::bearer_token)) u.bearer_token = *token;
        u.ca_file = s.string(k::ca_file).value_or("");
        u.insecure_skip_verify = s.boolean(k::insecure_skip_verify).value_or(false);
    } else if (has_command) {
        if (transport && *transport != "stdio") s.fail(k::transport, "must be stdio for an upstream with a command");
        u.transport = UpstreamTransport::stdio;
        u.argv = read_argv(s);
        if (auto env = s.string_map(k::env)) u.env = *env;
        u.inherit_env = s.boolean(k::inherit_env).value_or(false);
        u.cwd = s.string(k::cwd).value_or("");
        refuse({&k::headers, &k::bearer_token, &k::ca_file, &k::insecure_skip_verify, &k::auth},
               "applies to HTTP upstreams (url) only");
        refuse({&k::version, &k::arguments, &k::run}, "applies to registry upstreams only");
    } else {
        u.url = *s.string(k::url);
        if (u.url.rfind("http://", 0) != 0 && u.url.rfind("https://", 0) != 0)
            s.fail(k::url, "must be http:// or https://");
        if (!transport || *transport == "streamable-http" || *transport == "http") {
            u.transport = UpstreamTransport::streamable_http;
        } else if (*transport == "sse") {
            u.transport = UpstreamTransport::legacy_sse;
        } else {
            s.fail(k::transport, "must be streamable-http (or http) or sse for an upstream with a url");
        }
        if (auto headers = s.string_map(k::headers)) {
            for (auto& [header, value] : *headers) u.headers.emplace_back(header, value);
        }
        if (auto token = s.secret(k::bearer_token)) u.bearer_token = *token;
        u.ca_file = s.string(k::ca_file).value_or("");
        u.insecure_skip_verify = s.boolean(k::insecure_skip_verify).value_or(false);
        if (s.value(k::auth.name)) {
            if (u.transport != UpstreamTransport::streamable_http)
                s.fail(k::auth, "applies to Streamable HTTP upstreams only (not transport: sse)");
            if (!u.bearer_token.empty())
                s.fail(k::bearer_token.spellings().front(),
                       "auth: gives this upstream its Authorization header; remove one");
            for (const auto& [header, value] : u.headers) {
                if (util::iequals_ascii(header, "Authorization"))
                    s.fail(k::headers, "auth: gives this upstream its Authorization header; remove one");
            }
            u.auth = providers::read_upstream_auth(s.section(k::auth.name), /*login_allowed=*/true);
        }
        refuse({&k::args, &k::env, &k::inherit_env, &k::cwd}, "applies to stdio upstreams (command) only");
        refuse({&k::version, &k::arguments, &k::run}, "applies to registry upstreams only");
    }
    if (auto version = s.string(k::protocol_version); version && *version != "auto") {
        auto revision = protocol::parse_revision(*version);
        if (!revision) s.fail(k::protocol_version, "must be auto or one of " + protocol::supported_revisions_list());
        u.protocol_version = *version;
    }
    u.allow = s.list(k::allow).value_or(std::vector<std::string>{});
    u.deny = s.list(k::deny).value_or(std::vector<std::string>{});
    if (auto ms = s.duration<std::chrono::milliseconds>(k::connect_timeout_ms)) u.connect_timeout = *ms;
    if (auto ms = s.duration<std::chrono::milliseconds>(k::timeout_ms)) u.request_timeout = *ms;
    if (auto n = s.integer(k::max_response_bytes)) u.max_response_bytes = static_cast<std::size_t>(*n);
    if (auto n = s.integer(k::downstream_calls_estimate)) u.downstream_calls_estimate = static_cast<int>(*n);
    if (auto v = s.boolean(k::strict_arguments)) u.strict_arguments = *v;
    if (auto ms = s.duration<std::chrono::milliseconds>(k::restart_delay_ms)) u.restart_delay = *ms;
    if (auto ms = s.duration<std::chrono::milliseconds>(k::max_backoff_ms)) u.max_backoff = *ms;
    if (auto ms = s.duration<std::chrono::milliseconds>(k::ping_interval_ms)) u.ping_interval = *ms;
    if (s.value(k::output_limits.name)) u.output_limits = read_output_limits(s.section(k::output_limits.name));
    return u;
}

// The tokens of token_env / token_envs. A token that selects two profiles could not say
// which one its holder is served: refused, naming the variables, never the value.
void read_profile_tokens(const SourceSettings& s, const std::vector<ProfileSettings>& earlier, ProfileSettings& profile) {
    namespace k = keys::profile;
    std::vector<std::pair<const config::Key*, std::string>> named;  // key, variable
    if (auto env_name = s.string(k::token_env)) named.emplace_back(&k::token_env, *env_name);
    if (auto env_names = s.list(k::token_envs)) {
        if (env_names->empty()) s.fail(k::token_envs, "names no environment variable");
        for (const auto& env_name : *env_names) named.emplace_back(&k::token_envs, env_name);
    }
    for (const auto& [key, env_name] : named) {
        const char* value = std::getenv(env_name.c_str());
        std::string_view token_view = value ? value : "";
        // `export T=$(cat token-file)` keeps no newline, a .env file may: either way the
        // header's token has none.
        while (!token_view.empty() && std::isspace(static_cast<unsigned char>(token_view.back())))
            token_view.remove_suffix(1);
        while (!token_view.empty() && std::isspace(static_cast<unsigned char>(token_view.front())))
            token_view.remove_prefix(1);
        if (token_view.empty()) s.fail(*key, fmt::format("environment variable {} is not set", env_name));
        const std::string token(token_view);
        for (const auto& other : earlier) {
            if (std::find(other.tokens.begin(), other.tokens.end(), token) != other.tokens.end()) {
                s.fail(*key, fmt::format("environment variable {} holds a token of profile \"{}\" too; a token "
                                         "selects one profile",
                                         env_name, other.name));
            }
        }
        if (std::find(profile.tokens.begin(), profile.tokens.end(), token) == profile.tokens.end()) {
            profile.tokens.push_back(token);
        }
    }
}

// `registry:`: the registry the upstreams' entries are asked of.
RegistryUpstream read_registry(const SourceSettings& settings) {
    namespace k = keys::registry;
    RegistryUpstream r;
    r.url = registry::kDefaultRegistryUrl;
    if (!settings.value(keys::file_registry.name)) return r;
    auto s = settings.section(keys::file_registry.name, keys::file_registry.name);
    s.check_keys(k::table);
    if (auto url = s.string(k::url)) {
        try {
            r.url = registry::normalized_base(*url);
        } catch (const std::invalid_argument&) {
            s.fail(k::url, "must be http:// or https://");
        }
    }
    if (auto ms = s.duration<std::chrono::milliseconds>(k::timeout_ms)) r.timeout = *ms;
    if (auto n = s.integer(k::max_response_bytes)) r.max_response_bytes = static_cast<std::size_t>(*n);
    return r;
}

}  // namespace

const config::Section& settings_table() { return keys::table; }
std::vector<const config::Key*> file_keys() { return {&keys::file_upstreams, &keys::file_gateway}; }
std::vector<const config::Key*> shared_file_keys() { return {&keys::file_registry}; }
std::vector<const config::Key*> registry_client_keys() {
    return {&keys::registry::url, &keys::registry::timeout_ms, &keys::registry::max_response_bytes};
}

bool valid_upstream_name(std::string_view name) {
    if (name.empty() || name.size() > 64) return false;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-';
        if (!ok) return false;
    }
    return true;
}

ViewSpec profile_view(const ProfileSettings& profile, std::vector<std::string> meta_tools, std::string gateway_source) {
    ViewSpec view;
    view.tools = [profile, meta_tools = std::move(meta_tools), gateway_source](const ToolSpec& tool) {
        if (tool.source == gateway_source &&
            std::find(meta_tools.begin(), meta_tools.end(), tool.name) != meta_tools.end()) {
            return true;
        }
        if (!profile.upstreams.empty() &&
            std::find(profile.upstreams.begin(), profile.upstreams.end(), tool.source) == profile.upstreams.end()) {
            return false;
        }
        if (profile.tools.empty()) return true;
        for (const auto& pattern : profile.tools) {
            if (glob_match(pattern, tool.name)) return true;
        }
        return false;
    };
    // Resources, templates, prompts and extensions: the named upstreams'; with neither
    // list, every source's; with tools only, those of the sources of its tools (unset).
    if (!profile.upstreams.empty()) {
        view.sources = [upstreams = profile.upstreams](const std::string& source) {
            return std::find(upstreams.begin(), upstreams.end(), source) != upstreams.end();
        };
    } else if (profile.tools.empty()) {
        view.sources = [](const std::string&) { return true; };
    }
    return view;
}

namespace {

bool names_a_credential(const std::string& variable) {
    std::string upper;
    for (char c : variable) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    for (const char* word : {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "KEY", "CREDENTIAL", "AUTH"}) {
        if (upper.find(word) != std::string::npos) return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> UpstreamSettings::secrets() const {
    // (Values too short to be told from ordinary words are skipped by the redaction itself.)
    std::vector<std::string> out;
    for (const auto& [name, value] : headers) {
        out.push_back(value);
        // An upstream may echo the credential of "Bearer <token>" without its scheme.
        if (const auto space = value.find(' '); space != std::string::npos) out.push_back(value.substr(space + 1));
    }
    if (!bearer_token.empty()) out.push_back(bearer_token);
    if (auth && !auth->client.client_secret.empty()) out.push_back(auth->client.client_secret);
    // A stdio child's configured env: the values of variables named like credentials
    // (GITHUB_TOKEN, OPENAI_API_KEY, DB_PASSWORD) are the operator's secrets; other values
    // (LOG_LEVEL: debug) are ordinary words that must not be redacted from answers.
    for (const auto& [name, value] : env) {
        if (names_a_credential(name)) out.push_back(value);
    }
    return out;
}

std::string UpstreamSettings::describe() const {
    if (registry && argv.empty() && url.empty())
        return fmt::format("registry entry {}@{}", registry->name, registry->version);
    if (transport == UpstreamTransport::stdio) return fmt::format("{}", fmt::join(argv, " "));
    return url.substr(0, url.find('?'));
}

GatewaySettings GatewaySettings::from(const SourceSettings& settings) {
    settings.check_keys(keys::table);
    GatewaySettings g;
    if (auto mode = settings.one_of(keys::prefix_mode)) {
        g.prefix_mode = *mode == "always"  ? PrefixMode::always
                        : *mode == "never" ? PrefixMode::never
                                           : PrefixMode::conditional;
    }
    if (auto sep = settings.string(keys::separator)) {
        if (sep->empty() || sep->size() > 3 || !valid_upstream_name(*sep)) {
            settings.fail(keys::separator, "must be 1-3 of A-Z a-z 0-9 _ - (tool names allow nothing else)");
        }
        g.separator = *sep;
    }
    g.tool_search = settings.boolean(keys::tool_search).value_or(false);

    g.registry = read_registry(settings);
    auto upstreams = settings.value(keys::upstreams.name);
    if (upstreams && !upstreams->is_object()) settings.fail(keys::upstreams, "must be a mapping of names to settings");
    if (upstreams) {
        // Named as the file writes it: `upstreams:` is a top-level key, not one of gateway:'s.
        auto section = settings.section(keys::upstreams.name, keys::file_upstreams.name);
        std::set<std::string> prefixes;
        for (const auto& [name, value] : upstreams->items()) {
            if (!valid_upstream_name(name)) section.fail(name, "upstream names are 1-64 of A-Z a-z 0-9 _ -");
            if (!value.is_object()) section.fail(name, "must be a mapping of settings");
            g.upstreams.push_back(read_upstream(name, section.section(name), g.registry));
            if (!prefixes.insert(g.upstreams.back().prefix).second) {
                section.fail(name,
                             fmt::format("another upstream already uses the prefix \"{}\"", g.upstreams.back().prefix));
            }
        }
        // In the order they were written (the first-configured upstream keeps a name two
        // list, exposed_names.hpp). Settings that carry no lines (not read from a file, or
        // merged with --upstream / --import) keep the order of their names.
        std::stable_sort(g.upstreams.begin(), g.upstreams.end(), [&](const auto& a, const auto& b) {
            const auto la = section.line_of(a.name), lb = section.line_of(b.name);
            if (la && lb) return *la < *lb;
            return la.has_value() && !lb.has_value();
        });
    }

    auto profiles = settings.value(keys::profiles.name);
    if (profiles && !profiles->is_object()) settings.fail(keys::profiles, "must be a mapping of names to settings");
    if (profiles) {
        auto section = settings.section(keys::profiles.name);
        for (const auto& [name, value] : profiles->items()) {
            if (!valid_upstream_name(name)) section.fail(name, "profile names are 1-64 of A-Z a-z 0-9 _ -");
            auto p = section.section(name);
            p.check_keys(keys::profile::table);
            ProfileSettings profile{name,
                                    p.list(keys::profile::tools).value_or(std::vector<std::string>{}),
                                    p.list(keys::profile::upstreams).value_or(std::vector<std::string>{}),
                                    {}};
            for (const auto& upstream : profile.upstreams) {
                bool known = false;
                for (const auto& u : g.upstreams) known = known || u.name == upstream;
                if (!known) p.fail(keys::profile::upstreams, fmt::format("no upstream is named \"{}\"", upstream));
            }
            read_profile_tokens(p, g.profiles, profile);
            g.profiles.push_back(std::move(profile));
        }
    }
    return g;
}

}  // namespace toolport::gateway
