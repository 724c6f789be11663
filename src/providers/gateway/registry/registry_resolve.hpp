// A registry upstream's entry: the one kept in the state directory (registry_store.hpp),
// else asked of the registry and kept.
#pragma once

#include <string>

#include "async/task.hpp"
#include "providers/gateway/registry/registry_api.hpp"
#include "providers/gateway/registry/registry_store.hpp"

namespace toolport::registry {

// `requested`: an exact version or "latest". `refresh`: ask the registry even when an entry
// is kept (toolport registry update); otherwise the kept entry answers without a request.
// Throws RegistryError when the registry must be asked and cannot answer.
Task<KeptEntry> resolve_entry(RegistryClient& client, std::string state_dir, std::string name, std::string requested,
                              bool refresh);

}  // namespace toolport::registry
