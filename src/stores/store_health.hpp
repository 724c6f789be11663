// How a shared store is doing, as /health reports it.
#pragma once

#include <string_view>

namespace toolport::stores {

enum class StoreState {
    available,    // in-process store, or Redis connected
    degraded,     // Redis unreachable: serving from the local fallback
    unavailable,  // Redis unreachable and no fallback (fail-closed rate limits)
};

std::string_view to_string(StoreState state);

}  // namespace toolport::stores
