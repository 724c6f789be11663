// MCP session ids (the Mcp-Session-Id header): the spec allows only visible ASCII
// (0x21-0x7E). The server and the client each bound the length in their own way, so the
// bound is the caller's.
#pragma once

#include <cstddef>
#include <string_view>

namespace toolport::util {

// 1 to `max_length` characters, each visible ASCII.
bool valid_session_id(std::string_view id, std::size_t max_length);

}  // namespace toolport::util
