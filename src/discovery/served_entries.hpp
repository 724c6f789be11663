// What this Toolport says of itself to anyone before connecting: one MCP Registry entry
// (a server.json, registry v0.1 API) for the whole server and one per gateway profile, each
// entry's Server Card (SEP-2127) and the AI Catalog that lists the cards. Built from the
// configuration (`registry.serve`) once, at start; the documents are pure functions of it
// and of the MCP endpoint's URL, so they are unit-tested without a socket.
//
// They describe identity and connection only, never the tools, resources or prompts: a
// card is public pre-connection metadata (SEP-2127 leaves primitives to runtime listing,
// since what a client sees depends on who it is), and a list or a count would tell anyone
// of tools that access rules hide or pinning quarantines.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace toolport::discovery {

// `registry.serve.profiles.<profile>`.
struct ProfileEntrySettings {
    std::string name;
    std::string description;
};

// `registry.serve`.
struct ServeSettings {
    bool enabled = true;
    // The MCP endpoint's URL as clients reach it (https://mcp.example.com/mcp); empty:
    // auth.resource when set, else http://<the request's Host><http.path>.
    std::string public_url;
    std::string name;  // the whole server's entry; empty: derived (derived_server_name)
    std::string description;
    std::string website_url;
    std::string repository;  // the source repository's URL
    std::map<std::string, ProfileEntrySettings> profiles;
};

// One registry entry: the whole server (profile "") or one gateway profile.
struct Entry {
    std::string name;  // reverse-DNS, "namespace/name"
    std::string title;
    std::string description;
    std::string profile;
};

// Everything the documents say, fixed at start.
struct Facts {
    std::string version;      // Toolport's, each entry's version
    std::string mcp_path;     // http.path
    std::string public_url;   // the configured MCP endpoint URL, or ""
    std::string website_url;  // "" when not configured
    std::string repository_url;
    std::vector<std::string> protocol_versions;  // served on Streamable HTTP
    bool legacy_sse = false;                     // GET /sse + POST /messages (2024-11-05)
    std::string authentication;                  // "none", "bearer" or "oauth"
    std::string published_at;                    // when this server started (RFC 3339)
    std::vector<Entry> entries;                  // the whole server first, then the profiles
};

// What the entries are made of besides `registry.serve`.
struct ServerIdentity {
    std::string name;   // server.name
    std::string title;  // server.title
    std::string version;
    std::string mcp_path;
    std::vector<std::string> profiles;  // gateway profiles, in order
    std::vector<std::string> protocol_versions;
    bool legacy_sse = false;
    std::string authentication;
    std::string published_at;
};

// The entries and their facts; throws std::invalid_argument naming the problem (two entries
// of one name, a profile configured under registry.serve.profiles that the gateway lacks).
Facts make_facts(const ServeSettings& settings, const ServerIdentity& identity);

// A registry name's checks (the server.json schema's pattern, 3-200 characters); the
// reason it is not one, or nullopt.
std::optional<std::string> name_problem(std::string_view name);
// The reverse-DNS namespace of a URL's host (https://mcp.example.com/mcp: com.example.mcp),
// or "local.toolport" for an address, a single label or no URL.
std::string derived_namespace(std::string_view url);
// `text` with every character a name may not hold as '-' ("" stays "server").
std::string name_segment(std::string_view text);

// The MCP endpoint of `entry`, under the server's `mcp_url`.
std::string entry_url(const Entry& entry, std::string_view mcp_url);

// The entry's server.json (the 2025-12-11 schema), its registry API response ({server,
// _meta}), and its Server Card.
Json server_json(const Facts& facts, const Entry& entry, std::string_view mcp_url);
Json server_response(const Facts& facts, const Entry& entry, std::string_view mcp_url);
Json server_card(const Facts& facts, const Entry& entry, std::string_view mcp_url);
// The AI Catalog listing every entry's Server Card.
Json ai_catalog(const Facts& facts, std::string_view mcp_url);

inline constexpr std::string_view kServerJsonSchema =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
inline constexpr std::string_view kServerCardSchema =
    "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";
inline constexpr std::string_view kServerCardType = "application/mcp-server-card+json";
inline constexpr std::string_view kMetaKey = "io.toolport/server";

}  // namespace toolport::discovery
