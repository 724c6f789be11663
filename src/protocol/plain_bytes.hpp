// Runs of "plain" bytes in JSON string text: ASCII from the space on but the quote and the
// backslash, which both the reader and the writer pass over as they are (everything else,
// control bytes, escapes, the closing quote and UTF-8 sequences, needs a look of its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace toolport::protocol {

// Whether the eight bytes at `p` are all plain, tested a word at a time: the usual
// "has a zero byte" / "has a byte below n" bit tricks, exact as to whether any byte is
// (they can mark a wrong byte above a true one, but only "none" is used here).
inline bool eight_plain(const char* p) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
    constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
    std::uint64_t w;
    std::memcpy(&w, p, sizeof w);
    const auto has_zero = [](std::uint64_t v) { return (v - kOnes) & ~v & kHighs; };
    const std::uint64_t quote = has_zero(w ^ (kOnes * '"'));
    const std::uint64_t backslash = has_zero(w ^ (kOnes * '\\'));
    const std::uint64_t control = (w - kOnes * 0x20) & ~w & kHighs;
    return (quote | backslash | control | (w & kHighs)) == 0;
}

// How many bytes from `p` (at most `n`) start with whole words of plain bytes: a prefix of
// the plain run there, eight bytes at a time.
inline std::size_t plain_words(const char* p, std::size_t n) {
    std::size_t i = 0;
    while (n - i >= 8 && eight_plain(p + i)) i += 8;
    return i;
}

}  // namespace toolport::protocol
