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

#include "app/config_reader.hpp"
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

// An absolute http(s) URL without query or fragment (https only unless `allow_http`).
void check_auth_url(const ConfigReader& r, const YAML::Node& node, const std::string& key, const std::string& url,
                    bool allow_http) {
    if (url.find_first_of("?#") != std::string::npos) r.fail(node, key, "must not have a query or fragment");
    http_client::Url parsed;
    try {
        parsed = http_client::parse_url(url);
    } catch (const std::invalid_argument& e) {
        r.fail(node, key, fmt::format("must be an absolute https:// URL ({})", e.what()));
    }
    if (!parsed.https && !allow_http) {
        r.fail(node, key, "must be an https:// URL (allow_http: true permits http:// for tests on loopback)");
    }
}

std::vector<std::string> scope_list(const ConfigReader& r, const YAML::Node& node, const std::string& key) {
    auto scopes = r.list(node, key);
    for (std::size_t i = 0; i < scopes.size(); ++i) {
        if (!auth::valid_scope_token(scopes[i]))
            r.fail(node[i], key, fmt::format("\"{}\" is not a scope (printable ASCII without spaces, quotes or backslashes)",
                                             scopes[i]));
    }
    return scopes;
}

// Every scope of `scopes` is one the metadata lists (when auth.scopes_supported is given):
// a scope it does not list could never be asked for.
void check_supported(const ConfigReader& r, const YAML::Node& node, const std::string& key,
                     const std::vector<std::string>& scopes, const std::vector<std::string>& supported) {
    if (supported.empty()) return;
    for (std::size_t i = 0; i < scopes.size(); ++i) {
        if (std::find(supported.begin(), supported.end(), scopes[i]) == supported.end())
            r.fail(node[i] ? node[i] : node, key, fmt::format("\"{}\" is not in auth.scopes_supported", scopes[i]));
    }
}

// `auth.introspection`: where and how opaque tokens are checked (RFC 7662).
void read_introspection(const ConfigReader& r, const YAML::Node& n, ResourceServerOptions& o) {
    auto& i = o.introspection;
    i.enabled = true;
    if (n.IsNull()) {  // `introspection:` alone: the discovered endpoint, no client authentication
        i.auth_method = "none";
        return;
    }
    r.only_keys(n, "auth.introspection", {"endpoint", "client_id", "client_secret", "client_secret_env", "auth_method",
                                          "cache_max_s", "negative_cache_s"});
    if (n["endpoint"]) {
        i.endpoint = r.str(n["endpoint"], "auth.introspection.endpoint");
        check_auth_url(r, n["endpoint"], "auth.introspection.endpoint", i.endpoint, o.allow_http);
    }
    if (n["client_id"]) i.client_id = r.str(n["client_id"], "auth.introspection.client_id");
    if (n["client_secret"] && n["client_secret_env"]) {
        r.fail(n["client_secret_env"], "auth.introspection.client_secret_env", "give client_secret or client_secret_env, not both");
    }
    if (n["client_secret"]) i.client_secret = r.str(n["client_secret"], "auth.introspection.client_secret");
    if (n["client_secret_env"]) {
        auto name = r.str(n["client_secret_env"], "auth.introspection.client_secret_env");
        const char* value = std::getenv(name.c_str());
        if (!value || !*value) {
            r.fail(n["client_secret_env"], "auth.introspection.client_secret_env",
                   fmt::format("environment variable {} is not set", name));
        }
        i.client_secret = value;
    }
    i.auth_method = i.client_id.empty() ? "none" : "client_secret_basic";
    if (n["auth_method"]) i.auth_method = r.str(n["auth_method"], "auth.introspection.auth_method");
    if (i.auth_method != "none" && i.auth_method != "client_secret_basic" && i.auth_method != "client_secret_post") {
        r.fail(n["auth_method"], "auth.introspection.auth_method",
               "must be client_secret_basic, client_secret_post or none");
    }
    if (i.auth_method != "none" && (i.client_id.empty() || i.client_secret.empty())) {
        r.fail(n, "auth.introspection",
               fmt::format("{} needs client_id and client_secret (or client_secret_env)", i.auth_method));
    }
    if (n["cache_max_s"])
        i.cache_max = std::chrono::seconds(r.integer(n["cache_max_s"], "auth.introspection.cache_max_s", 0, 86400));
    if (n["negative_cache_s"]) {
        i.negative_cache =
            std::chrono::seconds(r.integer(n["negative_cache_s"], "auth.introspection.negative_cache_s", 0, 3600));
    }
}

// `auth:`: Toolport as an OAuth 2.1 resource server (see ResourceServerOptions).
void read_auth(const ConfigReader& r, const YAML::Node& a, ResourceServerOptions& o) {
    r.only_keys(a, "auth", {"issuer", "resource", "scopes_supported", "required_scopes", "allow_http", "clock_skew_s",
                            "jwks_refetch_floor_ms", "introspection", "token_format", "profiles", "admin_scope"});
    if (!a["issuer"]) r.fail(a, "auth.issuer", "is required: the authorization server that issues the access tokens");
    if (a["allow_http"]) o.allow_http = r.boolean(a["allow_http"], "auth.allow_http");
    o.issuer = r.str(a["issuer"], "auth.issuer");
    check_auth_url(r, a["issuer"], "auth.issuer", o.issuer, o.allow_http);
    if (a["resource"]) {
        o.resource = r.str(a["resource"], "auth.resource");
        // The resource identifier is what clients name; plain http is fine on loopback.
        check_auth_url(r, a["resource"], "auth.resource", o.resource, true);
    }
    if (a["scopes_supported"]) o.scopes_supported = scope_list(r, a["scopes_supported"], "auth.scopes_supported");
    if (a["required_scopes"]) o.required_scopes = scope_list(r, a["required_scopes"], "auth.required_scopes");
    if (a["clock_skew_s"]) o.clock_skew = std::chrono::seconds(r.integer(a["clock_skew_s"], "auth.clock_skew_s", 0, 600));
    if (a["jwks_refetch_floor_ms"]) {
        o.jwks_refetch_floor = std::chrono::milliseconds(
            r.integer(a["jwks_refetch_floor_ms"], "auth.jwks_refetch_floor_ms", 0, 24LL * 3600 * 1000));
    }
    check_supported(r, a["required_scopes"], "auth.required_scopes", o.required_scopes, o.scopes_supported);
    if (auto s = a["admin_scope"]) {
        // /metrics and /admin/reload: the scope that makes an access token an operator's.
        o.admin_scope = r.str(s, "auth.admin_scope");
        if (!auth::valid_scope_token(o.admin_scope))
            r.fail(s, "auth.admin_scope", "is not a scope (printable ASCII without spaces, quotes or backslashes)");
        if (!o.scopes_supported.empty() &&
            std::find(o.scopes_supported.begin(), o.scopes_supported.end(), o.admin_scope) == o.scopes_supported.end())
            r.fail(s, "auth.admin_scope", fmt::format("\"{}\" is not in auth.scopes_supported", o.admin_scope));
    }
    if (auto i = a["introspection"]) read_introspection(r, i, o);
    if (auto f = a["token_format"]) {
        auto format = r.str(f, "auth.token_format");
        if (format != "jwt" && format != "opaque") r.fail(f, "auth.token_format", "must be jwt or opaque");
        o.opaque_tokens = format == "opaque";
        if (o.opaque_tokens && !o.introspection.enabled)
            r.fail(f, "auth.token_format", "opaque tokens need auth.introspection (the endpoint that checks them)");
    }
    if (auto p = a["profiles"]) {
        if (!p.IsMap()) r.fail(p, "auth.profiles", "must be a mapping of gateway profile names to {scopes: [...]}");
        for (const auto& kv : p) {
            const auto name = kv.first.as<std::string>();
            const std::string key = "auth.profiles." + name;
            r.only_keys(kv.second, key, {"scopes"});
            if (!kv.second["scopes"]) r.fail(kv.second, key + ".scopes", "is required");
            auto scopes = scope_list(r, kv.second["scopes"], key + ".scopes");
            check_supported(r, kv.second["scopes"], key + ".scopes", scopes, o.scopes_supported);
            o.scopes.profiles[name] = std::move(scopes);
        }
    }
}

// `tools.<name>.scopes` and `sources.<name>.scopes` (the rest of those sections is the
// pipeline's), after `auth:` and the sources are read; then the scopes the metadata
// publishes when auth.scopes_supported does not list them.
void read_scope_requirements(const ConfigReader& r, const YAML::Node& root, Config& config) {
    auto& o = config.http.oauth;
    const bool listed = !o.scopes_supported.empty();
    for (const char* section : {"tools", "sources"}) {
        auto s = root[section];
        if (!s || !s.IsMap()) continue;
        auto& target = std::string_view(section) == "tools" ? o.scopes.tools : o.scopes.sources;
        for (const auto& kv : s) {
            auto scopes_node = kv.second.IsMap() ? kv.second["scopes"] : YAML::Node();
            if (!scopes_node) continue;
            const std::string key = std::string(section) + "." + kv.first.as<std::string>() + ".scopes";
            if (o.issuer.empty()) {
                r.fail(scopes_node, key, "scopes are asked of OAuth access tokens: configure auth: (issuer, ...) first");
            }
            auto scopes = scope_list(r, scopes_node, key);
            check_supported(r, scopes_node, key, scopes, o.scopes_supported);
            target[kv.first.as<std::string>()] = std::move(scopes);
        }
    }
    // A profile's scopes for a profile the gateway does not have would guard nothing.
    if (!o.scopes.profiles.empty()) {
        std::set<std::string> profiles;
        for (const auto& instance : config.instances) {
            if (instance.kind != "gateway") continue;
            if (auto p = instance.settings.value("profiles"); p && p->is_object()) {
                for (const auto& [name, value] : p->items()) profiles.insert(name);
            }
        }
        for (const auto& [name, scopes] : o.scopes.profiles) {
            if (!profiles.count(name)) {
                r.fail(root["auth"]["profiles"][name], "auth.profiles." + name,
                       "is not a profile of the gateway (gateway.profiles)");
            }
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

// A source's section as JSON (scalars as ${ENV}-expanded strings), with the line of each
// key so the source's own checks can name it.
Json settings_value(const ConfigReader& r, const YAML::Node& node, const std::string& key, const std::string& path,
                    std::map<std::string, int>& lines) {
    lines[path] = static_cast<int>(node.Mark().line) + 1;
    if (node.IsNull()) return nullptr;
    if (node.IsMap()) {
        Json object = Json::object();
        for (const auto& kv : node) {
            const auto name = kv.first.as<std::string>();
            object[name] = settings_value(r, kv.second, key + "." + name, path.empty() ? name : path + "." + name, lines);
        }
        return object;
    }
    if (node.IsSequence()) {
        Json array = Json::array();
        for (const auto& item : node) array.push_back(settings_value(r, item, key, path, lines));
        return array;
    }
    return r.str(node, key);
}

// A pack name of `packs:`, known (else the error names the file, the line and the closest).
std::string pack_name(const ConfigReader& r, const YAML::Node& node, const std::string& name) {
    if (!providers::find_source_kind(name)) r.fail(node, "packs", providers::unknown_pack_message(name));
    return name;
}

// `packs: [a, b]`, `packs: a, b` (as the --packs flag), or `packs: {a: {settings}, b: null}`.
// A section is checked now, by building the source from it, so `toolport config check`
// finds its mistakes.
void read_packs(const ConfigReader& r, const YAML::Node& node, Config& config) {
    if (node.IsSequence()) {
        config.packs.clear();
        for (const auto& item : node) config.packs.push_back(pack_name(r, item, r.str(item, "packs")));
        return;
    }
    if (node.IsScalar()) {
        config.packs.clear();
        for (const auto& name : split_tokens(r.str(node, "packs"))) config.packs.push_back(pack_name(r, node, name));
        return;
    }
    if (!node.IsMap())
        r.fail(node, "packs", "must be a list of pack names (or a comma-separated string) or a mapping of pack name to settings");
    config.packs.clear();
    for (const auto& kv : node) {
        const auto name = kv.first.as<std::string>();
        const std::string key = "packs." + name;
        const auto* kind = providers::find_source_kind(name);
        if (!kind) pack_name(r, kv.first, name);
        if (!kv.second.IsNull() && !kv.second.IsMap()) r.fail(kv.second, key, "must be a mapping of settings (or empty)");
        std::map<std::string, int> lines;
        Json values = settings_value(r, kv.second, key, "", lines);
        providers::SourceSettings settings(std::move(values), key, r.file, std::move(lines));
        try {
            kind->make(settings);
        } catch (const providers::SettingsError& e) {
            throw ConfigError(e.what());
        } catch (const providers::SourceError& e) {
            r.fail(kv.second, key, e.what());
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

// `rest: {name: {settings}}` and `openapi: {name: {settings}}`.
void read_instances(const ConfigReader& r, const YAML::Node& node, const std::string& kind_name, Config& config) {
    const auto* kind = providers::find_instance_kind(kind_name);
    if (!node.IsMap()) r.fail(node, kind_name, "must be a mapping of names to settings");
    for (const auto& kv : node) {
        const auto name = kv.first.as<std::string>();
        const std::string key = kind_name + "." + name;
        if (!valid_instance_name(name)) r.fail(kv.first, key, "names are 1-64 of A-Z a-z 0-9 _ -");
        if (!kv.second.IsMap()) r.fail(kv.second, key, "must be a mapping of settings");
        if (has_instance(config, name)) r.fail(kv.first, key, "another rest: or openapi: source has this name");
        std::map<std::string, int> lines;
        Json values = settings_value(r, kv.second, key, "", lines);
        providers::SourceSettings settings(std::move(values), key, r.file, std::move(lines));
        check_instance(*kind, settings, fmt::format("{}:{}: ", r.file, kv.first.Mark().line + 1));
        config.instances.push_back({kind_name, name, std::move(settings)});
    }
}

// `upstreams:` and `gateway:` together: one gateway source (named "gateway") whose
// settings hold both, each key with its line.
void read_gateway(const ConfigReader& r, const YAML::Node& root, Config& config) {
    std::map<std::string, int> lines;
    Json values = Json::object();
    if (auto g = root["gateway"]) {
        if (!g.IsMap()) r.fail(g, "gateway", "must be a mapping of settings");
        values = settings_value(r, g, "gateway", "", lines);
        if (values.contains("upstreams")) r.fail(g["upstreams"], "gateway.upstreams", "upstreams: is a top-level key");
    }
    if (auto u = root["upstreams"]) {
        if (!u.IsMap()) r.fail(u, "upstreams", "must be a mapping of names to settings");
        values["upstreams"] = settings_value(r, u, "upstreams", "upstreams", lines);
    }
    providers::SourceSettings settings(std::move(values), "gateway", r.file, std::move(lines));
    const auto& section = root["gateway"] ? root["gateway"] : root["upstreams"];
    check_instance(*providers::find_instance_kind("gateway"), settings,
                   fmt::format("{}:{}: ", r.file, section.Mark().line + 1));
    config.instances.push_back({"gateway", "gateway", std::move(settings)});
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
    Json values = Json::object();
    for (const char* key : {"prefix_mode", "separator", "tool_search", "profiles", "upstreams"}) {
        if (auto v = instance.settings.value(key)) values[key] = *v;
    }
    if (!values.contains("upstreams")) values["upstreams"] = Json::object();
    for (const auto& [name, settings] : upstreams.items()) {
        if (!values["upstreams"].contains(name)) values["upstreams"][name] = settings;
    }
    providers::SourceSettings merged(std::move(values), "gateway (with " + origin + ")");
    check_instance(*providers::find_instance_kind("gateway"), merged);
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
        warnings.push_back(fmt::format("--import {}: skipped: this Toolport was started by one that imports the "
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
                warnings.push_back(fmt::format("--import {}: skipped the server \"{}\": it is Toolport importing "
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
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
            auto close = text.find('}', i + 2);
            if (close == std::string::npos) throw ConfigError(fmt::format("{}: unclosed ${{ in \"{}\"", where, text));
            std::string name = text.substr(i + 2, close - i - 2);
            std::string fallback;
            bool has_fallback = false;
            if (auto d = name.find(":-"); d != std::string::npos) {
                fallback = name.substr(d + 2);
                name = name.substr(0, d);
                has_fallback = true;
            }
            const char* value = std::getenv(name.c_str());
            if (value && *value) out += value;
            else if (has_fallback) out += fallback;
            else throw ConfigError(fmt::format("{}: environment variable {} is not set", where, name));
            i = close;
        } else {
            out += text[i];
        }
    }
    return out;
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

Config load_config(const std::string& path) {
    try {
        Config config = load_config_unchecked(path);
        apply_pipeline_env(config);
        if (const char* sessions = std::getenv("TOOLPORT_SESSIONS"); sessions && *sessions) {
            const std::string value = sessions;
            if (value != "shared" && value != "local")
                throw ConfigError("environment variable TOOLPORT_SESSIONS must be \"shared\" or \"local\"");
            config.shared_sessions = value == "shared";
        }
        if (config.shared_sessions && config.store.url.rfind("redis://", 0) != 0) {
            throw ConfigError(fmt::format("{}sessions: shared needs the Redis store (store: redis://host:port), "
                                          "which the replicas share",
                                          path.empty() ? std::string() : path + ": "));
        }
        return config;
    } catch (const ConfigError&) {
        throw;
    } catch (const YAML::Exception& e) {
        // Anything yaml-cpp rejects that the readers above did not name (odd keys, bad
        // conversions): still a configuration error with the file and line.
        throw ConfigError(fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
    }
}

// A file that is an MCP client's server list (Claude Desktop's mcpServers, VS Code's
// servers, JSON with comments) rather than Toolport's YAML: said with the flag that reads it.
static void refuse_server_list(const std::string& path) {
    std::ifstream in(path);
    if (!in) return;  // said below, as for any file
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto doc = Json::parse(text, nullptr, false, true);
    if (doc.is_object() && (doc.contains("mcpServers") || doc.contains("servers"))) {
        throw ConfigError(fmt::format("{}: this is an MCP client's server list ({}), not a Toolport configuration; "
                                      "use --import {}",
                                      path, doc.contains("mcpServers") ? "mcpServers" : "servers", path));
    }
}

static Config load_config_unchecked(const std::string& path) {
    Config config;
    if (path.empty()) return config;
    refuse_server_list(path);
    YAML::Node root;
    try {
        root = YAML::LoadFile(path);
    } catch (const YAML::BadFile&) {
        throw ConfigError(fmt::format("cannot read config file \"{}\"", path));
    } catch (const YAML::ParserException& e) {
        throw ConfigError(fmt::format("{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.msg));
    }
    if (root.IsNull()) return config;
    ConfigReader r{path};
    r.only_keys(root, "",
                {"server", "http", "stdio", "packs", "rest", "openapi", "upstreams", "gateway", "log", "pipeline", "services", "sources", "tools", "store",
                 "downstream", "sessions", "auth", "reload"});

    if (auto s = root["server"]) {
        r.only_keys(s, "server", {"name", "title", "instructions", "transport", "page_size", "client_request_timeout_ms",
                                  "task_ttl_ms", "task_poll_interval_ms", "task_threshold_ms", "wait_for_sources_ms"});
        if (s["name"]) config.server.name = r.str(s["name"], "server.name");
        if (s["title"]) config.server.title = r.str(s["title"], "server.title");
        if (s["instructions"]) config.server.instructions = r.str(s["instructions"], "server.instructions");
        if (s["transport"]) {
            auto t = r.str(s["transport"], "server.transport");
            if (t == "http") config.transport = Config::Transport::http;
            else if (t == "stdio") config.transport = Config::Transport::stdio;
            else r.fail(s["transport"], "server.transport", "must be http or stdio");
        }
        if (s["page_size"]) config.server.page_size = r.integer(s["page_size"], "server.page_size", 1, 10000);
        if (s["task_ttl_ms"]) {
            config.server.task_ttl =
                std::chrono::milliseconds(r.integer(s["task_ttl_ms"], "server.task_ttl_ms", 1000, 7LL * 86400000));
        }
        if (s["task_poll_interval_ms"]) {
            config.server.task_poll_interval = std::chrono::milliseconds(
                r.integer(s["task_poll_interval_ms"], "server.task_poll_interval_ms", 1, 3600000));
        }
        if (s["task_threshold_ms"]) {
            config.server.task_threshold = std::chrono::milliseconds(
                r.integer(s["task_threshold_ms"], "server.task_threshold_ms", 0, 3600000));
        }
        if (s["wait_for_sources_ms"]) {
            config.server.wait_for_sources = std::chrono::milliseconds(
                r.integer(s["wait_for_sources_ms"], "server.wait_for_sources_ms", 0, 600000));
        }
        if (s["client_request_timeout_ms"]) {
            config.server.client_request_timeout = std::chrono::milliseconds(
                r.integer(s["client_request_timeout_ms"], "server.client_request_timeout_ms", 1, 86400000));
        }
    }
    if (auto h = root["http"]) {
        r.only_keys(h, "http",
                    {"listen", "path", "max_body_bytes", "max_header_bytes", "max_json_depth", "max_sessions",
                     "session_idle_timeout_s", "allowed_origins", "allowed_hosts", "bearer_tokens_env",
                     "bearer_tokens_file", "legacy_sse", "sse_retry_ms", "max_replay_events", "max_replay_bytes",
                     "write_timeout_s", "keep_alive_timeout_s", "metrics_endpoint", "health_endpoint",
                     "public_health", "io_threads", "handshake_timeout_s", "max_connections", "max_batch_size"});
        auto& o = config.http;
        if (h["listen"]) {
            try {
                apply_listen(o, r.str(h["listen"], "http.listen"));
            } catch (const ConfigError& e) {
                r.fail(h["listen"], "http.listen", e.what());
            }
        }
        if (h["path"]) o.path = r.str(h["path"], "http.path");
        if (auto n = h["io_threads"]) {
            if (!n.IsScalar()) r.fail(n, "http.io_threads", "must be a number of threads (0-64) or \"auto\"");
            try {
                o.io_threads = parse_io_threads(n.Scalar(), "http.io_threads");
            } catch (const ConfigError&) {
                r.fail(n, "http.io_threads", "must be a number of threads (0-64) or \"auto\"");
            }
        }
        if (h["max_body_bytes"]) o.max_body_bytes = r.integer(h["max_body_bytes"], "http.max_body_bytes", 1024, 1LL << 32);
        if (h["max_header_bytes"])
            o.max_header_bytes = r.integer(h["max_header_bytes"], "http.max_header_bytes", 1024, 1 << 20);
        if (h["max_json_depth"]) o.max_json_depth = r.integer(h["max_json_depth"], "http.max_json_depth", 4, 10000);
        if (h["max_sessions"]) o.max_sessions = r.integer(h["max_sessions"], "http.max_sessions", 1, 10000000);
        if (h["session_idle_timeout_s"]) {
            o.session_idle_timeout =
                std::chrono::seconds(r.integer(h["session_idle_timeout_s"], "http.session_idle_timeout_s", 1, 86400 * 30));
        }
        if (h["handshake_timeout_s"]) {
            o.handshake_timeout =
                std::chrono::seconds(r.integer(h["handshake_timeout_s"], "http.handshake_timeout_s", 0, 86400));
        }
        if (h["max_connections"])
            o.max_connections = r.integer(h["max_connections"], "http.max_connections", 1, 10000000);
        if (h["max_batch_size"]) o.max_batch_size = r.integer(h["max_batch_size"], "http.max_batch_size", 1, 1000000);
        if (h["allowed_origins"]) o.allowed_origins = r.list(h["allowed_origins"], "http.allowed_origins");
        if (h["allowed_hosts"]) o.allowed_hosts = r.list(h["allowed_hosts"], "http.allowed_hosts");
        if (h["bearer_tokens_env"]) {
            auto name = r.str(h["bearer_tokens_env"], "http.bearer_tokens_env");
            const char* value = std::getenv(name.c_str());
            if (!value || !*value) {
                r.fail(h["bearer_tokens_env"], "http.bearer_tokens_env",
                       fmt::format("environment variable {} is not set", name));
            }
            for (auto& t : split_tokens(value)) o.bearer_tokens.push_back(t);
        }
        if (h["bearer_tokens_file"]) {
            try {
                for (auto& t : read_tokens_file(r.str(h["bearer_tokens_file"], "http.bearer_tokens_file")))
                    o.bearer_tokens.push_back(t);
            } catch (const ConfigError& e) {
                r.fail(h["bearer_tokens_file"], "http.bearer_tokens_file", e.what());
            }
        }
        if (h["legacy_sse"]) o.legacy_sse = r.boolean(h["legacy_sse"], "http.legacy_sse");
        if (h["max_replay_events"])
            o.max_replay_events = r.integer(h["max_replay_events"], "http.max_replay_events", 1, 1000000);
        if (h["max_replay_bytes"])
            o.max_replay_bytes = r.integer(h["max_replay_bytes"], "http.max_replay_bytes", 1024, 1LL << 34);
        if (h["write_timeout_s"])
            o.write_timeout = std::chrono::seconds(r.integer(h["write_timeout_s"], "http.write_timeout_s", 1, 3600));
        if (h["keep_alive_timeout_s"]) {
            o.keep_alive_timeout =
                std::chrono::seconds(r.integer(h["keep_alive_timeout_s"], "http.keep_alive_timeout_s", 1, 3600));
        }
        if (h["sse_retry_ms"]) o.sse_retry = std::chrono::milliseconds(r.integer(h["sse_retry_ms"], "http.sse_retry_ms", 0, 600000));
        if (h["metrics_endpoint"]) o.metrics_endpoint = r.boolean(h["metrics_endpoint"], "http.metrics_endpoint");
        if (h["health_endpoint"]) o.health_endpoint = r.boolean(h["health_endpoint"], "http.health_endpoint");
        if (h["public_health"]) o.public_health = r.boolean(h["public_health"], "http.public_health");
    }
    if (auto a = root["auth"]) read_auth(r, a, config.http.oauth);
    if (auto s = root["stdio"]) {
        r.only_keys(s, "stdio", {"max_message_bytes"});
        if (s["max_message_bytes"])
            config.stdio.max_message_bytes = r.integer(s["max_message_bytes"], "stdio.max_message_bytes", 1024, 1LL << 32);
    }
    if (auto p = root["packs"]) read_packs(r, p, config);
    if (auto c = root["rest"]) read_instances(r, c, "rest", config);
    if (auto o = root["openapi"]) read_instances(r, o, "openapi", config);
    if (root["upstreams"] || root["gateway"]) read_gateway(r, root, config);
    if (auto n = root["sessions"]) {
        auto value = r.str(n, "sessions");
        if (value != "shared" && value != "local") r.fail(n, "sessions", "must be shared or local");
        config.shared_sessions = value == "shared";
    }
    if (auto n = root["reload"]) {
        r.only_keys(n, "reload", {"min_interval_s"});
        if (n["min_interval_s"]) {
            config.reload_min_interval =
                std::chrono::seconds(r.integer(n["min_interval_s"], "reload.min_interval_s", 0, 86400));
        }
    }
    if (auto l = root["log"]) {
        r.only_keys(l, "log", {"level", "format", "file"});
        if (l["level"]) {
            config.log_level = r.str(l["level"], "log.level");
            if (!observability::is_log_level(config.log_level)) {
                r.fail(l["level"], "log.level", "must be one of trace, debug, info, warn, error, critical, off");
            }
        }
        if (l["format"]) {
            config.log_format = r.str(l["format"], "log.format");
            if (!observability::is_log_format(config.log_format)) r.fail(l["format"], "log.format", "must be json or text");
        }
        if (l["file"]) config.log_file = r.str(l["file"], "log.file");
    }
    if (auto d = root["downstream"]) {
        r.only_keys(d, "downstream",
                    {"ca_file", "insecure_skip_verify", "max_idle_per_origin", "max_connections_per_origin",
                     "connect_timeout_ms", "idle_timeout_ms", "max_response_bytes"});
        auto& o = config.downstream;
        if (d["ca_file"]) o.ca_file = r.str(d["ca_file"], "downstream.ca_file");
        if (d["insecure_skip_verify"]) o.insecure_skip_verify = r.boolean(d["insecure_skip_verify"], "downstream.insecure_skip_verify");
        if (d["max_idle_per_origin"]) {
            o.max_idle_per_origin = r.integer(d["max_idle_per_origin"], "downstream.max_idle_per_origin", 0, 10000);
        }
        if (d["max_connections_per_origin"]) {
            o.max_connections_per_origin =
                r.integer(d["max_connections_per_origin"], "downstream.max_connections_per_origin", 1, 10000);
        }
        if (d["connect_timeout_ms"]) {
            o.connect_timeout = std::chrono::milliseconds(r.integer(d["connect_timeout_ms"], "downstream.connect_timeout_ms", 1, 600000));
        }
        if (d["idle_timeout_ms"]) {
            o.idle_timeout = std::chrono::milliseconds(r.integer(d["idle_timeout_ms"], "downstream.idle_timeout_ms", 1, 3600000));
        }
        if (d["max_response_bytes"]) {
            o.max_response_bytes = r.integer(d["max_response_bytes"], "downstream.max_response_bytes", 1024, 1LL << 32);
        }
    }
    read_pipeline_sections(r, root, config);
    read_scope_requirements(r, root, config);
    return config;
}

}  // namespace toolport
