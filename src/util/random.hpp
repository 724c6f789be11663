// Cryptographically secure random bytes from the kernel (getrandom), for session ids and
// signing keys. Not OpenSSL's RAND: initialising its DRBG costs ~2 MB of resident memory
// in every process, for bytes the kernel hands out directly.
#pragma once

#include <cstddef>
#include <string>

namespace toolport::util {

// Fills `out` with `size` random bytes; throws std::runtime_error if the kernel cannot.
void secure_random(void* out, std::size_t size);
// `bytes` random bytes as lowercase hex (2 × bytes characters).
std::string random_hex(std::size_t bytes);

}  // namespace toolport::util
