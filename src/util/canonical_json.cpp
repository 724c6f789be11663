#include "util/canonical_json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "util/utf8.hpp"

namespace toolport::util {

namespace {

// UTF-8 (well-formed: the callers repair it first) as UTF-16 code units.
std::u16string utf16_of(std::string_view text) {
    std::u16string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto lead = static_cast<unsigned char>(text[i]);
        std::uint32_t cp = lead;
        std::size_t length = 1;
        if (lead >= 0xF0) {
            cp = lead & 0x07u;
            length = 4;
        } else if (lead >= 0xE0) {
            cp = lead & 0x0Fu;
            length = 3;
        } else if (lead >= 0xC0) {
            cp = lead & 0x1Fu;
            length = 2;
        }
        for (std::size_t k = 1; k < length && i + k < text.size(); ++k) {
            cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3Fu);
        }
        i += length;
        if (cp >= 0x10000) {
            cp -= 0x10000;
            out.push_back(static_cast<char16_t>(0xD800 + (cp >> 10)));
            out.push_back(static_cast<char16_t>(0xDC00 + (cp & 0x3FF)));
        } else {
            out.push_back(static_cast<char16_t>(cp));
        }
    }
    return out;
}

std::string repaired(const std::string& text) { return valid_utf8(text) ? text : to_valid_utf8(text); }

void write_string(std::string_view text, std::string& out) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += '"';
    for (char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\b': out += "\\b"; break;
            case '\f': out += "\\f"; break;
            case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break;
            case '\t': out += "\\t"; break;
            default:
                if (byte < 0x20) {
                    out += "\\u00";
                    out += kHex[byte >> 4];
                    out += kHex[byte & 0xF];
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

void newline(std::string& out, int indent, int depth) {
    if (indent < 0) return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent * depth), ' ');
}

void write(const Json& value, std::string& out, int indent, int depth) {
    switch (value.type()) {
        case Json::value_t::null: out += "null"; return;
        case Json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
        case Json::value_t::number_integer: {
            const auto v = value.get<std::int64_t>();
            // Exact up to 2^53; past that JavaScript holds (and prints) the nearest double.
            if (v >= -(std::int64_t{1} << 53) && v <= (std::int64_t{1} << 53)) out += std::to_string(v);
            else out += ecmascript_number(static_cast<double>(v));
            return;
        }
        case Json::value_t::number_unsigned: {
            const auto v = value.get<std::uint64_t>();
            if (v <= (std::uint64_t{1} << 53)) out += std::to_string(v);
            else out += ecmascript_number(static_cast<double>(v));
            return;
        }
        case Json::value_t::number_float: out += ecmascript_number(value.get<double>()); return;
        case Json::value_t::string: write_string(repaired(value.get_ref<const std::string&>()), out); return;
        case Json::value_t::array: {
            out += '[';
            bool first = true;
            for (const auto& item : value) {
                if (!first) out += ',';
                first = false;
                newline(out, indent, depth + 1);
                write(item, out, indent, depth + 1);
            }
            if (!value.empty()) newline(out, indent, depth);
            out += ']';
            return;
        }
        case Json::value_t::object: {
            // nlohmann keeps members sorted by their UTF-8 bytes (code points), which is
            // UTF-16 order except where supplementary characters meet U+E000..U+FFFF.
            struct Member {
                std::string name;
                std::u16string units;
                const Json* value;
            };
            std::vector<Member> members;
            members.reserve(value.size());
            for (auto it = value.begin(); it != value.end(); ++it) {
                std::string name = repaired(it.key());
                std::u16string units = utf16_of(name);
                members.push_back({std::move(name), std::move(units), &it.value()});
            }
            std::sort(members.begin(), members.end(),
                      [](const Member& a, const Member& b) { return a.units < b.units; });
            out += '{';
            bool first = true;
            for (const auto& m : members) {
                if (!first) out += ',';
                first = false;
                newline(out, indent, depth + 1);
                write_string(m.name, out);
                out += indent >= 0 ? ": " : ":";
                write(*m.value, out, indent, depth + 1);
            }
            if (!members.empty()) newline(out, indent, depth);
            out += '}';
            return;
        }
        case Json::value_t::binary:
        case Json::value_t::discarded: throw CanonicalJsonError("a value JSON cannot hold (binary or discarded)");
    }
}

}  // namespace

std::string ecmascript_number(double value) {
    if (std::isnan(value) || std::isinf(value)) throw CanonicalJsonError("NaN and infinities are not JSON numbers");
    if (value == 0) return "0";  // -0 too
    // The shortest digits that read back as `value`, as d[.ddd]e±x: ECMAScript's k digits
    // (s) and its n, the position of the decimal point (n = x + 1).
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
    std::string_view text(buffer, static_cast<std::size_t>(end - buffer));
    std::string sign;
    if (text.front() == '-') {
        sign = "-";
        text.remove_prefix(1);
    }
    const auto e = text.find('e');
    std::string digits;
    for (char c : text.substr(0, e)) {
        if (c != '.') digits += c;
    }
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
    int exponent = 0;
    std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0), text.data() + text.size(), exponent);
    const int k = static_cast<int>(digits.size());
    const int n = exponent + 1;
    std::string out = sign;
    if (k <= n && n <= 21) {
        out += digits;
        out.append(static_cast<std::size_t>(n - k), '0');
    } else if (0 < n && n <= 21) {
        out += digits.substr(0, static_cast<std::size_t>(n));
        out += '.';
        out += digits.substr(static_cast<std::size_t>(n));
    } else if (-6 < n && n <= 0) {
        out += "0.";
        out.append(static_cast<std::size_t>(-n), '0');
        out += digits;
    } else {
        out += digits.substr(0, 1);
        if (k > 1) {
            out += '.';
            out += digits.substr(1);
        }
        out += 'e';
        out += n - 1 >= 0 ? '+' : '-';
        out += std::to_string(std::abs(n - 1));
    }
    return out;
}

bool utf16_less(const std::string& a, const std::string& b) { return utf16_of(repaired(a)) < utf16_of(repaired(b)); }

std::string canonical_json(const Json& value, int indent) {
    std::string out;
    write(value, out, indent, 0);
    return out;
}

}  // namespace toolport::util
