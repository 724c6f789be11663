#include "providers/gateway/registry/registry_resolve.hpp"

#include <spdlog/spdlog.h>

#include "util/sanitize.hpp"

namespace toolport::registry {

Task<KeptEntry> resolve_entry(RegistryClient& client, std::string state_dir, std::string name, std::string requested,
                              bool refresh) {
    if (!refresh) {
        if (auto kept = load_kept(state_dir, client.base_url(), name, requested)) co_return std::move(*kept);
    }
    Entry entry = co_await client.version(name, requested);
    KeptEntry kept;
    kept.registry = client.base_url();
    kept.name = name;
    kept.requested = requested;
    if (auto v = entry.server.find("version"); v != entry.server.end() && v->is_string()) kept.version = *v;
    if (kept.version.empty()) kept.version = requested;
    kept.resolved_at = utc_now();
    kept.entry = std::move(entry);
    try {
        keep(state_dir, kept);
        if (requested != kept.version) {
            // The exact version too: a later `version:` of it needs no request.
            KeptEntry exact = kept;
            exact.requested = kept.version;
            keep(state_dir, exact);
        }
    } catch (const std::exception& e) {
        // Served all the same; only the next start-up without the registry is affected.
        spdlog::warn("registry entry {}: not kept: {}", util::sanitize_for_message(name, 200), e.what());
    }
    co_return kept;
}

}  // namespace toolport::registry
