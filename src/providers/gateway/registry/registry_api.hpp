// The MCP Registry's read API, v0.1 (frozen): a client of any registry that speaks it (the
// official one by default). Three calls:
//
//   GET /v0.1/servers?cursor=&limit=&search=&updated_since=&version=   a page of entries
//   GET /v0.1/servers/{name}/versions                                  every version of one
//   GET /v0.1/servers/{name}/versions/{version|latest}                 one entry
//
// Names and versions are percent-encoded as one path segment ("io.github.x%2Fweather").
// Each entry is {server: <server.json>, _meta: {"io.modelcontextprotocol.registry/official":
// {status, publishedAt, updatedAt, isLatest}}}; a page is {servers: [...], metadata:
// {nextCursor, count}}. The registry is a web API like any other: it goes through the
// shared HTTP client (proxies, retries, gzip), each answer capped in size and the whole call
// bounded in time.
#pragma once

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "async/task.hpp"
#include "util/json.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::registry {

inline constexpr const char* kDefaultRegistryUrl = "https://registry.modelcontextprotocol.io";
inline constexpr const char* kOfficialMeta = "io.modelcontextprotocol.registry/official";

struct Entry {
    Json server;                     // the server.json
    Json official = Json::object();  // the registry's own facts (status, isLatest, ...)
};

struct Page {
    std::vector<Entry> entries;
    std::string next_cursor;  // "" on the last page
};

struct ListQuery {
    std::string search;
    std::string cursor;
    std::string updated_since;  // RFC 3339
    std::string version;        // "latest" or an exact version; "" for every version
    int limit = 0;              // 0: the registry's default
};

struct RegistryError : std::runtime_error {
    RegistryError(const std::string& what, bool not_found_ = false) : std::runtime_error(what), not_found(not_found_) {}
    bool not_found;
};

// The base URL checked (http:// or https://) and without a trailing '/'; throws
// std::invalid_argument.
std::string normalized_base(const std::string& url);
std::string list_url(const std::string& base, const ListQuery& query);
std::string versions_url(const std::string& base, const std::string& name);
std::string version_url(const std::string& base, const std::string& name, const std::string& version);

// Answers read (RegistryError naming what is wrong).
Page parse_page(const std::string& body);
Entry parse_entry(const std::string& body);

class RegistryClient {
public:
    RegistryClient(http_client::HttpClient& http, std::string base_url, std::size_t max_response_bytes = 4u << 20,
                   std::chrono::milliseconds timeout = std::chrono::seconds(20));

    const std::string& base_url() const { return base_; }
    Task<Page> list(ListQuery query);
    Task<Page> versions(std::string name);
    Task<Entry> version(std::string name, std::string version);

private:
    Task<std::string> get(std::string url, std::string what);

    http_client::HttpClient& http_;
    std::string base_;
    std::size_t max_response_bytes_;
    std::chrono::milliseconds timeout_;
};

}  // namespace toolport::registry
