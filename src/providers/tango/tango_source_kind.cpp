// The `tango` pack (tango_source.cpp).
// Found by src/providers/sources.cmake (see source_table.hpp).
#include <memory>

#include "providers/source_table.hpp"

namespace toolport::tango {
// Its table of settings (the JSON Schema, docs/configuration.md and the reader use it).
const config::Section& settings_table();
}  // namespace toolport::tango

namespace toolport::providers {

std::unique_ptr<Source> make_tango_source(const SourceSettings& settings);

SourceKind tango_source_kind() {
    return {
        .name = "tango",
        .summary = "U.S. federal contracting data from the Tango API (TANGO_API_KEY)",
        .make = make_tango_source,
        .settings = &tango::settings_table(),
    };
}

}  // namespace toolport::providers
