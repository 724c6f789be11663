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

#include "observability/trace_context.hpp"

namespace toolport::observability {

enum class EventLevel { trace, debug, info, warn, error };

struct LogOptions {
    std::string level = "info";   // trace, debug, info, warn, error, off
    std::string format = "json";  // json (one object per line) or text
    std::string file;             // empty: stderr
};

// Sets up the process's default logger "toolport" (throws std::runtime_error for a bad
// level, format or file). The file is appended to. In json format every line is one JSON
// object, ordinary spdlog calls included: {"ts": ISO-8601 UTC with ms, "level", "msg"}.
void configure_logging(const LogOptions& options);

// What configure_logging accepts (for configuration checks that name the file and line).
bool is_log_level(std::string_view name);   // trace, debug, info, warn, error, critical, off
bool is_log_format(std::string_view name);  // json, text

// Writes {"ts":..., "level":..., "event": event, ...fields} (text format: "event {fields}").
// The values of keys that look like secrets (token, secret, password, api_key, apikey,
// authorization, cookie, or ending in "key"; any case, at any depth) become "[redacted]";
// strings lose control characters and home-directory paths and are cut at 4096 characters.
// Fields named ts, level or event are written as field_ts, field_level, field_event; fields
// that are not an object are written under "fields". Subject to the default logger's level.
void log_event(EventLevel level, std::string_view event, nlohmann::json fields);

// The same for an event of one request: with `trace` valid (tracing on, or a caller's
// trace context passed through), the line carries its "trace_id" and "span_id".
void log_event(EventLevel level, std::string_view event, nlohmann::json fields, const TraceContext& trace);

// What log_event does to `fields` before writing them (exposed for tests).
nlohmann::json redact_fields(const nlohmann::json& fields);

}  // namespace toolport::observability
