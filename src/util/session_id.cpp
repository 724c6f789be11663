#include "util/session_id.hpp"

#include <algorithm>

namespace toolport::util {

bool valid_session_id(std::string_view id, std::size_t max_length) {
    if (id.empty() || id.size() > max_length) return false;
    return std::all_of(id.begin(), id.end(), [](unsigned char c) { return c >= 0x21 && c <= 0x7e; });
}

}  // namespace toolport::util
