#include "util/ascii.hpp"

namespace toolport::util {

std::string to_lower_ascii(std::string_view text) {
    std::string out(text);
    for (auto& c : out) c = to_lower_ascii(c);
    return out;
}

}  // namespace toolport::util
