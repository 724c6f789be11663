// SHA-256 (OpenSSL), for cache keys and for naming credentials without storing them.
#pragma once

#include <string>
#include <string_view>

namespace toolport::util {

// Lower-case hex of SHA-256(data): 64 characters.
std::string sha256_hex(std::string_view data);

// `prefix` + the first 24 hex digits of SHA-256(secret): how a credential or a session id is
// named where it is stored (Redis) or logged. A session's every call names the same one or
// two secrets, so each thread keeps the names of its last few.
std::string named_digest(std::string_view prefix, std::string_view secret);

}  // namespace toolport::util
