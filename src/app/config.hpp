// Toolport's configuration: one YAML file, ${ENV} expansion, then command-line flags on
// top. Loading validates as it goes: an unknown key or a value of the wrong type is an
// error that names the file, the line and the key.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "discovery/served_entries.hpp"
#include "http_client/http_client.hpp"
#include "pipeline/policy.hpp"
#include "providers/pin_guard.hpp"
#include "providers/source_settings.hpp"
#include "server/server.hpp"
#include "stores/audit_log.hpp"
#include "stores/stores.hpp"
#include "telemetry/telemetry_settings.hpp"
#include "transports/http_options.hpp"
#include "transports/stdio_transport.hpp"

namespace toolport {

// A source configured by name under its kind's key (`rest: {agentpmt: {preset: agentpmt}}`,
// `openapi: {petstore: {document: ./petstore.yaml}}`), or by --rest / --openapi.
struct SourceInstance {
    std::string kind;  // "rest", "openapi" or "gateway" (providers::find_instance_kind)
    std::string name;  // the source's name: its tools' source and service, its /health component
    providers::SourceSettings settings;
};

struct Config {
    std::string file;  // the file it was read from ("": the defaults)
    enum class Transport { http, stdio };
    Transport transport = Transport::http;
    ServerOptions server;
    HttpOptions http;
    StdioOptions stdio;
    // The sources to start, in order (`packs:` as a list or a mapping, or --packs).
    std::vector<std::string> packs;
    // Each source's own section (`packs: {tango: {...}}`); a source without one gets
    // empty settings. Kept when --packs replaces the list.
    std::map<std::string, providers::SourceSettings> pack_settings;
    // REST catalogs and OpenAPI documents, started after the packs in this order.
    std::vector<SourceInstance> instances;
    pipeline::PipelineConfig pipeline;  // stage defaults, per source, per tool, per service
    stores::StoreOptions store;         // memory, or redis:// shared by replicas
    // `sessions: shared` (or TOOLPORT_SESSIONS=shared): Streamable HTTP sessions live in the
    // Redis store too, so any replica serves any session. Needs a redis:// store.
    bool shared_sessions = false;
    // The HTTP client sources use to call web APIs (`downstream:`; proxies from the
    // environment).
    http_client::ClientOptions downstream;
    // `reload.min_interval_s`: a reload (SIGHUP, POST /admin/reload) starts at most this
    // often, and never while the last one still runs; one asked meanwhile is answered with
    // that one's outcome. 0: only "never while one runs".
    std::chrono::seconds reload_min_interval{3};
    // `audit:`: the audit log (its path empty until serve fills in the default, with its
    // Redis URL from `store:`).
    stores::AuditOptions audit;
    // `pinning:` and each `sources.<name>.pinning` (providers/pin_guard.hpp); the file
    // is the state directory's pins.json unless `pinning.path` names one; `pinning.store`
    // (auto, file or redis) picks the file or the redis:// store's pins.
    pins::PinSettings pinning;
    std::string pins_path;
    std::string pins_store = "auto";
    std::string audit_stream;  // empty: <store.key_prefix>audit
    bool audit_redis = true;
    std::string log_level = "info";
    std::string log_format = "json";  // json (one object per line) or text
    std::string log_file;             // empty: stderr
    // `telemetry:` with the OTEL_* environment variables on top: trace export.
    telemetry::TelemetrySettings telemetry;
    // `access:`: allow and deny rules by principal (app/access_config.hpp); null without.
    std::shared_ptr<const auth::AccessPolicy> access;
    // `registry.serve`: the registry entries, Server Cards and AI Catalog served over HTTP.
    discovery::ServeSettings registry_serve;
    // The sources and profiles the rules name, where (for access_warnings).
    struct AccessName {
        bool source = true;  // else a gateway profile
        std::string name;
        std::string where;  // "FILE:LINE: access.rules[N].sources"
    };
    std::vector<AccessName> access_names;
};

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Reads `path` (throws ConfigError). An empty path gives the embedded defaults.
Config load_config(const std::string& path);
// --rest NAME: the REST catalog preset NAME (agentpmt) as an instance of that name, unless
// the file already configures one. Throws ConfigError for an unknown preset.
void add_rest_preset(Config& config, const std::string& preset);
// --openapi FILE_OR_URL: an OpenAPI source named after the document's file name.
void add_openapi_document(Config& config, const std::string& document);
// --import FILE: every server of a Claude Desktop / Cursor (`mcpServers`) or VS Code
// (`servers`) JSON file as an upstream of the gateway (throws ConfigError). An entry that
// is Toolport importing the same file is skipped, and so is the whole file when this
// process was started from an import of it (kImportMarker): each would start Toolport
// inside itself without end. Returns a warning for each thing skipped.
std::vector<std::string> import_mcp_servers(Config& config, const std::string& file);
// The environment variable an imported server's process gets: the files (one a line, as
// absolute paths) that the Toolports above it import.
inline constexpr const char* kImportMarker = "TOOLPORT_IMPORTED_FILES";
// --upstream NAME=COMMAND_OR_URL: one upstream MCP server (a URL when it starts with
// http:// or https://, else a command line split as a shell would, without a shell).
void add_upstream(Config& config, const std::string& spec);
// Parses "HOST:PORT", "[v6]:PORT" or ":PORT" into the HTTP options (throws ConfigError).
void apply_listen(HttpOptions& http, const std::string& listen);
// Parses a number of I/O threads, 0 to 64, or "auto" (throws ConfigError naming `where`).
int parse_io_threads(const std::string& text, const std::string& where);
// Replaces ${NAME} and ${NAME:-default} with environment values (throws ConfigError for
// an unset variable without a default).
std::string expand_env(const std::string& text, const std::string& where);

}  // namespace toolport
