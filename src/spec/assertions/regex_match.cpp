// regex_match: an ECMAScript regular expression searched for in the response text.
//
// Patterns run on std::regex (ECMAScript grammar) over code points (UTF-8 decoded to 32-bit
// wchar_t), so "." is one character however many bytes it takes. Before std::regex sees a
// pattern, the JSON Schema validator's own pattern compiler vets it: it refuses patterns that
// would cost std::regex seconds or the stack (too long, nested too deep, huge repetition
// counts) with a clear reason. Patterns without back-references use libstdc++'s breadth-first
// matcher (linear in the text, bounded stack); those with back-references need the
// backtracking one, whose input is capped as the validator caps it. The y flag (sticky) matches
// at the start of the text only, as a fresh JavaScript RegExp would.
#include <regex>

#include <fmt/format.h>

#include "schema/regex.hpp"
#include "spec/assertions/assertion_type.hpp"

namespace toolport::spec::detail {

namespace {

static_assert(sizeof(wchar_t) == 4, "regex_match needs 32-bit wchar_t to hold code points");

std::wstring decode_utf8(const std::string& s) {
    std::wstring out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        auto b0 = static_cast<unsigned char>(s[i]);
        int len = b0 < 0x80 ? 1 : (b0 & 0xE0) == 0xC0 ? 2 : (b0 & 0xF0) == 0xE0 ? 3 : (b0 & 0xF8) == 0xF0 ? 4 : 0;
        char32_t cp = len == 1 ? b0 : len == 2 ? (b0 & 0x1F) : len == 3 ? (b0 & 0x0F) : (b0 & 0x07);
        bool ok = len > 0 && i + static_cast<std::size_t>(len) <= s.size();
        for (int k = 1; ok && k < len; ++k) {
            auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
            ok = (b & 0xC0) == 0x80;
            cp = (cp << 6) | (b & 0x3F);
        }
        if (!ok) {
            out += L'\uFFFD';  // a malformed byte stands for one unknown character
            ++i;
            continue;
        }
        out += static_cast<wchar_t>(cp);
        i += static_cast<std::size_t>(len);
    }
    return out;
}

struct Flags {
    bool ignore_case = false, multiline = false, dot_all = false, sticky = false;
};

Flags parse_flags(const std::string& text) {
    Flags flags;
    std::string seen;
    for (char c : text) {
        if (seen.find(c) != std::string::npos) throw std::invalid_argument(fmt::format("flag '{}' is given twice", c));
        seen += c;
        switch (c) {
            case 'i': flags.ignore_case = true; break;
            case 'm': flags.multiline = true; break;
            case 's': flags.dot_all = true; break;
            case 'y': flags.sticky = true; break;
            case 'g':
            case 'u':
            case 'd': break;  // change what a match returns, not whether there is one
            case 'v': throw std::invalid_argument("flag 'v' (Unicode sets) is not supported");
            default: throw std::invalid_argument(fmt::format("unknown flag '{}' (known: d, g, i, m, s, u, y)", c));
        }
    }
    return flags;
}

// With the s flag, "." outside a character class matches any character, line breaks included.
std::string dot_matches_all(const std::string& pattern) {
    std::string out;
    bool in_class = false;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            out += c;
            out += pattern[++i];
        } else if (in_class) {
            if (c == ']') in_class = false;
            out += c;
        } else if (c == '[') {
            in_class = true;
            out += c;
        } else {
            out += c == '.' ? std::string("[\\s\\S]") : std::string(1, c);
        }
    }
    return out;
}

Verdict check_regex_match(const Json& params, const CheckContext& context) {
    const auto& pattern = params["pattern"].get_ref<const std::string&>();
    std::string flag_text = params.value("flags", std::string());
    std::string shown = fmt::format("/{}/{}", pattern, flag_text);
    Flags flags;
    std::wregex regex;
    bool backtracking = false;
    try {
        flags = parse_flags(flag_text);
        schema::detail::Regex vetted(pattern);  // throws with the reason for a bad or too costly pattern
        std::wstring source = decode_utf8(flags.dot_all ? dot_matches_all(pattern) : pattern);
        // Searching means trying every start position; done by std::regex_search that costs
        // one full match attempt per position (quadratic). A lazy any-prefix matched from the
        // start finds the same matches in one pass. (The vetting above guarantees the pattern
        // is balanced, so wrapping it cannot change its meaning.)
        if (!flags.sticky) source = L"[\\s\\S]*?(?:" + source + L")";
        auto syntax = std::regex_constants::ECMAScript;
        if (flags.ignore_case) syntax |= std::regex_constants::icase;
        if (flags.multiline) syntax |= std::regex_constants::multiline;
        try {
            regex.assign(source, syntax | std::regex_constants::__polynomial);
        } catch (const std::regex_error& e) {
            if (e.code() != std::regex_constants::error_complexity) throw;
            regex.assign(source, syntax);  // back-references: only the backtracking matcher has them
            backtracking = true;
        }
    } catch (const std::exception& e) {
        return Verdict::fail(fmt::format("invalid regular expression {}: {}", shown, e.what()));
    }
    std::wstring text = decode_utf8(context.outcome.text);
    if (backtracking && text.size() > schema::detail::Regex::kMaxBacktrackingInput) {
        return Verdict::fail(fmt::format(
            "{} has back-references, which are matched by backtracking; the response text ({} characters) is "
            "longer than the {} that allows",
            shown, text.size(), schema::detail::Regex::kMaxBacktrackingInput));
    }
    bool found = false;
    try {
        found = std::regex_search(text, regex, std::regex_constants::match_continuous);
    } catch (const std::regex_error& e) {
        return Verdict::fail(fmt::format("matching {} failed: {}", shown, e.what()));
    }
    if (found) return Verdict::pass(fmt::format("the response matches {}", shown));
    return Verdict::fail(
        fmt::format("the response does not match {}; response text: {}", shown, preview_text(context.outcome.text)));
}

}  // namespace

const AssertionType kRegexMatchAssertion{
    "regex_match",
    {{"pattern", FieldKind::string, true}, {"flags", FieldKind::string, false}},
    nullptr,  // a bad pattern fails the assertion when it runs, with the reason
    check_regex_match,
};

}  // namespace toolport::spec::detail
