// UTF-8 checks for text that leaves the process in a format that requires valid UTF-8
// (protobuf `string` fields, JSON): a receiver refuses a whole message for one bad byte, so
// text from the outside (tool names, arguments, upstream errors) is repaired first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace toolport::util {

// Well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view text);

// `text` with each byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string to_valid_utf8(std::string_view text);

// `text` cut to at most `max` bytes, never inside a UTF-8 sequence (a sequence the cut
// would split is left out whole).
inline std::string cut_utf8(std::string text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t end = max;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text.resize(end);
    return text;
}

// Appends the code point `cp` (at most U+10FFFF, not a surrogate: the caller checked) as
// UTF-8: what a decoded `\uXXXX` escape becomes.
inline void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

}  // namespace toolport::util
