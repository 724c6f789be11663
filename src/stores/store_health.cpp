#include "stores/store_health.hpp"

namespace toolport::stores {

std::string_view to_string(StoreState state) {
    switch (state) {
        case StoreState::available: return "available";
        case StoreState::degraded: return "degraded";
        case StoreState::unavailable: return "unavailable";
    }
    return "unknown";
}

}  // namespace toolport::stores
