// Base64 (RFC 4648 §4) and base64url (§5, unpadded) encoding and decoding.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolport::util {

std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);
std::string base64url_encode(std::string_view bytes);
std::optional<std::string> base64url_decode(std::string_view text);

}  // namespace toolport::util
