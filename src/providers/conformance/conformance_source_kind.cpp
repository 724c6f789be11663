// The `conformance` pack (conformance_pack.cpp).
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::providers {

// Its table of settings (the JSON Schema, docs/configuration.md and the reader use it).
const config::Section& conformance_settings_table();
std::unique_ptr<Source> make_conformance_source(const SourceSettings& settings);

SourceKind conformance_source_kind() {
    return {
        .name = "conformance",
        .summary = "the tools, resources and prompts the official MCP conformance suite drives",
        .make = make_conformance_source,
        .settings = &conformance_settings_table(),
    };
}

}  // namespace toolport::providers
