// The tango pack's settings: its section of the configuration (`packs: {tango: {...}}`)
// over the environment its users already set (TANGO_API_KEY, TANGO_BASE_URL).
//
//   packs:
//     tango:
//       base_url: https://tango.makegov.com   # else $TANGO_BASE_URL, else this
//       api_key_env: TANGO_API_KEY            # where the server's own key is read from
//       client_key_header: X-Tango-Api-Key    # a per-client key over HTTP ("" turns it off)
//       min_spacing_ms: 100                   # between requests to Tango (all replicas)
//       spending_summary_max_pages: 10        # pages of 100 contracts a summary may read
#pragma once

#include <chrono>
#include <string>

#include "providers/source_settings.hpp"

namespace toolport::tango {

// The keys of `packs: {tango: {...}}` (tango_settings.cpp): what from() reads and the
// JSON Schema and docs/configuration.md list.
const config::Section& settings_table();

struct TangoSettings {
    std::string base_url = "https://tango.makegov.com";  // no trailing slash
    std::string api_key_env = "TANGO_API_KEY";
    std::string server_api_key;  // read from api_key_env at start; never logged
    std::string client_key_header = "X-Tango-Api-Key";
    std::chrono::milliseconds min_spacing{100};
    int spending_summary_max_pages = 10;

    // Reads and checks the section (throws providers::SettingsError naming file:line:key).
    static TangoSettings from(const providers::SourceSettings& settings);
};

}  // namespace toolport::tango
