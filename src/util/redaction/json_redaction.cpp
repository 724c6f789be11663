#include "util/redaction/json_redaction.hpp"
#include "util/utf8.hpp"

namespace toolport::util::redaction {

namespace {

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// The four hex digits at `at`, or -1.
long hex4(std::string_view text, std::size_t at) {
    if (at + 4 > text.size()) return -1;
    long v = 0;
    for (std::size_t i = at; i < at + 4; ++i) {
        const int h = hex_value(text[i]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

// The escaped string literal body `body` decoded into `out`.
void unescape(std::string_view body, std::string& out) {
    out.clear();
    for (std::size_t i = 0; i < body.size(); ++i) {
        if (body[i] != '\\' || i + 1 >= body.size()) {
            out += body[i];
            continue;
        }
        const char e = body[++i];
        switch (e) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'r': out += '\r'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'u': {
                long cp = hex4(body, i + 1);
                if (cp < 0) break;
                i += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < body.size() && body[i + 1] == '\\' && body[i + 2] == 'u') {
                    const long low = hex4(body, i + 3);
                    if (low >= 0xDC00 && low <= 0xDFFF) {
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                        i += 6;
                    }
                }
                util::append_utf8(out, static_cast<std::uint32_t>(cp));
                break;
            }
            default: out += e; break;  // \" \\ \/
        }
    }
}

}  // namespace

std::size_t redact_json(Json& value, DetectorSet set, RedactionCounts* counts) {
    if (!set) return 0;
    switch (value.type()) {
        case Json::value_t::string: return redact_text(value.get_ref<std::string&>(), set, counts);
        case Json::value_t::array: {
            std::size_t n = 0;
            for (auto& item : value) n += redact_json(item, set, counts);
            return n;
        }
        case Json::value_t::object: {
            std::size_t n = 0;
            for (auto it = value.begin(); it != value.end(); ++it) n += redact_json(it.value(), set, counts);
            return n;
        }
        default: return 0;
    }
}

void scan_json_injection(const Json& value, InjectionFindings& found) {
    switch (value.type()) {
        case Json::value_t::string: scan_injection(value.get_ref<const std::string&>(), found); break;
        case Json::value_t::array:
            for (const auto& item : value) scan_json_injection(item, found);
            break;
        case Json::value_t::object:
            for (auto it = value.begin(); it != value.end(); ++it) {
                scan_injection(it.key(), found);
                scan_json_injection(it.value(), found);
            }
            break;
        default: break;
    }
}

void scan_json_text_injection(std::string_view text, InjectionFindings& found) {
    std::string decoded;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '"') continue;
        const std::size_t begin = i + 1;
        bool escaped = false;
        std::size_t end = begin;
        while (end < text.size() && text[end] != '"') {
            if (text[end] == '\\') {
                escaped = true;
                ++end;
            }
            ++end;
        }
        if (end > text.size()) end = text.size();
        const std::string_view body = text.substr(begin, end - begin);
        if (escaped) {
            unescape(body, decoded);
            scan_injection(decoded, found);
        } else {
            scan_injection(body, found);
        }
        i = end;
    }
}

}  // namespace toolport::util::redaction
