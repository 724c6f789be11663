// ASCII lower-casing, whatever the C locale says: what Toolport lower-cases is protocol
// text (header names, schemes, host names, media types, hex digests), never prose, so
// bytes outside A-Z are left as they are.
#pragma once

#include <string>
#include <string_view>

namespace toolport::util {

constexpr char to_lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
std::string to_lower_ascii(std::string_view text);

}  // namespace toolport::util
