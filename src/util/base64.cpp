#include "util/base64.hpp"

#include <array>
#include <cstdint>

namespace toolport::util {

namespace {

constexpr char kStandard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

std::string encode(std::string_view in, const char* alphabet, bool pad) {
    std::string out;
    out.reserve((in.size() + 2) / 3 * 4);
    std::size_t i = 0;
    while (i + 3 <= in.size()) {
        std::uint32_t n = (std::uint8_t(in[i]) << 16) | (std::uint8_t(in[i + 1]) << 8) | std::uint8_t(in[i + 2]);
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        out += alphabet[(n >> 6) & 63];
        out += alphabet[n & 63];
        i += 3;
    }
    if (std::size_t rest = in.size() - i; rest > 0) {
        std::uint32_t n = std::uint8_t(in[i]) << 16;
        if (rest == 2) n |= std::uint8_t(in[i + 1]) << 8;
        out += alphabet[(n >> 18) & 63];
        out += alphabet[(n >> 12) & 63];
        if (rest == 2) out += alphabet[(n >> 6) & 63];
        if (pad) out.append(rest == 1 ? "==" : "=");
    }
    return out;
}

std::optional<std::string> decode(std::string_view in, const char* alphabet, bool require_padding) {
    std::array<int, 256> value;
    value.fill(-1);
    for (int k = 0; k < 64; ++k) value[static_cast<unsigned char>(alphabet[k])] = k;
    std::size_t len = in.size();
    if (require_padding) {
        if (len % 4 != 0) return std::nullopt;
        if (len > 0 && in[len - 1] == '=') --len;
        if (len > 0 && in[len - 1] == '=') --len;
    }
    if (len % 4 == 1) return std::nullopt;
    std::string out;
    out.reserve(len * 3 / 4);
    std::uint32_t acc = 0;
    int bits = 0;
    for (std::size_t k = 0; k < len; ++k) {
        int v = value[static_cast<unsigned char>(in[k])];
        if (v < 0) return std::nullopt;
        acc = (acc << 6) | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((acc >> bits) & 0xFF);
        }
    }
    return out;
}

}  // namespace

std::string base64_encode(std::string_view bytes) { return encode(bytes, kStandard, true); }
std::optional<std::string> base64_decode(std::string_view text) { return decode(text, kStandard, true); }
std::string base64url_encode(std::string_view bytes) { return encode(bytes, kUrl, false); }
std::optional<std::string> base64url_decode(std::string_view text) { return decode(text, kUrl, false); }

}  // namespace toolport::util
