#include "app/config.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/access_config.hpp"
#include "app/config_table.hpp"
#include "app/pipeline_config.hpp"
#include "config/yaml_file.hpp"
#include "document/document.hpp"
#include "auth/resource_metadata.hpp"
#include "http_client/url.hpp"
#include "observability/events.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "providers/gateway/mcp_servers_import.hpp"
#include "providers/source_table.hpp"

namespace toolport {

namespace {

std::vector<std::string> read_tokens_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw ConfigError(fmt::format("cannot read the bearer token file \"{}\"", path));
    std::vector<std::string> tokens;
    std::string line;
    while (std::getline(in, line)) {
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && line[0] != '#') tokens.push_back(line);
    }
    return tokens;
}

namespace k = config_table;
using config::Key;
using config::Settings;

// An absolute http(s) URL without query or fragment (https only unless `allow_http`).
void check_auth_url(const Settings& s, const Key& key, const std::string& url, bool allow_http) {
    if (url.find_first_of("?#") != std::string::npos) s.fail(key, "must not have a query or fragment");
    http_client::Url parsed;
    try {
        parsed = http_client::parse_url(url);
    } catch (const std::invalid_argument& e) {
        s.fail(key, fmt::format("must be an absolute https:// URL ({})", e.what()));
    }
    if (!parsed.https && !allow_http) {
        s.fail(key, "must be an https:// URL (allow_http: true permits http:// for tests on loopback)");
    }
}

std::vector<std::string> scope_list(const Settings& s, const Key& key) {
    auto scopes = *s.list(key);
    for (std::size_t i = 0; i < scopes.size(); ++i) {
        if (!auth::valid_scope_token(scopes[i]))
            s.fail_item(key.name, i,
                        fmt::format("\"{}\" is not a scope (printable ASCII without spaces, quotes or backslashes)",
                                    scopes[i]));
    }
    return scopes;
}

// Every scope of `scopes` is one the metadata lists (when auth.scopes_supported is given):
// a scope it does not list could never be asked for.
void check_supported(const Settings& s, const Key& key, const std::vector<std::string>& scopes,
                     const std::vector<std::string>& supported) {
    if (supported.empty()) return;
    for (std::size_t i = 0; i < scopes.size(); ++i) {
        if (std::find(supported.begin(), supported.end(), scopes[i]) == supported.end())
            s.fail_item(key.name, i, fmt::format("\"{}\" is not in auth.scopes_supported", scopes[i]));
    }
}

// `auth.introspection`: where and how opaque tokens are checked (RFC 7662).
void read_introspection(const Settings& n, ResourceServerOptions& o) {
    namespace ki = k::auth::introspection;
    auto& i = o.introspection;
    i.enabled = true;
    if (n.is_null()) {  // `introspection:` alone: the discovered endpoint, no client authentication
        i.auth_method = "none";
        return;
    }
    n.check_keys(ki::section);
    if (auto endpoint = n.string(ki::endpoint)) {
        i.endpoint = *endpoint;
        check_auth_url(n, ki::endpoint, i.endpoint, o.allow_http);
    }
    if (auto id = n.string(ki::client_id)) i.client_id = *id;
    if (auto secret = n.secret(ki::client_secret)) i.client_secret = *secret;
    i.auth_method = i.client_id.empty() ? "none" : "client_secret_basic";
    if (auto method = n.one_of(ki::auth_method)) i.auth_method = *method;
    if (i.auth_method != "none" && (i.client_id.empty() || i.client_secret.empty())) {
        n.fail_here(fmt::format("{} needs client_id and client_secret (or client_secret_env)", i.auth_method));
    }
    if (auto s = n.duration<std::chrono::seconds>(ki::cache_max_s)) i.cache_max = *s;
    if (auto s = n.duration<std::chrono::seconds>(ki::negative_cache_s)) i.negative_cache = *s;
}

// `auth:`: Toolport as an OAuth 2.1 resource server (see ResourceServerOptions).
void read_auth(const Settings& a, ResourceServerOptions& o) {
    namespace ka = k::auth;
    a.check_keys(ka::section);
    if (!a.has(ka::issuer)) a.fail(ka::issuer, "is required: the authorization server that issues the access tokens");
    if (auto v = a.boolean(ka::allow_http)) o.allow_http = *v;
    o.issuer = *a.string(ka::issuer);
    check_auth_url(a, ka::issuer, o.issuer, o.allow_http);
    if (auto v = a.string(ka::resource)) {
        o.resource = *v;
        // The resource identifier is what clients name; plain http is fine on loopback.
        check_auth_url(a, ka::resource, o.resource, true);
    }
    if (a.has(ka::scopes_supported)) o.scopes_supported = scope_list(a, ka::scopes_supported);
    if (a.has(ka::required_scopes)) o.required_scopes = scope_list(a, ka::required_scopes);
    if (auto v = a.duration<std::chrono::seconds>(ka::clock_skew_s)) o.clock_skew = *v;
    if (auto v = a.duration<std::chrono::milliseconds>(ka::jwks_refetch_floor_ms)) o.jwks_refetch_floor = *v;
    check_supported(a, ka::required_scopes, o.required_scopes, o.scopes_supported);
    if (auto scope = a.string(ka::admin_scope)) {
        // /metrics and /admin/reload: the scope that makes an access token an operator's.
        o.admin_scope = *scope;
        if (!auth::valid_scope_token(o.admin_scope))
            a.fail(ka::admin_scope, "is not a scope (printable ASCII without spaces, quotes or backslashes)");
        if (!o.scopes_supported.empty() &&
            std::find(o.scopes_supported.begin(), o.scopes_supported.end(), o.admin_scope) == o.scopes_supported.end())
            a.fail(ka::admin_scope, fmt::format("\"{}\" is not in auth.scopes_supported", o.admin_scope));
    }
    if (a.has(ka::introspection_key)) read_introspection(a.section(ka::introspection_key), o);
    if (auto format = a.one_of(ka::token_format)) {
        o.opaque_tokens = *format == "opaque";
        if (o.opaque_tokens && !o.introspection.enabled)
            a.fail(ka::token_format, "opaque tokens need auth.introspection (the endpoint that checks them)");
    }
    if (a.has(ka::profiles)) {
        auto p = a.section(ka::profiles);
        if (!p.is_mapping()) a.fail(ka::profiles, "must be a mapping of gateway profile names to {scopes: [...]}");
        for (const auto& name : p.names()) {
            auto profile = p.entry(name);
            profile.check_keys(ka::profile::section);
            if (!profile.has(ka::profile::scopes)) profile.fail(ka::profile::scopes, "is required");
            auto scopes = scope_list(profile, ka::profile::scopes);
            check_supported(profile, ka::profile::scopes, scopes, o.scopes_supported);
            o.scopes.profiles[name] = std::move(scopes);
        }
    }
}

// An http(s) URL without spaces, query or fragment (for the entries' links).
bool plain_http_url(const std::string& url) {
    return (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) && url.size() > 8 &&
           url.find_first_of(" ?#\t") == std::string::npos;
}

// `registry.serve` (docs/registry.md).
void read_registry_serve(const Settings& s, Config& config) {
    namespace ks = k::registry::serve;
    s.check_keys(ks::section);
    auto& o = config.registry_serve;
    if (auto v = s.boolean(ks::enabled)) o.enabled = *v;
    if (auto v = s.string(ks::public_url)) {
        if (!plain_http_url(*v) || v->back() == '/')
            s.fail(ks::public_url,
                   "must be the MCP endpoint's http(s) URL, such as https://mcp.example.com/mcp (no "
                   "query, no trailing /)");
        o.public_url = *v;
    }
    auto entry_name = [](const Settings& at, const Key& key, std::string& out) {
        if (auto v = at.string(key)) {
            if (auto problem = discovery::name_problem(*v)) at.fail(key, *problem);
            out = *v;
        }
    };
    auto description = [](const Settings& at, const Key& key, std::string& out) {
        if (auto v = at.string(key)) {
            if (v->empty() || v->size() > 100) at.fail(key, "must be 1 to 100 characters long (server.json's limit)");
            out = *v;
        }
    };
    entry_name(s, ks::name, o.name);
    description(s, ks::description, o.description);
    if (auto v = s.string(ks::website_url)) {
        if (!plain_http_url(*v)) s.fail(ks::website_url, "must be an http(s) URL");
        o.website_url = *v;
    }
    if (auto v = s.string(ks::repository)) {
        if (!plain_http_url(*v)) s.fail(ks::repository, "must be the repository's http(s) URL");
        o.repository = *v;
    }
    if (s.has(ks::profiles)) {
        auto p = s.section(ks::profiles);
        if (!p.is_mapping()) s.fail(ks::profiles, "must be a mapping of gateway profile names to {name, description}");
        for (const auto& name : p.names()) {
            auto profile = p.entry(name);
            profile.check_keys(ks::profile::section);
            auto& entry = o.profiles[name];
            entry_name(profile, ks::profile::name, entry.name);
            description(profile, ks::profile::description, entry.description);
        }
    }
}

// `tools.<name>.scopes` and `sources.<name>.scopes` (the rest of those sections is the
// pipeline's), after `auth:` and the sources are read; then the scopes the metadata
// publishes when auth.scopes_supported does not list them.
void read_scope_requirements(const Settings& root, Config& config) {
    auto& o = config.http.oauth;
    const bool listed = !o.scopes_supported.empty();
    for (const Key* section : {&k::tools, &k::sources_key}) {
        auto s = root.section(*section);
        if (!s.is_mapping()) continue;
        auto& target = section == &k::tools ? o.scopes.tools : o.scopes.sources;
        for (const auto& name : s.names()) {
            auto entry = s.entry(name);
            if (!entry.is_mapping() || !entry.has(k::pipeline::scopes)) continue;
            if (o.issuer.empty()) {
                entry.fail(k::pipeline::scopes,
                           "scopes are asked of OAuth access tokens: configure auth: (issuer, ...) first");
            }
            auto scopes = scope_list(entry, k::pipeline::scopes);
            check_supported(entry, k::pipeline::scopes, scopes, o.scopes_supported);
            target[name] = std::move(scopes);
        }
    }
    if (!listed) {
        auto all = o.required_scopes;
        for (const auto* map : {&o.scopes.tools, &o.scopes.sources, &o.scopes.profiles}) {
            for (const auto& [name, scopes] : *map) all = auth::scope_union(all, scopes);
        }
        if (!o.admin_scope.empty()) all = auth::scope_union(all, {o.admin_scope});
        o.scopes_supported = std::move(all);
    }
}

// Sections that name gateway profiles (auth.profiles' scopes, registry.serve.profiles'
// entries) name profiles the gateway has: one it lacks would guard or publish nothing.
// Checked when the file is read, before any source starts.
void check_profile_names(const Settings& root, const Config& config) {
    std::set<std::string> profiles;
    for (const auto& instance : config.instances) {
        if (instance.kind != "gateway") continue;
        if (auto p = instance.settings.value("profiles"); p && p->is_object()) {
            for (const auto& [name, value] : p->items()) profiles.insert(name);
        }
    }
    for (const auto& [name, scopes] : config.http.oauth.scopes.profiles) {
        if (!profiles.count(name)) {
            root.section(k::auth_key)
                .section(k::auth::profiles)
                .fail(name, "is not a profile of the gateway (gateway.profiles)");
        }
    }
    for (const auto& [name, entry] : config.registry_serve.profiles) {
        if (!profiles.count(name)) {
            root.section(k::registry_key())
                .section(k::registry::serve_key)
                .section(k::registry::serve::profiles)
                .fail(name, "is not a profile of the gateway (gateway.profiles)");
        }
    }
}

std::vector<std::string> split_tokens(const std::string& text) {
    std::vector<std::string> tokens;
    std::stringstream ss(text);
    std::string t;
    while (std::getline(ss, t, ',')) {
        auto first = t.find_first_not_of(" \t");
        auto last = t.find_last_not_of(" \t");
        if (first != std::string::npos) tokens.push_back(t.substr(first, last - first + 1));
    }
    return tokens;
}

// 'FILE:LINE: packs: unknown pack "x" ...' naming `line`.
[[noreturn]] void unknown_pack(const Settings& root, std::optional<int> line, const std::string& name) {
    throw ConfigError(
        fmt::format("{}:{}: packs: {}", root.file(), line.value_or(0), providers::unknown_pack_message(name)));
}

// `packs: [a, b]`, `packs: a, b` (as the --packs flag), or `packs: {a: {settings}, b: null}`.
// A section is checked now, by building the source from it, so `toolport config check`
// finds its mistakes.
void read_packs(const Settings& root, Config& config) {
    auto node = root.section(k::packs);
    if (node.is_list()) {
        config.packs.clear();
        auto names = *root.list(k::packs);
        for (std::size_t i = 0; i < names.size(); ++i) {
            if (!providers::find_source_kind(names[i]))
                root.fail_item(k::packs.name, i, providers::unknown_pack_message(names[i]));
            config.packs.push_back(names[i]);
        }
        return;
    }
    if (node.is_scalar()) {
        config.packs.clear();
        for (const auto& name : split_tokens(*root.string(k::packs))) {
            if (!providers::find_source_kind(name)) root.fail(k::packs, providers::unknown_pack_message(name));
            config.packs.push_back(name);
        }
        return;
    }
    if (!node.is_mapping())
        root.fail(k::packs,
                  "must be a list of pack names (or a comma-separated string) or a mapping of pack name to settings");
    config.packs.clear();
    for (const auto& name : node.names()) {
        const std::string key = "packs." + name;
        const auto* kind = providers::find_source_kind(name);
        if (!kind) unknown_pack(root, node.line_of_key(name), name);
        auto entry = node.entry(name);
        if (!entry.is_null() && !entry.is_mapping()) node.fail(name, "must be a mapping of settings (or empty)");
        auto settings = node.source_section(name, key);
        try {
            kind->make(settings);
        } catch (const providers::SettingsError& e) {
            throw ConfigError(e.what());
        } catch (const providers::SourceError& e) {
            node.fail(name, e.what());
        }
        config.packs.push_back(name);
        config.pack_settings.insert_or_assign(name, std::move(settings));
    }
}

// Instance names become tool sources, service names and /health components: kept short
// and plain.
bool valid_instance_name(const std::string& name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
}

// Builds the source from its settings now, so `toolport config check` finds mistakes.
// `location` is "FILE:LINE: " of the section when it came from a file.
void check_instance(const providers::SourceKind& kind, const providers::SourceSettings& settings,
                    const std::string& location = {}) {
    try {
        kind.make(settings);
    } catch (const providers::SettingsError& e) {
        throw ConfigError(e.what());
    } catch (const providers::SourceError& e) {
        throw ConfigError(fmt::format("{}{}: {}", location, settings.prefix(), e.what()));
    }
}

bool has_instance(const Config& config, const std::string& name) {
    return std::any_of(config.instances.begin(), config.instances.end(),
                       [&](const SourceInstance& i) { return i.name == name; });
}

// "rest: or openapi:": the keys whose entries are sources, for messages.
std::string instance_keys_text() {
    std::string text;
    for (const auto* kind : providers::instance_kinds()) {
        if (kind->single_instance) continue;
        for (const auto* key : kind->file_keys) text += (text.empty() ? "" : " or ") + key->name + ":";
    }
    return text;
}

// A key of a kind of named instances: `rest: {name: {settings}}`, one source per entry.
void read_instances(const Settings& root, const Key& section, const providers::SourceKind& kind, Config& config) {
    auto node = root.section(section);
    if (!node.is_mapping()) root.fail(section, "must be a mapping of names to settings");
    for (const auto& name : node.names()) {
        const std::string key = section.name + "." + name;
        if (!valid_instance_name(name)) node.fail_at_key(name, "names are 1-64 of A-Z a-z 0-9 _ -");
        if (!node.entry(name).is_mapping()) node.fail(name, "must be a mapping of settings");
        if (has_instance(config, name))
            node.fail_at_key(name, fmt::format("another {} source has this name", instance_keys_text()));
        auto settings = node.source_section(name, key);
        check_instance(kind, settings, fmt::format("{}:{}: ", root.file(), node.line_of_key(name).value_or(0)));
        config.instances.push_back({kind.name, name, std::move(settings)});
    }
}

// A kind of one instance (the gateway): its keys together make the settings of one source
// named after the kind, each key with its line. The key named as the kind (`gateway:`) is
// the top level; each other key (`upstreams:`) is written at the top level of the file and
// becomes the entry of its name.
void read_single_instance(const Settings& root, const providers::SourceKind& kind, Config& config) {
    const Key* top = nullptr;
    const Key* first_written = nullptr;
    for (const auto* key : kind.file_keys) {
        if (key->name == kind.name) top = key;
        if (!first_written && root.has(*key)) first_written = key;
    }
    if (!first_written) return;
    std::map<std::string, int> lines;
    Json values = Json::object();
    if (top && root.has(*top)) {
        if (!root.section(*top).is_mapping()) root.fail(*top, "must be a mapping of settings");
        std::tie(values, lines) = root.source_values(top->name, "");
        for (const auto* key : kind.file_keys) {
            if (key != top && values.contains(key->name))
                root.section(*top).fail(key->name, key->name + ": is a top-level key");
        }
    }
    for (const auto* key : kind.file_keys) {
        if (key == top || !root.has(*key)) continue;
        if (!root.section(*key).is_mapping())
            root.fail(*key, key->type == config::Type::named_sections ? "must be a mapping of names to settings"
                                                                      : "must be a mapping of settings");
        auto [part, part_lines] = root.source_values(key->name, key->name);
        values[key->name] = std::move(part);
        lines.merge(part_lines);
    }
    for (const auto* key : kind.shared_file_keys) {
        if (!root.has(*key) || !root.section(*key).is_mapping()) continue;  // the owner's reader says why
        auto [part, part_lines] = root.source_values(key->name, key->name);
        Json mine = Json::object();
        for (const auto* entry : key->section->keys) {
            if (part.contains(entry->name)) mine[entry->name] = std::move(part[entry->name]);
        }
        values[key->name] = std::move(mine);
        lines.merge(part_lines);
    }
    providers::SourceSettings settings(std::move(values), kind.name, root.file(), std::move(lines));
    const auto& located = top && root.has(*top) ? *top : *first_written;
    check_instance(kind, settings, fmt::format("{}:{}: ", root.file(), root.line_of(located.name).value_or(0)));
    config.instances.push_back({kind.name, kind.name, std::move(settings)});
}

// Every kind of named instances from the keys it declares.
void read_instance_kinds(const Settings& root, Config& config) {
    for (const auto* kind : providers::instance_kinds()) {
        if (kind->single_instance) {
            read_single_instance(root, *kind, config);
            continue;
        }
        for (const auto* key : kind->file_keys) {
            if (root.has(*key)) read_instances(root, *key, *kind, config);
        }
    }
}

// The gateway's instance, made when missing (for --upstream and --import).
SourceInstance& gateway_instance(Config& config) {
    for (auto& instance : config.instances) {
        if (instance.kind == "gateway") return instance;
    }
    config.instances.push_back({"gateway", "gateway", providers::SourceSettings(Json::object(), "gateway")});
    return config.instances.back();
}

// Adds upstreams to the gateway's settings (a name the file already has keeps the file's).
void merge_upstreams(Config& config, const Json& upstreams, const std::string& origin) {
    auto& instance = gateway_instance(config);
    const auto& kind = *providers::find_instance_kind("gateway");
    Json values = Json::object();
    for (const auto& key : kind.settings->spellings()) {
        if (auto v = instance.settings.value(key)) values[key] = *v;
    }
    if (!values.contains("upstreams")) values["upstreams"] = Json::object();
    for (const auto& [name, settings] : upstreams.items()) {
        if (!values["upstreams"].contains(name)) values["upstreams"][name] = settings;
    }
    providers::SourceSettings merged(std::move(values), "gateway (with " + origin + ")");
    check_instance(kind, merged);
    instance.settings = std::move(merged);
}

}  // namespace

namespace {

// The files `path`'s Toolport imports, as its parent named them (kImportMarker).
std::vector<std::string> inherited_imports() {
    std::vector<std::string> files;
    const char* value = std::getenv(kImportMarker);
    if (!value) return files;
    std::stringstream ss(value);
    std::string line;
    while (std::getline(ss, line)) {
        if (!line.empty()) files.push_back(line);
    }
    return files;
}

// `path` as one spelling of the file (symbolic links and `..` resolved; relative to `base`).
std::string same_file_key(const std::string& path, const std::filesystem::path& base) {
    std::filesystem::path p(path);
    if (p.is_relative() && !base.empty()) p = base / p;
    std::error_code error;
    auto canonical = std::filesystem::weakly_canonical(p, error);
    return error ? p.lexically_normal().string() : canonical.string();
}

// Whether an imported command's arguments import `file` again (`--import FILE` or
// `--import=FILE`): Toolport itself, as a Claude Desktop configuration that lists it
// would start it, which would import the same file and start itself without end.
bool imports_file(const Json& upstream, const std::string& file) {
    if (!upstream.contains("command") || !upstream.value("args", Json::array()).is_array()) return false;
    const std::filesystem::path base = upstream.value("cwd", std::string());
    const auto& args = upstream["args"];
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto arg = args[i].get<std::string>();
        std::string named;
        if (arg == "--import" && i + 1 < args.size()) named = args[i + 1].get<std::string>();
        else if (arg.rfind("--import=", 0) == 0) named = arg.substr(9);
        if (!named.empty() && same_file_key(named, base) == file) return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> import_mcp_servers(Config& config, const std::string& file) {
    std::vector<std::string> warnings;
    const std::string key = same_file_key(file, {});
    auto chain = inherited_imports();
    if (std::find(chain.begin(), chain.end(), key) != chain.end()) {
        // This process is an upstream of a Toolport that imports the same file: importing it
        // again would start that entry once more, and so on for ever.
        warnings.push_back(
            fmt::format("--import {}: skipped: this Toolport was started by one that imports the "
                        "same file ({} names it), and importing it again would start Toolport "
                        "inside itself without end",
                        file, kImportMarker));
        return warnings;
    }
    std::ifstream in(file);
    if (!in) throw ConfigError(fmt::format("cannot read \"{}\"", file));
    std::stringstream text;
    text << in.rdbuf();
    chain.push_back(key);
    std::string marker;
    for (const auto& entry : chain) marker += (marker.empty() ? "" : "\n") + entry;
    try {
        Json upstreams = gateway::upstreams_from_mcp_servers(text.str(), file);
        Json kept = Json::object();
        for (auto& [name, upstream] : upstreams.items()) {
            if (imports_file(upstream, key)) {
                warnings.push_back(
                    fmt::format("--import {}: skipped the server \"{}\": it is Toolport importing "
                                "this same file, which would start itself without end",
                                file, name));
                continue;
            }
            // Its children learn which files they were imported from, for the case the
            // arguments do not show (a wrapper script, npx).
            if (upstream.contains("command")) {
                if (!upstream.contains("env")) upstream["env"] = Json::object();
                upstream["env"][kImportMarker] = marker;
            }
            kept[name] = std::move(upstream);
        }
        merge_upstreams(config, kept, "--import " + file);
    } catch (const providers::SettingsError& e) {
        throw ConfigError(e.what());
    }
    return warnings;
}

void add_upstream(Config& config, const std::string& spec) {
    auto equals = spec.find('=');
    if (equals == std::string::npos || equals == 0) {
        throw ConfigError(fmt::format("--upstream {}: write NAME=COMMAND or NAME=URL", spec));
    }
    const std::string name = spec.substr(0, equals), target = spec.substr(equals + 1);
    if (!gateway::valid_upstream_name(name)) {
        throw ConfigError(fmt::format("--upstream {}: names are 1-64 of A-Z a-z 0-9 _ -", name));
    }
    Json upstream = target.rfind("http://", 0) == 0 || target.rfind("https://", 0) == 0 ? Json{{"url", target}}
                                                                                        : Json{{"command", target}};
    merge_upstreams(config, Json{{name, upstream}}, "--upstream " + name);
}

void add_rest_preset(Config& config, const std::string& preset) {
    if (has_instance(config, preset)) return;  // the file's own settings for it win
    providers::SourceSettings settings(Json{{"preset", preset}}, "--rest " + preset);
    check_instance(*providers::find_instance_kind("rest"), settings);
    config.instances.push_back({"rest", preset, std::move(settings)});
}

void add_openapi_document(Config& config, const std::string& document) {
    // The name: the last path segment without its extension, in plain characters.
    std::string last = document.substr(0, document.find_first_of("?#"));
    while (!last.empty() && last.back() == '/') last.pop_back();
    last = last.substr(last.find_last_of('/') == std::string::npos ? 0 : last.find_last_of('/') + 1);
    if (auto dot = last.find('.'); dot != std::string::npos && dot > 0) last.resize(dot);
    std::string base;
    for (char c : last) {
        if (base.size() == 48) break;
        base += valid_instance_name(std::string(1, c)) ? c : '_';
    }
    if (base.empty()) base = "openapi";
    std::string name = base;
    for (int n = 2; has_instance(config, name); ++n) name = base + "_" + std::to_string(n);
    providers::SourceSettings settings(Json{{"document", document}}, "--openapi " + document);
    check_instance(*providers::find_instance_kind("openapi"), settings);
    config.instances.push_back({"openapi", name, std::move(settings)});
}

std::string expand_env(const std::string& text, const std::string& where) {
    try {
        return config::expand_env(text, where);
    } catch (const config::SettingsError& e) {
        throw ConfigError(e.what());
    }
}

void apply_listen(HttpOptions& http, const std::string& listen) {
    auto colon = listen.rfind(':');
    if (colon == std::string::npos) throw ConfigError(fmt::format("listen \"{}\": expected HOST:PORT", listen));
    std::string host = listen.substr(0, colon);
    std::string port = listen.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    int p = -1;
    try {
        std::size_t used = 0;
        p = std::stoi(port, &used);
        if (used != port.size() || p < 0 || p > 65535) throw std::out_of_range("port");
    } catch (const std::logic_error&) {
        throw ConfigError(fmt::format("listen \"{}\": the port must be a number from 0 to 65535", listen));
    }
    if (!host.empty()) http.host = host;
    http.port = static_cast<unsigned short>(p);
}

int parse_io_threads(const std::string& text, const std::string& where) {
    if (text == "auto") return HttpOptions::kAutoIoThreads;
    const bool digits = !text.empty() && text.size() <= 2 &&
                        std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits && std::stoi(text) <= 64) return std::stoi(text);
    throw ConfigError(fmt::format("{} \"{}\": expected a number of threads from 0 to 64, or auto", where, text));
}

static Config load_config_unchecked(const std::string& path);

// The environment variables declared on keys (config_table.hpp), over the file.
static void apply_env_overrides(Config& config) {
    namespace kp = k::pipeline;
    auto& d = config.pipeline.defaults;
    if (auto v = Settings::integer_from_env(kp::budget::max_downstream_calls_per_request_env))
        d.budget.max_downstream_calls_per_request = *v;
    if (auto v = Settings::integer_from_env(kp::budget::default_downstream_per_call_env))
        d.budget.default_downstream_per_call = *v;
    if (auto v = Settings::integer_from_env(kp::max_response_bytes_env))
        d.max_response_bytes = static_cast<std::size_t>(*v);
    if (auto url = Settings::from_env(k::store::url)) {
        if (*url != "memory" && url->rfind("redis://", 0) != 0)
            throw ConfigError(
                fmt::format("environment variable {} must be \"memory\" or a redis:// URL", k::store::url.env));
        config.store.url = *url;
    }
    if (auto sessions = Settings::one_of_from_env(k::sessions)) config.shared_sessions = *sessions == "shared";
    try {
        telemetry::apply_telemetry_environment(config.telemetry);
    } catch (const telemetry::TelemetrySettingsError& e) {
        throw ConfigError(e.what());
    }
}

Config load_config(const std::string& path) {
    try {
        Config config = load_config_unchecked(path);
        config.file = path;
        apply_env_overrides(config);
        if (config.shared_sessions && config.store.url.rfind("redis://", 0) != 0) {
            throw ConfigError(
                fmt::format("{}sessions: shared needs the Redis store (store: redis://host:port), "
                            "which the replicas share",
                            path.empty() ? std::string() : path + ": "));
        }
        if (config.pins_store == "redis" && config.store.url.rfind("redis://", 0) != 0) {
            throw ConfigError(
                fmt::format("{}pinning.store: redis needs the Redis store (store: redis://host:port); "
                            "use file (or auto) for a pins file",
                            path.empty() ? std::string() : path + ": "));
        }
        return config;
    } catch (const ConfigError&) {
        throw;
    } catch (const config::SettingsError& e) {
        throw ConfigError(e.what());
    } catch (const YAML::Exception& e) {
        // Anything yaml-cpp rejects that the readers above did not name (odd keys, bad
        // conversions): still a configuration error with the file and line.
        throw ConfigError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
    }
}

// A file that is an MCP client's server list (Claude Desktop's mcpServers, VS Code's
// servers, JSON with comments) rather than Toolport's YAML: said with the flag that reads it.
static void refuse_server_list(const std::string& path, const std::string& text) {
    auto doc = Json::parse(text, nullptr, false, true);
    if (doc.is_object() && (doc.contains("mcpServers") || doc.contains("servers"))) {
        throw ConfigError(
            fmt::format("{}: this is an MCP client's server list ({}), not a Toolport configuration; "
                        "use --import {}",
                        path, doc.contains("mcpServers") ? "mcpServers" : "servers", path));
    }
}

static Config load_config_unchecked(const std::string& path) {
    Config config;
    if (path.empty()) return config;
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(fmt::format("cannot read config file \"{}\"", path));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    refuse_server_list(path, text);
    // The one YAML reading rule every file of Toolport goes through (document/document.hpp):
    // syntax, one document, keys once, known tags only. The reader below then takes each
    // scalar as the text it was written as and types it by its key's declaration
    // (config/settings.hpp), so `0123` stays "0123" for a name and `yes` is true for a boolean.
    YAML::Node root;
    try {
        auto loaded = document::load_yaml(text);
        if (!loaded) return config;
        root = *loaded;
        (void)document::convert_yaml(root);
    } catch (const document::DocumentError& e) {
        if (e.line() > 0) throw ConfigError(fmt::format("{}:{}: {}", path, e.line(), e.what()));
        throw ConfigError(fmt::format("{}: {}", path, e.what()));
    }
    if (root.IsNull()) return config;
    const Settings r(config::tree_from_yaml(root, path));
    r.check_keys(k::file());

    if (r.has(k::server_key)) {
        namespace ks = k::server;
        auto s = r.section(k::server_key);
        s.check_keys(ks::section);
        if (auto v = s.string(ks::name)) config.server.name = *v;
        if (auto v = s.string(ks::title)) config.server.title = *v;
        if (auto v = s.string(ks::instructions)) config.server.instructions = *v;
        if (auto t = s.one_of(ks::transport))
            config.transport = *t == "stdio" ? Config::Transport::stdio : Config::Transport::http;
        if (auto v = s.integer(ks::page_size)) config.server.page_size = *v;
        if (auto v = s.duration<std::chrono::milliseconds>(ks::task_ttl_ms)) config.server.task_ttl = *v;
        if (auto v = s.duration<std::chrono::milliseconds>(ks::task_poll_interval_ms))
            config.server.task_poll_interval = *v;
        if (auto v = s.duration<std::chrono::milliseconds>(ks::task_threshold_ms)) config.server.task_threshold = *v;
        if (auto v = s.duration<std::chrono::milliseconds>(ks::wait_for_sources_ms))
            config.server.wait_for_sources = *v;
        if (auto v = s.duration<std::chrono::milliseconds>(ks::client_request_timeout_ms))
            config.server.client_request_timeout = *v;
    }
    if (r.has(k::http_key)) {
        namespace kh = k::http;
        auto h = r.section(k::http_key);
        h.check_keys(kh::section);
        auto& o = config.http;
        if (h.has(kh::listen)) {
            try {
                apply_listen(o, *h.string(kh::listen));
            } catch (const std::runtime_error& e) {  // ConfigError, or SettingsError of its ${ENV}
                h.fail(kh::listen, e.what());
            }
        }
        if (auto v = h.string(kh::path)) o.path = *v;
        if (h.has(kh::io_threads)) {
            // As written: no ${ENV} expansion.
            auto n = h.value(kh::io_threads.name);
            const char* what = "must be a number of threads (0-64) or \"auto\"";
            if (!n || !n->is_string()) h.fail(kh::io_threads, what);
            try {
                o.io_threads = parse_io_threads(n->get<std::string>(), "http.io_threads");
            } catch (const ConfigError&) {
                h.fail(kh::io_threads, what);
            }
        }
        if (auto v = h.integer(kh::max_body_bytes)) o.max_body_bytes = *v;
        if (auto v = h.integer(kh::max_header_bytes)) o.max_header_bytes = *v;
        if (auto v = h.integer(kh::max_json_depth)) o.max_json_depth = *v;
        if (auto v = h.integer(kh::max_sessions)) o.max_sessions = *v;
        if (auto v = h.duration<std::chrono::seconds>(kh::session_idle_timeout_s)) o.session_idle_timeout = *v;
        if (auto v = h.duration<std::chrono::seconds>(kh::handshake_timeout_s)) o.handshake_timeout = *v;
        if (auto v = h.integer(kh::max_connections)) o.max_connections = *v;
        if (auto v = h.integer(kh::max_batch_size)) o.max_batch_size = *v;
        if (auto v = h.list(kh::allowed_origins)) o.allowed_origins = *v;
        if (auto v = h.list(kh::allowed_hosts)) o.allowed_hosts = *v;
        if (auto tokens = h.secret(kh::bearer_tokens)) {
            for (auto& t : split_tokens(*tokens)) o.bearer_tokens.push_back(t);
        }
        if (h.has(kh::bearer_tokens_file)) {
            try {
                for (auto& t : read_tokens_file(*h.string(kh::bearer_tokens_file))) o.bearer_tokens.push_back(t);
            } catch (const std::runtime_error& e) {  // ConfigError, or SettingsError of its ${ENV}
                h.fail(kh::bearer_tokens_file, e.what());
            }
        }
        if (auto v = h.boolean(kh::legacy_sse)) o.legacy_sse = *v;
        if (auto v = h.integer(kh::max_replay_events)) o.max_replay_events = *v;
        if (auto v = h.integer(kh::max_replay_bytes)) o.max_replay_bytes = *v;
        if (auto v = h.duration<std::chrono::seconds>(kh::write_timeout_s)) o.write_timeout = *v;
        if (auto v = h.duration<std::chrono::seconds>(kh::keep_alive_timeout_s)) o.keep_alive_timeout = *v;
        if (auto v = h.duration<std::chrono::milliseconds>(kh::sse_retry_ms)) o.sse_retry = *v;
        if (auto v = h.boolean(kh::metrics_endpoint)) o.metrics_endpoint = *v;
        if (auto v = h.boolean(kh::health_endpoint)) o.health_endpoint = *v;
        if (auto v = h.boolean(kh::public_health)) o.public_health = *v;
    }
    if (r.has(k::auth_key)) read_auth(r.section(k::auth_key), config.http.oauth);
    if (r.has(k::stdio_key)) {
        auto s = r.section(k::stdio_key);
        s.check_keys(k::stdio::section);
        if (auto v = s.integer(k::stdio::max_message_bytes)) config.stdio.max_message_bytes = *v;
    }
    if (r.has(k::packs)) read_packs(r, config);
    read_instance_kinds(r, config);
    if (auto v = r.one_of(k::sessions)) config.shared_sessions = *v == "shared";
    if (r.has(k::reload_key)) {
        auto n = r.section(k::reload_key);
        n.check_keys(k::reload::section);
        if (auto v = n.duration<std::chrono::seconds>(k::reload::min_interval_s)) config.reload_min_interval = *v;
    }
    if (r.has(k::audit_key)) {
        namespace ka = k::audit;
        auto a = r.section(k::audit_key);
        a.check_keys(ka::section);
        auto& o = config.audit;
        if (auto v = a.boolean(ka::enabled)) o.enabled = *v;
        if (auto v = a.string(ka::path)) o.path = *v;
        if (auto v = a.integer(ka::rotate_bytes)) o.rotate_bytes = *v;
        if (auto v = a.duration<std::chrono::seconds>(ka::rotate_age_s)) o.rotate_age = *v;
        if (auto v = a.integer(ka::keep_files)) o.keep_files = *v;
        if (auto v = a.duration<std::chrono::seconds>(ka::keep_age_s)) o.keep_age = *v;
        if (auto v = a.one_of(ka::fsync)) {
            o.fsync = *v == "always"  ? stores::FsyncPolicy::always
                      : *v == "never" ? stores::FsyncPolicy::never
                                      : stores::FsyncPolicy::interval;
        }
        if (auto v = a.duration<std::chrono::milliseconds>(ka::flush_interval_ms)) o.flush_interval = *v;
        if (auto v = a.boolean(ka::include_arguments)) o.include_arguments = *v;
        if (auto v = a.integer(ka::queue_size)) o.queue_capacity = *v;
        if (auto v = a.boolean(ka::redis)) config.audit_redis = *v;
        if (auto v = a.string(ka::stream)) config.audit_stream = *v;
        if (auto v = a.integer(ka::stream_max_len)) o.stream_max_len = *v;
    }
    if (r.has(k::pinning_key)) {
        namespace kn = k::pinning;
        auto n = r.section(k::pinning_key);
        n.check_keys(kn::section);
        if (auto v = n.one_of(kn::default_policy)) config.pinning.default_policy = *pins::parse_pin_policy(*v);
        if (auto v = n.one_of(kn::store)) config.pins_store = *v;
        if (auto v = n.string(kn::path)) config.pins_path = *v;
        if (auto v = n.duration<std::chrono::milliseconds>(kn::poll_ms)) config.pinning.poll = *v;
    }
    if (r.has(k::console_key)) {
        namespace kc = k::console;
        auto c = r.section(k::console_key);
        c.check_keys(kc::section);
        auto& o = config.http.console;
        if (auto v = c.boolean(kc::enabled)) o.enabled = *v;
        if (auto v = c.string(kc::path)) {
            if (v->size() < 2 || v->front() != '/' || v->back() == '/' || v->find_first_of("?#% ") != std::string::npos)
                c.fail(kc::path, "must be a path such as /console: a leading /, no trailing /, no ?, #, % or space");
            if (*v == config.http.path || v->rfind(config.http.path + "/", 0) == 0)
                c.fail(kc::path, "must not be the MCP endpoint's path (http.path) nor under it");
            o.path = *v;
        }
        if (auto v = c.string(kc::operator_scope)) o.operator_scope = *v;
        if (auto v = c.string(kc::trace_viewer_url)) {
            if (!v->empty() && (v->find("{trace_id}") == std::string::npos ||
                                (v->rfind("http://", 0) != 0 && v->rfind("https://", 0) != 0)))
                c.fail(kc::trace_viewer_url, "must be an http(s) URL with {trace_id} in it");
            o.trace_viewer_url = *v;
        }
    }
    if (r.has(k::registry_key())) {
        auto reg = r.section(k::registry_key());
        reg.check_keys(k::registry::section());
        if (reg.has(k::registry::serve_key)) read_registry_serve(reg.section(k::registry::serve_key), config);
    }
    if (r.has(k::log_key)) {
        namespace kl = k::log;
        auto l = r.section(k::log_key);
        l.check_keys(kl::section);
        if (auto v = l.string(kl::level)) {
            config.log_level = *v;
            if (!observability::is_log_level(config.log_level)) {
                l.fail(kl::level, "must be one of trace, debug, info, warn, error, critical, off");
            }
        }
        if (auto v = l.one_of(kl::format)) config.log_format = *v;
        if (auto v = l.string(kl::file)) config.log_file = *v;
    }
    if (r.has(k::downstream_key)) {
        namespace kd = k::downstream;
        auto d = r.section(k::downstream_key);
        d.check_keys(kd::section);
        auto& o = config.downstream;
        if (auto v = d.string(kd::ca_file)) o.ca_file = *v;
        if (auto v = d.boolean(kd::insecure_skip_verify)) o.insecure_skip_verify = *v;
        if (auto v = d.integer(kd::max_idle_per_origin)) o.max_idle_per_origin = *v;
        if (auto v = d.integer(kd::max_connections_per_origin)) o.max_connections_per_origin = *v;
        if (auto v = d.duration<std::chrono::milliseconds>(kd::connect_timeout_ms)) o.connect_timeout = *v;
        if (auto v = d.duration<std::chrono::milliseconds>(kd::idle_timeout_ms)) o.idle_timeout = *v;
        if (auto v = d.integer(kd::max_response_bytes)) o.max_response_bytes = *v;
    }
    if (r.has(k::telemetry_key)) config.telemetry = telemetry::read_telemetry_section(r.section(k::telemetry_key));
    read_pipeline_sections(r, config);
    read_scope_requirements(r, config);
    check_profile_names(r, config);
    read_access(r, config);
    return config;
}

}  // namespace toolport
