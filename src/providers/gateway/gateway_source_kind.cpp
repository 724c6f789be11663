// The gateway (gateway_source.cpp): one instance, named "gateway", configured by the top-level
// `upstreams:` (the servers) and `gateway:` (how they are served) together.
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::gateway {
// Its table of settings, and the file's keys that hold them (`upstreams:`, `gateway:`): the
// JSON Schema, docs/configuration.md and the reader use them (gateway_settings.cpp).
const config::Section& settings_table();
std::vector<const config::Key*> file_keys();
std::vector<const config::Key*> shared_file_keys();
}  // namespace toolport::gateway

namespace toolport::providers {

std::unique_ptr<Source> make_gateway_source(const SourceSettings& settings);

SourceKind gateway_source_kind() {
    return {
        .name = "gateway",
        .summary = "upstream MCP servers served as this server's own (`upstreams:`, --upstream, --import)",
        .make = make_gateway_source,
        .named_instances = true,
        .file_keys = gateway::file_keys(),
        .single_instance = true,
        .shared_file_keys = gateway::shared_file_keys(),
        .settings = &gateway::settings_table(),
    };
}

}  // namespace toolport::providers
