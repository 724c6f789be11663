#include "util/http_text.hpp"

#include <algorithm>

#include "util/ascii.hpp"

namespace toolport::util {

namespace {
// ASCII only, whatever the locale: these are protocol texts, not prose.
char lower(char c) { return to_lower_ascii(c); }
bool alphanumeric(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
}  // namespace

bool iequals_ascii(std::string_view a, std::string_view b) {
    // Texts that match mostly match as they are (a header name or a media type as the peer
    // spelled it): compared at once first, letter by letter ignoring case only if not.
    return a.size() == b.size() &&
           (a == b || std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == lower(y); }));
}

bool starts_with_ascii_nocase(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && iequals_ascii(text.substr(0, prefix.size()), prefix);
}

bool is_http_token(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return alphanumeric(c) || std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    });
}

bool has_control_chars(std::string_view text) {
    return std::any_of(text.begin(), text.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return (u < 0x20 && c != '\t') || u == 0x7f;
    });
}

}  // namespace toolport::util
