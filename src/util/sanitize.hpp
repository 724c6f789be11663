// Making text safe to put in an error message that goes to a client or a log.
#pragma once

#include <string>
#include <string_view>

namespace toolport::util {

// Cuts `text` to `max_chars` (marking the cut), replaces control characters, and hides
// home-directory paths (/home/<user>/..., /root/..., /Users/<user>/...) behind "~".
std::string sanitize_for_message(std::string_view text, std::size_t max_chars = 500);

}  // namespace toolport::util
