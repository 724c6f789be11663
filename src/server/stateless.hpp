// The stateless revision (2026-07-28): no handshake; every request carries its protocol
// version, client capabilities and client info in `_meta`; results carry `resultType`
// (and, for lists and reads, `ttlMs`/`cacheScope`); HTTP requests mirror the method and
// name in `Mcp-Method`/`Mcp-Name` headers, which must match the body.
#pragma once

#include <optional>
#include <string>

#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "server/log_level.hpp"
#include "util/json.hpp"

namespace toolport {

class McpServer;
class RequestContext;

namespace meta_key {
inline constexpr const char* kProtocolVersion = "io.modelcontextprotocol/protocolVersion";
inline constexpr const char* kClientCapabilities = "io.modelcontextprotocol/clientCapabilities";
inline constexpr const char* kClientInfo = "io.modelcontextprotocol/clientInfo";
inline constexpr const char* kServerInfo = "io.modelcontextprotocol/serverInfo";
inline constexpr const char* kLogLevel = "io.modelcontextprotocol/logLevel";
}  // namespace meta_key

struct StatelessMeta {
    bool present = false;                        // _meta names a protocol version
    std::string requested;                       // the version text as sent
    std::optional<protocol::Revision> revision;  // nullopt when unsupported
    bool has_capabilities = false;
};

StatelessMeta read_stateless_meta(const Json& params);
const Json& stateless_client_capabilities(const Json& params);
// From a request's `_meta` object (RequestContext::meta), null when it has none.
std::optional<LogLevel> stateless_log_level(const Json* meta);

// -32022 with the supported versions in `data`.
Json unsupported_version_error(const protocol::RequestId& id, const std::string& requested);
// An error reply when the request lacks _meta the revision requires (null when fine).
Json check_required_capabilities(const protocol::Request& request, const StatelessMeta& meta);

// Adds resultType (and serverInfo in _meta) to a stateless result. With `raw_server_info`
// the serverInfo is raw JSON (McpServer::server_info_raw): only for a result that is written
// with protocol::serialize and read by nothing else.
void decorate_stateless_result(Json& result, const McpServer& server, bool raw_server_info = false);
// Adds ttlMs/cacheScope to list and read results.
void mark_cacheable(Json& result, const McpServer& server);
Json discover_result(const McpServer& server, const RequestContext& ctx);

}  // namespace toolport
