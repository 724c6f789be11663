// OpenAPI documents (openapi_source.cpp): named instances under `openapi:`.
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::openapi {
// Its table of settings and its key in the file (the JSON Schema, docs/configuration.md and
// the reader use them): openapi_settings.cpp.
const config::Section& settings_table();
const config::Key& file_key();
}  // namespace toolport::openapi

namespace toolport::providers {

std::unique_ptr<Source> make_openapi_source(const SourceSettings& settings);

SourceKind openapi_source_kind() {
    return {
        .name = "openapi",
        .summary = "each operation of an OpenAPI 3.0/3.1 document as a tool (`openapi:`, --openapi FILE_OR_URL)",
        .make = make_openapi_source,
        .named_instances = true,
        .file_keys = {&openapi::file_key()},
        .settings = &openapi::settings_table(),
    };
}

}  // namespace toolport::providers
