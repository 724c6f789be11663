#include "server/log_level.hpp"

#include <array>

namespace toolport {

namespace {
constexpr std::array<std::string_view, 8> kNames = {"debug", "info",     "notice", "warning",
                                                    "error", "critical", "alert",  "emergency"};
}

std::optional<LogLevel> parse_log_level(std::string_view text) {
    for (std::size_t i = 0; i < kNames.size(); ++i) {
        if (kNames[i] == text) return static_cast<LogLevel>(i);
    }
    return std::nullopt;
}

std::string_view to_string(LogLevel level) { return kNames[static_cast<std::size_t>(level)]; }

}  // namespace toolport
