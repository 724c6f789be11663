// The HTTP side of the served entries (served_entries.hpp): the MCP Registry's v0.1 read API,
//   GET /v0.1/servers?cursor=&limit=&search=&version=&updated_since=&include_deleted=
//   GET /v0.1/servers/{name}/versions
//   GET /v0.1/servers/{name}/versions/{version|latest}
// ({name} percent-encoded, "io.example%2Ftoolport", or with its '/' as it is), each entry's
// Server Card at <its MCP URL>/server-card, and the AI Catalog that lists the cards at
// /.well-known/ai-catalog.json and /.well-known/mcp/catalog.json. Every answer has a strong
// ETag over its bytes (If-None-Match: 304) and the CORS headers SEP-2127 asks of a card.
#pragma once

#include <memory>

#include "discovery/served_entries.hpp"
#include "transports/http_options.hpp"

namespace toolport::discovery {

inline constexpr std::size_t kDefaultLimit = 30;
inline constexpr std::size_t kMaxLimit = 100;

std::shared_ptr<DiscoveryHandler> make_discovery_handler(Facts facts);

}  // namespace toolport::discovery
