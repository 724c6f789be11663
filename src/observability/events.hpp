// Structured log events: one JSON line per event on stderr or a file, with the seed's
// event names (tool_call, mcp_budget_status, mcp_budget_warning, mcp_budget_exceeded,
// mcp_server_unhealthy, orchestration_summary, ...). Field values that look like secrets
// (tokens, keys, passwords, Authorization) are redacted before they are written.
//
//   log_event(EventLevel::warn, "mcp_budget_warning", {{"scope", scope}, {"percent_used", 80}});
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace toolport::observability {

enum class EventLevel { trace, debug, info, warn, error };

struct LogOptions {
    std::string level = "info";   // trace, debug, info, warn, error, off
    std::string format = "json";  // json (one object per line) or text
    std::string file;             // empty: stderr
};

// Sets up the process's default logger (throws std::runtime_error for a bad file/format).
void configure_logging(const LogOptions& options);

// Writes {"ts":..., "level":..., "event": event, ...fields}.
void log_event(EventLevel level, std::string_view event, nlohmann::json fields);

}  // namespace toolport::observability
