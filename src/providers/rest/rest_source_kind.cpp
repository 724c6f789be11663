// REST catalogs (rest_catalog_source.cpp): named instances under `rest:`.
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::rest {
// Its table of settings and its key in the file (the JSON Schema, docs/configuration.md and
// the reader use them): catalog_settings.cpp.
const config::Section& settings_table();
const config::Key& file_key();
}  // namespace toolport::rest

namespace toolport::providers {

std::unique_ptr<Source> make_rest_catalog_source(const SourceSettings& settings);

SourceKind rest_source_kind() {
    return {
        .name = "rest",
        .summary = "tools defined by a REST API's catalog, calls proxied to it (`rest:`, --rest agentpmt)",
        .make = make_rest_catalog_source,
        .named_instances = true,
        .file_keys = {&rest::file_key()},
        .settings = &rest::settings_table(),
    };
}

}  // namespace toolport::providers
