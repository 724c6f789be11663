#include "console/static_assets.hpp"

#include <algorithm>
#include <cstddef>

namespace toolport::console {

// The table generated at build time (build/generated/console_assets.cpp), sorted by path.
namespace embedded {
extern const StaticAsset assets[];
extern const std::size_t asset_count;
}  // namespace embedded

const StaticAsset* find_static_asset(std::string_view path) {
    const StaticAsset* begin = embedded::assets;
    const StaticAsset* end = embedded::assets + embedded::asset_count;
    const StaticAsset* found = std::lower_bound(begin, end, path, [](const StaticAsset& asset, std::string_view p) {
        return asset.path < p;
    });
    return found != end && found->path == path ? found : nullptr;
}

}  // namespace toolport::console
