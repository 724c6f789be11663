// RFC 5424 severities as MCP's logging uses them (logging/setLevel, notifications/message).
#pragma once

#include <optional>
#include <string_view>

namespace toolport {

enum class LogLevel { debug, info, notice, warning, error, critical, alert, emergency };

std::optional<LogLevel> parse_log_level(std::string_view text);
std::string_view to_string(LogLevel level);

}  // namespace toolport
