// Runs of "plain" bytes in JSON string text: ASCII from the space on but the quote and the
// backslash, which both the reader and the writer pass over as they are (everything else,
// control bytes, escapes, the closing quote and UTF-8 sequences, needs a look of its own).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace toolport::protocol {

// The bytes of `w` that are not plain, each marked by its high bit, tested a word at a time
// with the usual "has a zero byte" / "has a byte below n" bit tricks. A mark can be wrong
// only above a right one (a borrow carries upwards), so the lowest mark is always right.
inline std::uint64_t not_plain_marks(std::uint64_t w) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    const auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
    const std::uint64_t quote = has_zero(w ^ (kOnes * '"'));
    const std::uint64_t backslash = has_zero(w ^ (kOnes * '\\'));
    const std::uint64_t control = (w - kOnes * 0x20) & ~w & kHighs;
    return quote | backslash | control | (w & kHighs);
}

// How many plain bytes the `n` bytes at `p` start with, read eight at a time: exact up to
// the first byte that is not plain; when fewer than eight bytes are left, the count stops
// there (the caller reads those one by one).
inline std::size_t plain_prefix(const char* p, std::size_t n) {
    std::size_t i = 0;
    for (; n - i >= 8; i += 8) {
        std::uint64_t w;
        std::memcpy(&w, p + i, sizeof w);
        if (const std::uint64_t marks = not_plain_marks(w)) {
            // The first byte in memory is the lowest of a little-endian word.
            if constexpr (std::endian::native == std::endian::little)
                return i + static_cast<std::size_t>(std::countr_zero(marks) / 8);
            else return i;
        }
    }
    return i;
}

}  // namespace toolport::protocol
