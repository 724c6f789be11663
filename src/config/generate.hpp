// What is generated from the declarations (declaration.hpp): the JSON Schema of a
// configuration file (draft-07, which the YAML language server reads: editors complete
// and check the file with `# yaml-language-server: $schema=...`) and its reference page
// in Markdown. Both are deterministic: the repository keeps the output
// (schema/toolport.schema.json, docs/configuration.md) and a test compares.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/declaration.hpp"

namespace toolport::config {

// The schema of a file whose top level is `file`. `id`: the schema's $id (none when empty).
nlohmann::json json_schema(const Section& file, const std::string& title, const std::string& id);

// The schema of one section's mapping (its keys; additionalProperties false when closed).
nlohmann::json section_schema(const Section& section);

// The reference page: `intro` (Markdown), then every section and key with its type, range
// or values, default, environment variable and documentation line; then the sections of
// `more` (e.g. each source kind's, by its path "packs.tango").
std::string markdown(const Section& file, const std::string& title, const std::string& intro,
                     const std::vector<std::pair<std::string, const Section*>>& more = {});

}  // namespace toolport::config
