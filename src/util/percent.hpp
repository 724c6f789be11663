// Percent-encoding (RFC 3986 %XX), shared by the URI code of the JSON Schema validator
// and the store URL parser.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolport::util {

// 0-15 for a hex digit, -1 otherwise.
int hex_digit_value(char c);
// Decodes every %XX; nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view s);

}  // namespace toolport::util
