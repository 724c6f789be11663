#include "util/sanitize.hpp"

namespace toolport::util {

namespace {

// Length of a home-directory prefix starting at text[pos], or 0.
std::size_t home_prefix(std::string_view text, std::size_t pos) {
    auto rest = text.substr(pos);
    for (std::string_view base : {std::string_view("/home/"), std::string_view("/Users/")}) {
        if (rest.substr(0, base.size()) == base) {
            std::size_t end = base.size();
            while (end < rest.size() && rest[end] != '/' && rest[end] != ' ' && rest[end] != '"' && rest[end] != '\'')
                ++end;
            return end;
        }
    }
    if (rest.substr(0, 5) == "/root" && (rest.size() == 5 || rest[5] == '/' || rest[5] == ' ')) return 5;
    return 0;
}

// Removes an incomplete multi-byte UTF-8 sequence at the end of `s` (a cut in the middle
// of a character), leaving complete characters alone.
void drop_partial_utf8_tail(std::string& s) {
    std::size_t start = s.size();
    int continuation = 0;
    while (start > 0 && continuation < 4 && (static_cast<unsigned char>(s[start - 1]) & 0xC0) == 0x80) {
        --start;
        ++continuation;
    }
    if (start == 0) return;
    unsigned char lead = static_cast<unsigned char>(s[start - 1]);
    int expected = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC0 ? 1 : 0;
    if (lead < 0x80) expected = 0;
    if (continuation < expected) s.resize(start - 1);
}

}  // namespace

std::string sanitize_for_message(std::string_view text, std::size_t max_chars) {
    std::string out;
    out.reserve(std::min(text.size(), max_chars) + 8);
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (out.size() >= max_chars) {
            drop_partial_utf8_tail(out);
            out += "…";
            break;
        }
        const bool at_boundary = i == 0 || text[i - 1] == ' ' || text[i - 1] == '"' || text[i - 1] == '\'' ||
                                 text[i - 1] == '(' || text[i - 1] == '=' || text[i - 1] == ':';
        if (text[i] == '/' && at_boundary) {
            if (auto n = home_prefix(text, i); n > 0) {
                out += '~';
                i += n - 1;
                continue;
            }
        }
        unsigned char c = static_cast<unsigned char>(text[i]);
        out += (c < 0x20 || c == 0x7f) ? ' ' : static_cast<char>(c);
    }
    return out;
}

}  // namespace toolport::util
