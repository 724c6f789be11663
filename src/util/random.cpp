#include "util/random.hpp"

#include <sys/random.h>

#include <cerrno>
#include <stdexcept>

namespace toolport::util {

void secure_random(void* out, std::size_t size) {
    auto* p = static_cast<unsigned char*>(out);
    while (size > 0) {
        ssize_t n = ::getrandom(p, size, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error("the kernel gave no random bytes (getrandom failed)");
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
}

std::string random_hex(std::size_t bytes) {
    static const char* hex = "0123456789abcdef";
    std::string raw(bytes, '\0');
    secure_random(raw.data(), bytes);
    std::string out;
    out.reserve(bytes * 2);
    for (unsigned char b : raw) {
        out += hex[b >> 4];
        out += hex[b & 15];
    }
    return out;
}

}  // namespace toolport::util
