// SHA-256 (OpenSSL), for cache keys and for naming credentials without storing them.
#pragma once

#include <array>
#include <string>
#include <string_view>

struct evp_md_st;  // OpenSSL's EVP_MD

namespace toolport::util {

// SHA-256(data), the 32 bytes.
std::array<unsigned char, 32> sha256(std::string_view data);

// Lower-case hex of SHA-256(data): 64 characters.
std::string sha256_hex(std::string_view data);

// OpenSSL's SHA-256 (an EVP_MD), fetched once: for signing and verifying with it.
const evp_md_st* sha256_md();

// `prefix` + the first 24 hex digits of SHA-256(secret): how a credential or a session id is
// named where it is stored (Redis) or logged. A session's every call names the same one or
// two secrets, so each thread keeps the names of its last few.
std::string named_digest(std::string_view prefix, std::string_view secret);

}  // namespace toolport::util
