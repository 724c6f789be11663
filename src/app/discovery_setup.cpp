#include "app/discovery_setup.hpp"

#include <chrono>

#include "app/config.hpp"
#include "discovery/discovery_documents.hpp"
#include "protocol/versions.hpp"
#include "server/server.hpp"
#include "stores/audit_record.hpp"
#include "toolport_version.hpp"

namespace toolport {

std::shared_ptr<DiscoveryHandler> make_discovery(const Config& config, const McpServer& server) {
    const auto& serve = config.registry_serve;
    if (!serve.enabled) return nullptr;
    discovery::ServeSettings settings = serve;
    // A configured auth.resource is the MCP endpoint's canonical URL already.
    if (settings.public_url.empty()) settings.public_url = config.http.oauth.resource;
    discovery::ServerIdentity identity;
    identity.name = config.server.name;
    identity.title = config.server.title;
    identity.version = kToolportVersion;
    identity.mcp_path = config.http.path;
    identity.profiles = server.view_names();
    // Streamable HTTP answers every revision from 2025-03-26 on; 2024-11-05 is the legacy
    // HTTP+SSE transport's.
    for (auto name : protocol::kRevisionNames) {
        if (name != "2024-11-05") identity.protocol_versions.emplace_back(name);
    }
    identity.legacy_sse = config.http.legacy_sse;
    if (!config.http.oauth.issuer.empty()) {
        identity.authentication = "oauth";
    } else if (!config.http.bearer_tokens.empty() || !server.view_tokens().empty()) {
        identity.authentication = "bearer";
    } else {
        identity.authentication = "none";
    }
    identity.published_at = stores::iso_time(std::chrono::system_clock::now());
    return discovery::make_discovery_handler(discovery::make_facts(settings, identity));
}

}  // namespace toolport
