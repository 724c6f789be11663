// SourceSettings: a source's own section of the configuration file, e.g.
//
//   packs:
//     tango:
//       base_url: https://tango.makegov.com
//       spending_summary_max_pages: 20
//
// read through the one configuration reader (config::Settings, src/config/settings.hpp):
// the loader hands each source its section with ${ENV} already expanded and the line of
// every key remembered, so a source reads its settings with the same "file:line: key:
// what" errors as the rest of the configuration, and the file is checked when it is
// loaded (`toolport config check`), not when the source starts. Values written in YAML
// arrive as strings; tests may build settings from JSON numbers and booleans too.
#pragma once

#include "config/settings.hpp"
#include "util/json.hpp"

namespace toolport::providers {

using SourceSettings = config::Settings;
using SettingsError = config::SettingsError;

}  // namespace toolport::providers
