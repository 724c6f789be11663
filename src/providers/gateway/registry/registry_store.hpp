// The registry entries Toolport has resolved, kept in the state directory
// ($XDG_STATE_HOME/toolport/registry/, else ~/.local/state/toolport/registry/), one file
// per registry, server name and requested version:
//
//  - an exact version is asked of the registry once and then read from here (a published
//    version does not change): the registry's answers are cached across restarts;
//  - `latest` is resolved once and pinned here to the version it named until
//    `toolport registry update` resolves it again;
//  - when the registry cannot be reached, the kept entry is what starts the upstream: the
//    registry's unavailability never stops start-up once an entry was resolved.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "providers/gateway/registry/registry_api.hpp"

namespace toolport::registry {

struct KeptEntry {
    std::string registry;     // the registry's base URL
    std::string name;         // server name
    std::string requested;    // "latest" or the configured version
    std::string version;      // the version it resolved to
    std::string resolved_at;  // RFC 3339, UTC
    Entry entry;
};

// The directory, or "" when neither XDG_STATE_HOME nor HOME is an absolute path.
std::string registry_state_dir();
// The kept entry, or nullopt when there is none (or it cannot be read: then it is resolved again).
std::optional<KeptEntry> load_kept(const std::string& dir, const std::string& registry, const std::string& name,
                                   const std::string& requested);
// Writes it (a temporary file renamed over the old one); throws std::runtime_error.
void keep(const std::string& dir, const KeptEntry& kept);
// Every entry kept for `registry`.
std::vector<KeptEntry> kept_entries(const std::string& dir, const std::string& registry);
// Now as RFC 3339 UTC.
std::string utc_now();

}  // namespace toolport::registry
