// Percent-encoding (RFC 3986 %XX), shared by the URI code of the JSON Schema validator,
// the store URL parser and the sources that build request URLs (query values, path
// segments).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolport::util {

// 0-15 for a hex digit, -1 otherwise.
int hex_digit_value(char c);
// Every byte but RFC 3986's unreserved characters (A-Z a-z 0-9 - . _ ~) as %XX: safe as a
// query name or value and as one path segment ('/', '?', '&', '=', '+', '%' are encoded).
std::string percent_encode(std::string_view s);
// Decodes every %XX; nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace toolport::util
