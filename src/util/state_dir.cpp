#include "util/state_dir.hpp"

#include <cstdlib>
#include <filesystem>

namespace toolport::util {

std::string state_path(std::string_view name) {
    namespace fs = std::filesystem;
    if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state == '/') {
        return (fs::path(state) / "toolport" / name).string();
    }
    if (const char* home = std::getenv("HOME"); home && *home == '/') {
        return (fs::path(home) / ".local" / "state" / "toolport" / name).string();
    }
    return {};
}

}  // namespace toolport::util
