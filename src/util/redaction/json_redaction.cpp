#include "util/redaction/json_redaction.hpp"

#include <cstring>

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
    // Literals are found with memchr (a result's JSON is mostly string bodies): the next
    // quote, and within it a backslash only where the body has one.
    const char* const stop = text.data() + text.size();
    const auto find = [](const char* from, const char* to, char c) {
        return static_cast<const char*>(std::memchr(from, c, static_cast<std::size_t>(to - from)));
    };
    std::string decoded;
    const char* p = text.data();
    while (p < stop) {
        const char* quote = find(p, stop, '"');
        if (!quote) return;
        const char* const begin = quote + 1;
        const char* end = begin;  // the closing quote (or the text's end)
        bool escaped = false;
        for (;;) {
            const char* closing = find(end, stop, '"');
            if (!closing) closing = stop;
            const char* backslash = find(end, closing, '\\');
            if (!backslash) {
                end = closing;
                break;
            }
            escaped = true;
            if (stop - backslash <= 2) {  // nothing after what it escapes
                end = stop;
                break;
            }
            end = backslash + 2;
        }
        const std::string_view body(begin, static_cast<std::size_t>(end - begin));
        if (escaped) {
            unescape(body, decoded);
            scan_injection(decoded, found);
        } else {
            scan_injection(body, found);
        }
        if (end == stop) return;
        p = end + 1;
    }
}

}  // namespace toolport::util::redaction
