// The sections that configure the call pipeline and its stores (pipeline_config.cpp):
// pipeline, services, sources, tools, store. Their keys: config_table.hpp.
#pragma once

#include "app/config.hpp"
#include "config/settings.hpp"

namespace toolport {

// Reads them from the file's root (throws config::SettingsError naming file, line and key).
void read_pipeline_sections(const config::Settings& root, Config& config);

}  // namespace toolport
