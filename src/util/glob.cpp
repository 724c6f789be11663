#include "util/glob.hpp"

namespace toolport::util {

bool glob_match(std::string_view pattern, std::string_view text) {
    // On a mismatch, go back to the last `*` and let it take one more character. Only the
    // last star needs remembering: an earlier one could only take what the later one can.
    std::size_t p = 0, t = 0;
    std::size_t star = std::string_view::npos, star_text = 0;
    while (t < text.size()) {
        if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
            ++p;
            ++t;
        } else if (p < pattern.size() && pattern[p] == '*') {
            star = p++;
            star_text = t;
        } else if (star != std::string_view::npos) {
            p = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

std::optional<std::string> glob_problem(std::string_view pattern) {
    if (pattern.empty()) return "an empty pattern matches nothing (use \"*\" for everything)";
    if (pattern.find_first_of("[]{}") != std::string_view::npos) {
        return "brackets and braces are not wildcards here: only * (any run of characters) and ? (one character) "
               "are";
    }
    return std::nullopt;
}

}  // namespace toolport::util
