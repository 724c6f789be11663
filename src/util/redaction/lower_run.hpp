// Runs of lower-case ASCII letters (and spaces), measured eight bytes at a time: most of
// the text the scanners read is words of them, and such a word is never a finding
// (text_redactor.cpp and injection_markers.cpp pass over them whole).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace toolport::util::redaction {

// The bytes of `w` that are not 'a'-'z', each marked by its high bit. Exact for every byte
// (no borrow crosses a byte: each has its high bit set before the subtraction).
inline std::uint64_t not_lower_marks(std::uint64_t w) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    const std::uint64_t at_least_a = (w | kHighs) - kOnes * 'a';      // high bit: byte >= 'a'
    const std::uint64_t above_z = (w | kHighs) - kOnes * ('z' + 1);   // high bit: byte > 'z'
    const std::uint64_t lower = at_least_a & ~above_z & ~w & kHighs;  // ~w: not a UTF-8 byte
    return ~lower & kHighs;
}

// How many lower-case letters the `n` bytes at `p` start with, read eight at a time: exact
// up to the first other byte; when fewer than eight bytes are left the count stops there
// (the caller reads those one by one).
inline std::size_t lower_prefix(const char* p, std::size_t n) {
    std::size_t i = 0;
    for (; n - i >= 8; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, sizeof w);
        if (const std::uint64_t marks = not_lower_marks(w)) {
            if constexpr (std::endian::native == std::endian::little)
                return i + static_cast<std::size_t>(std::countr_zero(marks) / 8);
            else return i;
        }
    }
    return i;
}

// The bytes of `w` that are neither 'a'-'z' nor a space, each marked by its high bit (exact:
// the space test is the borrow-free form of "has a zero byte").
inline std::uint64_t not_prose_marks(std::uint64_t w) {
    constexpr std::uint64_t kLows = 0x7F7F7F7F7F7F7F7FULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    const std::uint64_t x = w ^ (0x0101010101010101ULL * ' ');
    const std::uint64_t space = ~(((x & kLows) + kLows) | x) & kHighs;
    return not_lower_marks(w) & ~space;
}

// How many bytes of lower-case letters and spaces the `n` bytes at `p` start with, read
// eight at a time (as lower_prefix).
inline std::size_t prose_prefix(const char* p, std::size_t n) {
    std::size_t i = 0;
    for (; n - i >= 8; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, sizeof w);
        if (const std::uint64_t marks = not_prose_marks(w)) {
            if constexpr (std::endian::native == std::endian::little)
                return i + static_cast<std::size_t>(std::countr_zero(marks) / 8);
            else return i;
        }
    }
    return i;
}

}  // namespace toolport::util::redaction
