// The `conformance` pack (conformance_pack.cpp).
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::providers {

std::unique_ptr<Source> make_conformance_source(const SourceSettings& settings);

SourceKind conformance_source_kind() {
    return {
        .name = "conformance",
        .summary = "the tools, resources and prompts the official MCP conformance suite drives",
        .make = make_conformance_source,
        .config_keys = {"packs.conformance"},
    };
}

}  // namespace toolport::providers
