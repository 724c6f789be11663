// Checks on the text of HTTP header names and values, shared by the server's transports,
// the downstream HTTP client and the MCP client (RFC 9110 tokens and field values).
#pragma once

#include <string_view>

namespace toolport::util {

// ASCII case-insensitive equality (header names, schemes, media types).
bool iequals_ascii(std::string_view a, std::string_view b);
// `text` starts with `prefix`, ignoring ASCII case.
bool starts_with_ascii_nocase(std::string_view text, std::string_view prefix);
// A non-empty RFC 9110 token: what a header name or a method may be.
bool is_http_token(std::string_view text);
// Control characters other than tab (CR and LF above all): never allowed in a header value.
bool has_control_chars(std::string_view text);

}  // namespace toolport::util
