// The `context` pack (context_source.cpp).
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::context {
// Its table of settings (the JSON Schema, docs/configuration.md and the reader use it).
const config::Section& settings_table();
}  // namespace toolport::context

namespace toolport::providers {

std::unique_ptr<Source> make_context_source(const SourceSettings& settings);

SourceKind context_source_kind() {
    return {
        .name = "context",
        .summary = "context engineering: pattern and skill library, session artifacts and memory, metrics",
        .make = make_context_source,
        .settings = &context::settings_table(),
    };
}

}  // namespace toolport::providers
