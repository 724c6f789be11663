// "format" assertions, used only when asked for (Options::assert_format, or a meta-schema
// requiring the 2020-12 format-assertion vocabulary). Both drafts make "format" an
// annotation by default, and so does Toolport.
//
// The checks follow the RFCs the specifications cite (RFC 3339 dates and times, RFC 3986
// URIs, RFC 5321 mailboxes, RFC 1123 host names, RFC 4291 IPv6 text, RFC 6901 pointers,
// RFC 6570 templates). Internationalized forms (idn-hostname, idn-email, iri) are checked
// structurally and for valid Punycode, without the full IDNA2008 contextual rules.

#include <array>
#include <cstdint>
#include <string>

#include "schema/internal.hpp"

namespace toolport::schema::detail {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

bool digits(std::string_view s, std::size_t pos, std::size_t n, int& out) {
    if (pos + n > s.size()) return false;
    out = 0;
    for (std::size_t i = pos; i < pos + n; ++i) {
        if (!is_digit(s[i])) return false;
        out = out * 10 + (s[i] - '0');
    }
    return true;
}

bool leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

bool check_date(std::string_view s) {
    int y, m, d;
    if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
    if (!digits(s, 0, 4, y) || !digits(s, 5, 2, m) || !digits(s, 8, 2, d)) return false;
    static constexpr std::array<int, 12> days = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m < 1 || m > 12 || d < 1) return false;
    int max = days[static_cast<std::size_t>(m - 1)] + (m == 2 && leap_year(y) ? 1 : 0);
    return d <= max;
}

// RFC 3339 full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM). A leap second (:60) is only valid
// at 23:59 UTC.
bool check_time(std::string_view s) {
    int h, m, sec;
    if (s.size() < 9 || s[2] != ':' || s[5] != ':') return false;
    if (!digits(s, 0, 2, h) || !digits(s, 3, 2, m) || !digits(s, 6, 2, sec)) return false;
    std::size_t i = 8;
    if (i < s.size() && s[i] == '.') {
        ++i;
        std::size_t start = i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == start) return false;
    }
    if (i >= s.size()) return false;
    int offset_minutes = 0;
    if (s[i] == 'Z' || s[i] == 'z') {
        if (i + 1 != s.size()) return false;
    } else if (s[i] == '+' || s[i] == '-') {
        int oh, om;
        if (s.size() != i + 6 || s[i + 3] != ':' || !digits(s, i + 1, 2, oh) || !digits(s, i + 4, 2, om)) return false;
        if (oh > 23 || om > 59) return false;
        offset_minutes = (oh * 60 + om) * (s[i] == '+' ? 1 : -1);
    } else {
        return false;
    }
    if (h > 23 || m > 59 || sec > 60) return false;
    if (sec == 60) {
        int utc = ((h * 60 + m - offset_minutes) % 1440 + 1440) % 1440;
        if (utc != 23 * 60 + 59) return false;
    }
    return true;
}

bool check_date_time(std::string_view s) {
    std::size_t t = s.find_first_of("Tt");
    if (t != 10) return false;
    return check_date(s.substr(0, 10)) && check_time(s.substr(11));
}

// RFC 3339 appendix A (ISO 8601 durations): P[nY][nM][nD][T[nH][nM][nS]] or PnW, where the
// units present must be adjacent in that order (P1Y2D and PT1H2S are not durations).
bool check_duration(std::string_view s) {
    if (s.size() < 2 || s[0] != 'P') return false;
    std::size_t i = 1;
    auto number = [&]() {
        std::size_t start = i;
        while (i < s.size() && is_digit(s[i])) ++i;
        return i > start;
    };
    if (s.find('W') != std::string_view::npos) {
        return number() && i + 1 == s.size() && s[i] == 'W';
    }
    // Reads a run of <number><unit> elements whose units are consecutive in `units`.
    auto elements = [&](std::string_view units, char stop) {
        std::size_t count = 0;
        std::size_t expected = 0;
        while (i < s.size() && s[i] != stop) {
            if (!number() || i >= s.size()) return std::size_t{0} - 1;
            std::size_t u = units.find(s[i]);
            if (u == std::string_view::npos || (count > 0 && u != expected)) return std::size_t{0} - 1;
            expected = u + 1;
            ++count;
            ++i;
        }
        return count;
    };
    std::size_t date = elements("YMD", 'T');
    if (date == std::size_t{0} - 1) return false;
    if (i == s.size()) return date > 0;
    ++i;  // 'T'
    std::size_t time = elements("HMS", '\0');
    return time != std::size_t{0} - 1 && time > 0;
}

bool check_ipv4(std::string_view s) {
    int parts = 0;
    std::size_t i = 0;
    while (true) {
        std::size_t start = i;
        int value = 0;
        while (i < s.size() && is_digit(s[i]) && i - start < 4) value = value * 10 + (s[i++] - '0');
        std::size_t len = i - start;
        if (len == 0 || len > 3 || value > 255 || (len > 1 && s[start] == '0')) return false;
        ++parts;
        if (i == s.size()) break;
        if (s[i] != '.' || parts == 4) return false;
        ++i;
    }
    return parts == 4;
}

bool check_ipv6(std::string_view s) {
    if (s.empty()) return false;
    int groups = 0;
    bool compressed = false;
    std::size_t i = 0;
    if (s.starts_with("::")) {
        compressed = true;
        i = 2;
        if (i == s.size()) return true;
    } else if (s[0] == ':') {
        return false;
    }
    while (i < s.size()) {
        std::size_t start = i;
        while (i < s.size() && is_hex(s[i])) ++i;
        if (i < s.size() && s[i] == '.') {  // embedded IPv4 in the last 32 bits
            if (!check_ipv4(s.substr(start))) return false;
            groups += 2;
            i = s.size();
            break;
        }
        std::size_t len = i - start;
        if (len == 0 || len > 4) return false;
        ++groups;
        if (i == s.size()) break;
        if (s[i] != ':') return false;
        ++i;
        if (i < s.size() && s[i] == ':') {
            if (compressed) return false;
            compressed = true;
            ++i;
            if (i == s.size()) break;
        } else if (i == s.size()) {
            return false;  // trailing single ':'
        }
    }
    return compressed ? groups < 8 : groups == 8;
}

// RFC 3492 Punycode decoding, to reject malformed "xn--" labels.
bool punycode_decode(std::string_view in, std::u32string& out) {
    constexpr std::uint32_t base = 36, tmin = 1, tmax = 26, skew = 38, damp = 700;
    out.clear();
    std::size_t b = in.rfind('-');
    if (b == std::string_view::npos) b = 0;
    for (std::size_t j = 0; j < b; ++j) {
        if (static_cast<unsigned char>(in[j]) >= 0x80) return false;
        out.push_back(static_cast<char32_t>(in[j]));
    }
    std::uint32_t n = 128, i = 0, bias = 72;
    std::size_t pos = b > 0 ? b + 1 : 0;
    while (pos < in.size()) {
        std::uint32_t old_i = i, w = 1;
        for (std::uint32_t k = base;; k += base) {
            if (pos >= in.size()) return false;
            char c = in[pos++];
            std::uint32_t digit = is_digit(c)              ? static_cast<std::uint32_t>(c - '0' + 26)
                                  : (c >= 'a' && c <= 'z') ? static_cast<std::uint32_t>(c - 'a')
                                  : (c >= 'A' && c <= 'Z') ? static_cast<std::uint32_t>(c - 'A')
                                                           : base;
            if (digit >= base || digit > (UINT32_MAX - i) / w) return false;
            i += digit * w;
            std::uint32_t t = k <= bias ? tmin : k >= bias + tmax ? tmax : k - bias;
            if (digit < t) break;
            if (w > UINT32_MAX / (base - t)) return false;
            w *= base - t;
        }
        std::uint32_t len = static_cast<std::uint32_t>(out.size()) + 1;
        std::uint32_t delta = old_i == 0 ? (i - old_i) / damp : (i - old_i) / 2;
        delta += delta / len;
        std::uint32_t k = 0;
        while (delta > ((base - tmin) * tmax) / 2) {
            delta /= base - tmin;
            k += base;
        }
        bias = k + (base - tmin + 1) * delta / (delta + skew);
        if (i / len > 0x10FFFF - n) return false;
        n += i / len;
        i %= len;
        if (n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF)) return false;
        out.insert(out.begin() + i, static_cast<char32_t>(n));
        ++i;
    }
    return true;
}

bool decode_utf8_strict(std::string_view s, std::u32string& out) {
    out.clear();
    for (std::size_t i = 0; i < s.size();) {
        auto b = static_cast<unsigned char>(s[i]);
        int len = b < 0x80 ? 1 : (b & 0xE0) == 0xC0 ? 2 : (b & 0xF0) == 0xE0 ? 3 : (b & 0xF8) == 0xF0 ? 4 : 0;
        if (len == 0 || i + static_cast<std::size_t>(len) > s.size()) return false;
        char32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
        for (int k = 1; k < len; ++k) {
            auto c = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
            if ((c & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (c & 0x3F);
        }
        out.push_back(cp);
        i += static_cast<std::size_t>(len);
    }
    return true;
}

bool is_mark(char32_t c) {
    GeneralCategory g = general_category(c);
    return g == kMn || g == kMc || g == kMe;
}

// RFC 1123 host names; `international` also accepts U-labels (non-ASCII) and the
// ideographic full stops as separators.
bool check_hostname(std::string_view s, bool international) {
    std::u32string text;
    if (!decode_utf8_strict(s, text) || text.empty()) return false;
    std::size_t ascii_length = 0;
    std::u32string label;
    std::u32string decoded;
    auto check_label = [&]() {
        if (label.empty() || label.size() > 63) return false;
        if (label.front() == '-' || label.back() == '-') return false;
        bool ascii = true;
        for (char32_t c : label) {
            if (c >= 0x80) {
                ascii = false;
                if (!international) return false;
                GeneralCategory g = general_category(c);
                if (g == kZs || g == kCc || g == kCn || g == kCs || g == kPo || g == kSm) {
                    if (!(g == kPo && (c == 0x00B7 || c == 0x30FB || c == 0x05F3 || c == 0x05F4))) return false;
                }
            } else if (!(is_alpha(static_cast<char>(c)) || is_digit(static_cast<char>(c)) || c == '-')) {
                return false;
            }
        }
        if (international && !ascii && is_mark(label.front())) return false;
        if (ascii && label.size() >= 4 && label[2] == '-' && label[3] == '-') {
            bool xn = (label[0] == 'x' || label[0] == 'X') && (label[1] == 'n' || label[1] == 'N');
            if (!xn) return false;
            std::string ace(label.begin() + 4, label.end());
            if (!punycode_decode(ace, decoded) || decoded.empty()) return false;
            if (is_mark(decoded.front())) return false;
            for (char32_t c : decoded) {
                if (c < 0x80 && !(is_alpha(static_cast<char>(c)) || is_digit(static_cast<char>(c)) || c == '-'))
                    return false;
            }
        }
        ascii_length += label.size() + 1;
        return true;
    };
    for (char32_t c : text) {
        bool separator = c == '.' || (international && (c == 0x3002 || c == 0xFF0E || c == 0xFF61));
        if (separator) {
            if (!check_label()) return false;
            label.clear();
        } else {
            label.push_back(c);
        }
    }
    if (!check_label()) return false;
    return ascii_length - 1 <= 253;
}

bool check_email(std::string_view s, bool international) {
    std::size_t at = s.rfind('@');
    if (at == std::string_view::npos || at == 0 || at + 1 == s.size()) return false;
    std::string_view local = s.substr(0, at);
    std::string_view domain = s.substr(at + 1);
    if (local.front() == '"') {
        if (local.size() < 2 || local.back() != '"') return false;
        for (std::size_t i = 1; i + 1 < local.size(); ++i) {
            if (local[i] == '\\') {
                ++i;
            } else if (local[i] == '"') {
                return false;
            }
        }
    } else {
        if (local.front() == '.' || local.back() == '.' || local.find("..") != std::string_view::npos) return false;
        static const std::string_view specials = "!#$%&'*+-/=?^_`{|}~.";
        for (char c : local) {
            bool ok = is_alpha(c) || is_digit(c) || specials.find(c) != std::string_view::npos ||
                      (international && static_cast<unsigned char>(c) >= 0x80);
            if (!ok) return false;
        }
    }
    if (domain.front() == '[') {
        if (domain.back() != ']') return false;
        std::string_view literal = domain.substr(1, domain.size() - 2);
        if (literal.starts_with("IPv6:")) return check_ipv6(literal.substr(5));
        return check_ipv4(literal);
    }
    return check_hostname(domain, international);
}

bool is_unreserved(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '.' || c == '_' || c == '~'; }
bool is_sub_delim(char c) { return std::string_view("!$&'()*+,;=").find(c) != std::string_view::npos; }

// Characters allowed in a URI component (pchar plus `extra`), with valid %XX escapes.
// `international` admits non-ASCII (IRIs).
bool check_chars(std::string_view s, std::string_view extra, bool international) {
    for (std::size_t i = 0; i < s.size(); ++i) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= s.size() || !is_hex(s[i + 1]) || !is_hex(s[i + 2])) return false;
            i += 2;
        } else if (!(is_unreserved(c) || is_sub_delim(c) || c == ':' || c == '@' ||
                     extra.find(c) != std::string_view::npos ||
                     (international && static_cast<unsigned char>(c) >= 0x80))) {
            return false;
        }
    }
    return true;
}

bool check_authority(std::string_view a, bool international) {
    std::size_t at = a.rfind('@');
    if (at != std::string_view::npos) {
        std::string_view userinfo = a.substr(0, at);
        if (userinfo.find('@') != std::string_view::npos || !check_chars(userinfo, "", international)) return false;
        a = a.substr(at + 1);
    }
    std::string_view host = a;
    std::string_view port;
    if (!a.empty() && a.front() == '[') {
        std::size_t close = a.find(']');
        if (close == std::string_view::npos) return false;
        host = a.substr(1, close - 1);
        std::string_view rest = a.substr(close + 1);
        if (!rest.empty()) {
            if (rest.front() != ':') return false;
            port = rest.substr(1);
        }
        if (!(check_ipv6(host) || (host.size() > 1 && (host[0] == 'v' || host[0] == 'V')))) return false;
    } else {
        std::size_t colon = a.rfind(':');
        if (colon != std::string_view::npos) {
            host = a.substr(0, colon);
            port = a.substr(colon + 1);
        }
        for (char c : host) {
            if (!(is_unreserved(c) || is_sub_delim(c) || c == '%' ||
                  (international && static_cast<unsigned char>(c) >= 0x80))) {
                return false;
            }
        }
    }
    for (char c : port) {
        if (!is_digit(c)) return false;
    }
    return true;
}

bool check_uri_reference(std::string_view s, bool require_scheme, bool international) {
    std::size_t hash = s.find('#');
    if (hash != std::string_view::npos) {
        if (!check_chars(s.substr(hash + 1), "/?", international)) return false;
        s = s.substr(0, hash);
    }
    std::size_t q = s.find('?');
    if (q != std::string_view::npos) {
        if (!check_chars(s.substr(q + 1), "/?", international)) return false;
        s = s.substr(0, q);
    }
    std::size_t colon = s.find(':');
    std::size_t slash = s.find('/');
    bool has_scheme = colon != std::string_view::npos && (slash == std::string_view::npos || colon < slash);
    if (has_scheme) {
        std::string_view scheme = s.substr(0, colon);
        if (scheme.empty() || !is_alpha(scheme[0])) return false;
        for (char c : scheme) {
            if (!(is_alpha(c) || is_digit(c) || c == '+' || c == '-' || c == '.')) return false;
        }
        s = s.substr(colon + 1);
    } else if (require_scheme) {
        return false;
    }
    if (s.starts_with("//")) {
        s = s.substr(2);
        std::size_t end = s.find('/');
        if (!check_authority(s.substr(0, end), international)) return false;
        s = end == std::string_view::npos ? std::string_view{} : s.substr(end);
    }
    return check_chars(s, "/", international);
}

// RFC 6570 (level 4): literals, and expressions "{" [operator] varspec *("," varspec) "}"
// with varspec = varname [":" max-length | "*"].
bool check_uri_template(std::string_view s) {
    auto varchar = [&](std::size_t& i) {
        if (i < s.size() && (is_alpha(s[i]) || is_digit(s[i]) || s[i] == '_')) {
            ++i;
            return true;
        }
        if (i + 2 < s.size() && s[i] == '%' && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
            i += 3;
            return true;
        }
        return false;
    };
    std::size_t i = 0;
    while (i < s.size()) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c != '{') {
            if (c <= 0x20 || c == 0x7F ||
                std::string_view("\"<>\\^`|}").find(static_cast<char>(c)) != std::string_view::npos) {
                return false;
            }
            if (c == '%' && !(i + 2 < s.size() && is_hex(s[i + 1]) && is_hex(s[i + 2]))) return false;
            ++i;
            continue;
        }
        ++i;
        if (i < s.size() && std::string_view("+#./;?&=,!@|").find(s[i]) != std::string_view::npos) ++i;
        while (true) {
            // varname = varchar *( ["."] varchar )
            if (!varchar(i)) return false;
            while (i < s.size()) {
                if (s[i] == '.') {
                    ++i;
                    if (!varchar(i)) return false;
                } else if (!varchar(i)) {
                    break;
                }
            }
            if (i < s.size() && s[i] == ':') {
                ++i;
                std::size_t start = i;
                while (i < s.size() && is_digit(s[i])) ++i;
                std::size_t len = i - start;
                if (len == 0 || len > 4 || s[start] == '0') return false;
            } else if (i < s.size() && s[i] == '*') {
                ++i;
            }
            if (i >= s.size()) return false;
            if (s[i] == '}') {
                ++i;
                break;
            }
            if (s[i] != ',') return false;
            ++i;
        }
    }
    return true;
}

bool check_uuid(std::string_view s) {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !is_hex(s[i])) return false;
    }
    return true;
}

bool check_json_pointer(std::string_view s) {
    if (s.empty()) return true;
    if (s[0] != '/') return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '~' && (i + 1 >= s.size() || (s[i + 1] != '0' && s[i + 1] != '1'))) return false;
    }
    return true;
}

bool check_relative_json_pointer(std::string_view s) {
    std::size_t i = 0;
    while (i < s.size() && is_digit(s[i])) ++i;
    if (i == 0 || (i > 1 && s[0] == '0')) return false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) {  // index manipulation
        std::size_t start = ++i;
        while (i < s.size() && is_digit(s[i])) ++i;
        if (i == start || (i - start > 1 && s[start] == '0')) return false;
    }
    std::string_view rest = s.substr(i);
    return rest == "#" || check_json_pointer(rest);
}

}  // namespace

Format parse_format(std::string_view name) {
    static const std::pair<std::string_view, Format> table[] = {
        {"date-time", Format::date_time},
        {"date", Format::date},
        {"time", Format::time},
        {"duration", Format::duration},
        {"email", Format::email},
        {"idn-email", Format::idn_email},
        {"hostname", Format::hostname},
        {"idn-hostname", Format::idn_hostname},
        {"ipv4", Format::ipv4},
        {"ipv6", Format::ipv6},
        {"uri", Format::uri},
        {"uri-reference", Format::uri_reference},
        {"iri", Format::iri},
        {"iri-reference", Format::iri_reference},
        {"uri-template", Format::uri_template},
        {"uuid", Format::uuid},
        {"regex", Format::regex},
        {"json-pointer", Format::json_pointer},
        {"relative-json-pointer", Format::relative_json_pointer},
    };
    for (const auto& [n, f] : table) {
        if (n == name) return f;
    }
    return Format::none;
}

bool check_format(Format format, std::string_view v) {
    switch (format) {
        case Format::none: return true;
        case Format::date_time: return check_date_time(v);
        case Format::date: return check_date(v);
        case Format::time: return check_time(v);
        case Format::duration: return check_duration(v);
        case Format::email: return check_email(v, false);
        case Format::idn_email: return check_email(v, true);
        case Format::hostname: return check_hostname(v, false);
        case Format::idn_hostname: return check_hostname(v, true);
        case Format::ipv4: return check_ipv4(v);
        case Format::ipv6: return check_ipv6(v);
        case Format::uri: return check_uri_reference(v, true, false);
        case Format::uri_reference: return check_uri_reference(v, false, false);
        case Format::iri: return check_uri_reference(v, true, true);
        case Format::iri_reference: return check_uri_reference(v, false, true);
        case Format::uri_template: return check_uri_template(v);
        case Format::uuid: return check_uuid(v);
        case Format::regex: return Regex::is_valid_syntax(v);
        case Format::json_pointer: return check_json_pointer(v);
        case Format::relative_json_pointer: return check_relative_json_pointer(v);
    }
    return true;
}

}  // namespace toolport::schema::detail
