// JSON Pointer (RFC 6901) reference tokens, in which "~" is written "~0" and "/" "~1".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::util {

// Splits a JSON Pointer ("/a/b~1c") into unescaped tokens ({"a", "b/c"}; "" gives none);
// nullopt when it is malformed (no leading "/", a "~" not followed by 0 or 1).
std::optional<std::vector<std::string>> parse_json_pointer(std::string_view pointer);

// Appends `token` to `out` escaped for a JSON Pointer (without the "/" before it).
void append_pointer_token(std::string& out, std::string_view token);

}  // namespace toolport::util
