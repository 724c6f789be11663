#include "discovery/served_entries.hpp"

#include <cctype>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "http_client/url.hpp"
#include "util/utf8.hpp"

namespace toolport::discovery {

namespace {

bool name_char(char c, bool in_namespace) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-') return true;
    return !in_namespace && c == '_';
}

// The host of an http(s) URL, lower-case ("" when it is none, or an IPv6 address).
std::string url_host(std::string_view url) {
    try {
        auto parsed = http_client::parse_url(url);
        return parsed.ipv6_literal ? std::string() : parsed.host;
    } catch (const std::invalid_argument&) {
        return {};
    }
}

bool is_address(std::string_view host) { return host.find_first_not_of("0123456789.") == std::string_view::npos; }

// The host's labels in reverse order (mcp.example.com: com.example.mcp).
std::string reverse_labels(std::string_view host) {
    std::string out;
    while (!host.empty()) {
        auto dot = host.rfind('.');
        auto label = dot == std::string_view::npos ? host : host.substr(dot + 1);
        if (!out.empty()) out += '.';
        out += label;
        host = dot == std::string_view::npos ? std::string_view() : host.substr(0, dot);
    }
    return out;
}

// The remote headers a client must send: a static bearer token is asked for; an OAuth
// client finds its way through the 401 and the Protected Resource Metadata instead. The
// header's value is "Bearer {<id>}" with the token as its variable: the user types only the
// token, and the variable's id is the entry's own, because a client keeps one secret per id
// (VS Code's gallery does): with one id for every entry, installing the whole server and a
// profile would give the profile the server's token.
Json remote_headers(const Facts& facts, const Entry& entry) {
    if (facts.authentication != "bearer") return nullptr;
    std::string id = "toolport_token";
    if (!entry.profile.empty()) {
        id += '_';
        for (char c : entry.profile) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    }
    const std::string whose = entry.profile.empty() ? std::string("this server") : "the " + entry.profile + " profile";
    return Json::array(
        {{{"name", "Authorization"},
          {"description", "A bearer token " + whose + " accepts"},
          {"isRequired", true},
          {"isSecret", true},
          {"value", "Bearer {" + id + "}"},
          {"variables",
           {{id, {{"description", "The bearer token for " + whose}, {"isRequired", true}, {"isSecret", true}}}}}}});
}

// The legacy HTTP+SSE endpoint beside the whole server's MCP endpoint ("" when not served,
// or when the public URL does not end with http.path, so /sse cannot be placed beside it).
std::string sse_url(const Facts& facts, std::string_view mcp_url) {
    if (!facts.legacy_sse) return {};
    const auto& path = facts.mcp_path;
    if (mcp_url.size() < path.size() || mcp_url.substr(mcp_url.size() - path.size()) != path) return {};
    return std::string(mcp_url.substr(0, mcp_url.size() - path.size())) + "/sse";
}

Json remotes(const Facts& facts, const Entry& entry, std::string_view mcp_url, bool with_versions) {
    Json out = Json::array();
    Json http = {{"type", "streamable-http"}, {"url", entry_url(entry, mcp_url)}};
    if (auto headers = remote_headers(facts, entry); !headers.is_null()) http["headers"] = headers;
    if (with_versions) http["supportedProtocolVersions"] = facts.protocol_versions;
    out.push_back(std::move(http));
    // The legacy transport serves a profile only to the profile's token: it is the whole
    // server's.
    if (auto sse = sse_url(facts, mcp_url); entry.profile.empty() && !sse.empty()) {
        Json legacy = {{"type", "sse"}, {"url", sse}};
        if (auto headers = remote_headers(facts, entry); !headers.is_null()) legacy["headers"] = headers;
        if (with_versions) legacy["supportedProtocolVersions"] = {"2024-11-05"};
        out.push_back(std::move(legacy));
    }
    return out;
}

Json repository(const Facts& facts) {
    auto host = url_host(facts.repository_url);
    std::string source = host;
    if (host == "github.com" || host == "www.github.com") source = "github";
    if (host == "gitlab.com" || host == "www.gitlab.com") source = "gitlab";
    return {{"url", facts.repository_url}, {"source", source}};
}

// Toolport's own facts, under its own key (`_meta` of server.json and of the card).
Json own_meta(const Facts& facts, const Entry& entry, std::string_view mcp_url) {
    Json transports = Json::array({"streamable-http"});
    if (entry.profile.empty() && !sse_url(facts, mcp_url).empty()) transports.push_back("sse");
    Json meta = {{"version", facts.version},
                 {"transports", transports},
                 {"protocolVersions", facts.protocol_versions},
                 {"authentication", facts.authentication},
                 {"serverCard", entry_url(entry, mcp_url) + "/server-card"}};
    if (!entry.profile.empty()) meta["profile"] = entry.profile;
    return {{std::string(kMetaKey), meta}};
}

// The identity fields server.json and the card share.
Json identity_fields(const Facts& facts, const Entry& entry) {
    Json out = {{"name", entry.name}, {"description", entry.description}, {"version", facts.version}};
    if (!entry.title.empty()) out["title"] = entry.title;
    if (!facts.website_url.empty()) out["websiteUrl"] = facts.website_url;
    if (!facts.repository_url.empty()) out["repository"] = repository(facts);
    return out;
}

// urn:air:{publisher}:{namespace}:{name}, the AI Catalog's identifier of a card.
std::string catalog_identifier(const Entry& entry) {
    auto slash = entry.name.find('/');
    return fmt::format("urn:air:{}:mcp:{}", reverse_labels(entry.name.substr(0, slash)), entry.name.substr(slash + 1));
}

}  // namespace

std::optional<std::string> name_problem(std::string_view name) {
    if (name.size() < 3 || name.size() > 200) return "must be 3 to 200 characters long";
    auto slash = name.find('/');
    if (slash == std::string_view::npos || slash == 0 || slash + 1 == name.size() ||
        name.find('/', slash + 1) != std::string_view::npos) {
        return "must be namespace/name in reverse-DNS form, with exactly one '/' (io.example/toolport)";
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (i == slash) continue;
        if (!name_char(name[i], i < slash)) {
            return i < slash ? "its namespace (before '/') may hold only A-Z a-z 0-9 . -"
                             : "its name (after '/') may hold only A-Z a-z 0-9 . _ -";
        }
    }
    return std::nullopt;
}

std::string derived_namespace(std::string_view url) {
    auto host = url_host(url);
    if (host.empty() || is_address(host) || host.find('.') == std::string::npos) return "local.toolport";
    for (char c : host) {
        if (!name_char(c, true)) return "local.toolport";
    }
    return reverse_labels(host);
}

std::string name_segment(std::string_view text) {
    std::string out;
    for (char c : text) out += name_char(c, false) ? c : '-';
    return out.empty() ? "server" : out;
}

Facts make_facts(const ServeSettings& settings, const ServerIdentity& identity) {
    Facts facts;
    facts.version = identity.version;
    facts.mcp_path = identity.mcp_path;
    facts.public_url = settings.public_url;
    facts.website_url = settings.website_url;
    facts.repository_url = settings.repository;
    facts.protocol_versions = identity.protocol_versions;
    facts.legacy_sse = identity.legacy_sse;
    facts.authentication = identity.authentication;
    facts.published_at = identity.published_at;

    const std::string title = identity.title.empty() ? "Toolport" : identity.title;
    Entry server;
    server.name = !settings.name.empty()
                      ? settings.name
                      : util::cut_utf8(derived_namespace(settings.public_url) + "/" + name_segment(identity.name), 200);
    server.title = util::cut_utf8(title, 100);
    server.description = util::cut_utf8(settings.description.empty()
                                            ? "MCP tools, resources and prompts served by " + title
                                            : settings.description,
                                        100);
    facts.entries.push_back(server);

    for (const auto& [profile, configured] : settings.profiles) {
        bool known = false;
        for (const auto& p : identity.profiles) known = known || p == profile;
        if (!known) {
            throw std::invalid_argument(
                fmt::format("registry.serve.profiles.{}: the gateway has no such profile (gateway.profiles)", profile));
        }
    }
    for (const auto& profile : identity.profiles) {
        Entry entry;
        entry.profile = profile;
        auto it = settings.profiles.find(profile);
        const ProfileEntrySettings configured = it == settings.profiles.end() ? ProfileEntrySettings{} : it->second;
        entry.name = !configured.name.empty() ? configured.name
                                              : util::cut_utf8(server.name + "-" + name_segment(profile), 200);
        entry.title = util::cut_utf8(fmt::format("{} ({})", title, profile), 100);
        entry.description = util::cut_utf8(!configured.description.empty()
                                               ? configured.description
                                               : fmt::format("The {} profile of {}: a chosen part of its tools",
                                                             profile, title),
                                           100);
        facts.entries.push_back(std::move(entry));
    }
    std::set<std::string> names;
    for (const auto& entry : facts.entries) {
        if (auto problem = name_problem(entry.name)) {
            throw std::invalid_argument(fmt::format("registry.serve: the entry name \"{}\" {}", entry.name, *problem));
        }
        if (!names.insert(entry.name).second) {
            throw std::invalid_argument(
                fmt::format("registry.serve: two entries are named \"{}\" (give each profile its own "
                            "registry.serve.profiles.<profile>.name)",
                            entry.name));
        }
    }
    return facts;
}

std::string entry_url(const Entry& entry, std::string_view mcp_url) {
    return entry.profile.empty() ? std::string(mcp_url) : fmt::format("{}/{}", mcp_url, entry.profile);
}

Json server_json(const Facts& facts, const Entry& entry, std::string_view mcp_url) {
    Json out = {{"$schema", std::string(kServerJsonSchema)}};
    out.update(identity_fields(facts, entry));
    out["remotes"] = remotes(facts, entry, mcp_url, false);
    out["_meta"] = own_meta(facts, entry, mcp_url);
    return out;
}

Json server_response(const Facts& facts, const Entry& entry, std::string_view mcp_url) {
    // One version per entry, published when this server started: active and the latest.
    return {{"server", server_json(facts, entry, mcp_url)},
            {"_meta",
             {{"io.modelcontextprotocol.registry/official",
               {{"status", "active"},
                {"publishedAt", facts.published_at},
                {"updatedAt", facts.published_at},
                {"isLatest", true}}}}}};
}

Json server_card(const Facts& facts, const Entry& entry, std::string_view mcp_url) {
    Json out = {{"$schema", std::string(kServerCardSchema)}};
    out.update(identity_fields(facts, entry));
    out["remotes"] = remotes(facts, entry, mcp_url, true);
    out["_meta"] = own_meta(facts, entry, mcp_url);
    return out;
}

Json ai_catalog(const Facts& facts, std::string_view mcp_url) {
    Json entries = Json::array();
    for (const auto& entry : facts.entries) {
        entries.push_back({{"identifier", catalog_identifier(entry)},
                           {"type", std::string(kServerCardType)},
                           {"url", entry_url(entry, mcp_url) + "/server-card"}});
    }
    return {{"specVersion", "1.0"}, {"entries", entries}};
}

}  // namespace toolport::discovery
