// A REST tool catalog's settings: where its tool definitions are listed, how its tools are
// executed, and with which credentials. Written under `rest:` in the configuration, by
// name, optionally starting from a preset whose values the section's own keys replace:
//
//   rest:
//     agentpmt:
//       preset: agentpmt              # GET /products/fetch, POST /products/purchase, the two keys
//     weather:
//       base_url: https://tools.example.com
//       list: {url: /v1/tools, pagination: next, next_path: next, tools_path: data}
//       execute: {url: /v1/tools/{name}/run, body: "{arguments}", output_path: [result]}
//       credentials: {Authorization: "Bearer ${WEATHER_TOKEN}"}   # or headers_from_env
//       # or tokens from an authorization server (auth/upstream_credentials.hpp):
//       # auth: {type: client_credentials, token_endpoint: https://as.example.com/token,
//       #        client_id: toolport, client_secret: "${WEATHER_CLIENT_SECRET}"}
//
// Every URL is checked to be on the catalog's own origin (base_url) when it is used, so
// neither the catalog's answers nor a tool's arguments can make Toolport call another host.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "auth/upstream_credentials.hpp"
#include "providers/source_settings.hpp"
#include "util/json.hpp"

namespace toolport::rest {

enum class Pagination {
    none,  // one request
    page,  // ?page=N&page_size=M until has_next_path says false (or a short page)
    next,  // follow the URL at next_path until it is null
};

enum class ToolFormat {
    automatic,  // each entry by its own shape
    openai,     // {type: "function", function: {name, description, parameters}}
    bare,       // {name, description, parameters}
    mcp,        // MCP Tool objects {name, title?, description, inputSchema, outputSchema?, annotations?}
};

// Where a tool's MCP name comes from: the catalog's name, or its display name (AgentPMT's
// names are product ids; the display name is the description's part before " — ").
enum class NameFrom { name, title };

struct ListSettings {
    std::string url = "/tools";  // relative to base_url, or absolute on its origin
    std::string method = "GET";
    Pagination pagination = Pagination::none;
    std::string page_param = "page";
    std::string page_size_param = "page_size";
    int page_size = 100;
    int first_page = 1;
    std::string has_next_path = "details.has_next_page";
    std::string next_path = "next";
    std::string tools_path = "tools";  // dotted path to the array; "" = the answer itself
    std::string success_path;          // a false here is the API's refusal (with error_path)
    std::string error_path = "error";
    int max_pages = 1000;
    ToolFormat format = ToolFormat::automatic;
};

struct ExecuteSettings {
    std::string url = "/tools/{name}";  // {name}: the catalog's own name of the tool
    std::string method = "POST";
    // The request body: JSON whose string leaves "{name}" and "{arguments}" are replaced by
    // the tool's catalog name and the call's arguments ("{name}" inside a longer string is
    // replaced too). The default sends the arguments as the body.
    Json body = "{arguments}";
    // Dotted paths tried in order; the first present one is the tool's output. None
    // present: the whole answer is the output.
    std::vector<std::string> output_paths;
    // The first present non-empty one is the API's error message (the call failed).
    std::vector<std::string> error_paths = {"error"};
    // A false at any of these means the call failed.
    std::vector<std::string> success_paths = {"success"};
    // Fields of the answer kept in the result's _meta (costs, balances, receipts).
    std::vector<std::string> meta_paths;
    // When the call's arguments have this key set to true, the response is asked for as
    // text/event-stream (with stream_query added to the URL); the key is still sent.
    std::string stream_argument;
    std::string stream_query;  // e.g. "stream=true"
};

struct CatalogSettings {
    std::string preset;  // "" or "agentpmt"
    std::string base_url;
    ListSettings list;
    ExecuteSettings execute;
    // Sent with every request: fixed values (already ${ENV}-expanded by the loader) ...
    std::map<std::string, std::string> headers;
    // ... and values read from the environment when the source starts (header → variable),
    // so a preset's keys never pass through the configuration.
    std::map<std::string, std::string> headers_from_env;
    // Headers of the calling client passed through instead of the server's (per-user
    // keys); results cached for one user are then never served to another.
    std::vector<std::string> forward_headers;
    // An Authorization header from an authorization server: client_credentials for every
    // request, or token_exchange for calls (the listing then uses client_credentials).
    std::optional<auth::UpstreamAuthSettings> auth;
    NameFrom name_from = NameFrom::name;
    std::string tool_prefix;
    std::chrono::seconds refresh_interval{300};        // 0: only on reload
    std::chrono::milliseconds request_timeout{30000};  // of one request; a shorter call deadline wins
    std::chrono::seconds retry_max{60};                // longest wait between attempts while the catalog is down
    std::size_t max_response_bytes = 8u << 20;         // of one answer: a page of the list, or a call's
    std::size_t max_tools = 10000;
    // Arguments a tool's inputSchema does not name are refused even where the schema
    // allows them (by default the schema decides: additionalProperties: false refuses).
    bool strict_arguments = false;

    // Reads and checks a `rest:` section. Throws providers::SettingsError.
    static CatalogSettings from(const providers::SourceSettings& settings);
};

// The names of the presets, for messages ("agentpmt").
std::vector<std::string> preset_names();

// The keys of `rest: {<name>: {...}}` (catalog_settings.cpp): what CatalogSettings::from
// reads and the JSON Schema and docs/configuration.md list.
const config::Section& settings_table();
// The file's `rest:` key: a mapping of source names to settings_table().
const config::Key& file_key();

}  // namespace toolport::rest
