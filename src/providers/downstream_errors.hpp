// The tool errors every source that calls a web API gives for the same failures (the
// tango pack, REST catalogs, OpenAPI tools), worded with the API's name: it could not be
// reached, its answer was too large, it asked the caller to slow down.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "server/tool_error.hpp"

namespace toolport::http_client {
struct HttpError;
}

namespace toolport::providers {

// TIMEOUT for a deadline, else UPSTREAM_ERROR; transient as the failure is. `api` names
// it ("the Tango API"); `settings` is what to check when retrying will not help.
ToolError unreachable_error(const http_client::HttpError& error, std::string_view api, std::string_view settings);

// MCP_RESPONSE_TOO_LARGE: the answer passed `limit` bytes while it was read.
ToolError too_large_error(std::size_t limit, std::string_view api, std::string suggestion);

// RATE_LIMITED (HTTP 429), retry_after_ms from the Retry-After header, else `fallback`
// (e.g. a body's wait_in_seconds), else 1 s.
ToolError rate_limited_error(std::string message, const std::optional<std::string>& retry_after,
                             std::optional<std::chrono::milliseconds> fallback = std::nullopt);

}  // namespace toolport::providers
