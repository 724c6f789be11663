// The registry entries, Server Cards and AI Catalog of `toolport serve` (src/discovery/),
// from `registry.serve` and what the server is: its name, version, profiles, transports and
// how clients authenticate.
#pragma once

#include <memory>

#include "transports/http_options.hpp"

namespace toolport {

class McpServer;
struct Config;

// Null when registry.serve.enabled is off; throws std::invalid_argument naming a problem
// of the configuration (two entries of one name, a profile the gateway lacks).
std::shared_ptr<DiscoveryHandler> make_discovery(const Config& config, const McpServer& server);

}  // namespace toolport
