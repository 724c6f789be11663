// SHA-256 (OpenSSL), for cache keys and for naming credentials without storing them.
#pragma once

#include <string>
#include <string_view>

namespace toolport::util {

// Lower-case hex of SHA-256(data): 64 characters.
std::string sha256_hex(std::string_view data);

}  // namespace toolport::util
