// The reference of Toolport's configuration file, generated from its declarations
// (config_table.hpp): the JSON Schema (`toolport config schema`, kept in the repository as
// schema/toolport.schema.json) and the reference page (`toolport config docs`, kept as
// docs/configuration.md). A test fails when the kept files differ from these.
#pragma once

#include <string>

namespace toolport {

// The JSON Schema (draft-07), as printed: indented by two, ending with a newline.
std::string configuration_schema();
// docs/configuration.md.
std::string configuration_docs();

}  // namespace toolport
