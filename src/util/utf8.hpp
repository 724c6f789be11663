// UTF-8 checks for text that leaves the process in a format that requires valid UTF-8
// (protobuf `string` fields, JSON): a receiver refuses a whole message for one bad byte, so
// text from the outside (tool names, arguments, upstream errors) is repaired first.
#pragma once

#include <string>
#include <string_view>

namespace toolport::util {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view text);

// `text` with each byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view text);

}  // namespace toolport::util
