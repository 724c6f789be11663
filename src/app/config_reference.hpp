// The reference of Toolport's configuration file, generated from its declarations
// (config_table.hpp): the JSON Schema (`toolport config schema`, kept in the repository as
// schema/toolport.schema.json) and the reference page (`toolport config docs`, kept as
// docs/configuration.md). A test fails when the kept files differ from these.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/effective.hpp"

namespace toolport {

// The JSON Schema (draft-07), as printed: indented by two, ending with a newline.
std::string configuration_schema();
// docs/configuration.md.
std::string configuration_docs();

// Every key of a file as `written` (its parsed document; null for none) as it takes effect
// here: from the file, an environment variable over it, or its default, secrets as ***
// (config/effective.hpp). A pack's settings (`packs: {tango: {...}}`) are walked by its table.
std::vector<config::EffectiveRow> effective_configuration(const nlohmann::json& written);

}  // namespace toolport
