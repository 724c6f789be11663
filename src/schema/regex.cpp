// ECMA-262 "pattern" matching on top of std::regex.
//
// Why not std::regex as is:
//  - It works on bytes, but JSON Schema patterns are Unicode: "." and a quantified "🐲" must
//    consume whole code points. We decode UTF-8 to UTF-32 and match with wchar_t (32 bits on
//    the platforms Toolport supports; a static_assert guards that).
//  - Its \d, \w, \s follow the C++ locale; ECMA-262 defines \d and \w as ASCII-only and \s as
//    a fixed set of Unicode spaces. A custom traits class supplies exactly those classes.
//  - It has no \p{...}; the pattern is rewritten so \p{L} etc. become bracket classes that
//    the traits class answers from the Unicode General_Category table.
//  - Its default (depth-first, backtracking) matcher recurses once per input character and
//    overflows the stack on a few tens of kilobytes of input, and backtracks exponentially
//    on patterns like (a+)+$. Tool arguments are untrusted, so patterns without
//    back-references use libstdc++'s breadth-first matcher (regex_constants::__polynomial):
//    linear in the input, bounded stack. Patterns with back-references can only use the
//    backtracking matcher; their input is capped at Regex::kMaxBacktrackingInput code points.
//  - ECMA-262 syntax std::regex does not parse ("[]", "[^]", named groups, \u{...}, \cX,
//    "[[:alpha:]]" meaning a literal "[") is rewritten; what cannot be (lookbehind, named
//    back-references) is rejected with a clear message at compile time.
//  - The breadth-first matcher allocates dozens of times per match. Patterns made only of
//    quantified single-character atoms (the common case in tool schemas) are matched by a
//    small bit-parallel automaton instead (SimpleMatcher below): no allocation, one pass.
//    std::regex still compiles every pattern, so both paths accept exactly the same syntax.

#include "schema/regex.hpp"

#include <algorithm>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>

namespace toolport::schema::detail {

static_assert(sizeof(wchar_t) == 4, "the pattern matcher needs 32-bit wchar_t to hold code points");

GeneralCategory general_category(char32_t c) {
    const UnicodeRange* begin = kUnicodeCategoryRanges;
    const UnicodeRange* end = kUnicodeCategoryRanges + kUnicodeCategoryRangeCount;
    const UnicodeRange* it = std::upper_bound(begin, end, c,
                                              [](char32_t v, const UnicodeRange& r) { return v < r.first; });
    if (it == begin) return kCn;
    --it;
    return c <= it->last ? static_cast<GeneralCategory>(it->category) : kCn;
}

namespace {

// Decodes the code point at s[i] and advances i; malformed sequences become U+FFFD
// (instances built in code, rather than parsed, may hold arbitrary bytes).
char32_t next_code_point(std::string_view s, std::size_t& i) {
    auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    int len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2;
        cp = b0 & 0x1F;
        min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3;
        cp = b0 & 0x0F;
        min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4;
        cp = b0 & 0x07;
        min = 0x10000;
    }
    bool ok = len > 0 && i + static_cast<std::size_t>(len) <= s.size();
    for (int k = 1; ok && k < len; ++k) {
        auto b = static_cast<unsigned char>(s[i + static_cast<std::size_t>(k)]);
        if ((b & 0xC0) != 0x80) {
            ok = false;
        } else {
            cp = (cp << 6) | (b & 0x3F);
        }
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (!ok) {
        ++i;
        return 0xFFFD;
    }
    i += static_cast<std::size_t>(len);
    return cp;
}

template <typename Sink>
void decode_utf8(std::string_view s, Sink&& sink) {
    for (std::size_t i = 0; i < s.size();) sink(next_code_point(s, i));
}

// Character classes of the traits below: three ECMA-262 escapes and one bit per Unicode
// general category (bits 3..32). A bracket expression ORs the classes it lists.
constexpr std::uint64_t kClassDigit = 1;
constexpr std::uint64_t kClassWord = 2;
constexpr std::uint64_t kClassSpace = 4;
constexpr int kCategoryShift = 3;
constexpr std::uint64_t kAllCategories = (std::uint64_t{1} << kCategoryCount) - 1;

bool is_ecma_space(char32_t c) {
    switch (c) {
        case 0x09:
        case 0x0A:
        case 0x0B:
        case 0x0C:
        case 0x0D:
        case 0x20:
        case 0xA0:
        case 0x1680:
        case 0x2028:
        case 0x2029:
        case 0x202F:
        case 0x205F:
        case 0x3000:
        case 0xFEFF: return true;
        default: return c >= 0x2000 && c <= 0x200A;
    }
}

bool is_ascii_word(char32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

bool in_classes(char32_t c, std::uint64_t mask) {
    if ((mask & kClassDigit) && c >= '0' && c <= '9') return true;
    if ((mask & kClassWord) && is_ascii_word(c)) return true;
    if ((mask & kClassSpace) && is_ecma_space(c)) return true;
    std::uint64_t categories = mask >> kCategoryShift;
    return categories != 0 && ((categories >> general_category(c)) & 1);
}

// libstdc++'s regex compiler asks the traits for \d, \w, \s (lookup_classname("d") etc.),
// for word boundaries ("w") and for [[:name:]] classes. Everything else (translation,
// collation, digit values) is inherited from the standard wchar_t traits.
struct EcmaTraits : std::regex_traits<wchar_t> {
    using char_class_type = std::uint64_t;

    template <typename It>
    char_class_type lookup_classname(It first, It last, bool /*icase*/ = false) const {
        std::wstring name(first, last);
        if (name == L"d" || name == L"D") return kClassDigit;
        if (name == L"w" || name == L"W") return kClassWord;
        if (name == L"s" || name == L"S") return kClassSpace;
        // "x<hex>": a set of general categories, written by translate_pattern() for \p{...}.
        if (name.size() > 1 && name[0] == L'x') {
            std::uint64_t mask = 0;
            for (std::size_t i = 1; i < name.size(); ++i) {
                wchar_t c = name[i];
                int v = c >= L'0' && c <= L'9' ? c - L'0' : c >= L'a' && c <= L'f' ? c - L'a' + 10 : -1;
                if (v < 0) return 0;
                mask = mask * 16 + static_cast<std::uint64_t>(v);
            }
            return (mask & kAllCategories) << kCategoryShift;
        }
        return 0;
    }

    bool isctype(wchar_t wc, char_class_type mask) const { return in_classes(static_cast<char32_t>(wc), mask); }
};

std::uint64_t bit(GeneralCategory c) { return std::uint64_t{1} << c; }

// \p{Name} / \p{General_Category=Name} / \p{gc=Name}: general categories by short or long
// name, plus Any, ASCII is not a category and is not supported. Scripts are not supported.
std::uint64_t property_mask(const std::string& raw) {
    std::string name = raw;
    for (const char* prefix : {"General_Category=", "gc="}) {
        if (name.starts_with(prefix)) name = name.substr(std::string_view(prefix).size());
    }
    const std::uint64_t letter = bit(kLu) | bit(kLl) | bit(kLt) | bit(kLm) | bit(kLo);
    const std::uint64_t mark = bit(kMn) | bit(kMc) | bit(kMe);
    const std::uint64_t number = bit(kNd) | bit(kNl) | bit(kNo);
    const std::uint64_t punct = bit(kPc) | bit(kPd) | bit(kPs) | bit(kPe) | bit(kPi) | bit(kPf) | bit(kPo);
    const std::uint64_t symbol = bit(kSm) | bit(kSc) | bit(kSk) | bit(kSo);
    const std::uint64_t separator = bit(kZs) | bit(kZl) | bit(kZp);
    const std::uint64_t other = bit(kCc) | bit(kCf) | bit(kCs) | bit(kCo) | bit(kCn);
    struct Entry {
        const char* short_name;
        const char* long_name;
        std::uint64_t mask;
    };
    const Entry table[] = {
        {"L", "Letter", letter},
        {"LC", "Cased_Letter", bit(kLu) | bit(kLl) | bit(kLt)},
        {"Lu", "Uppercase_Letter", bit(kLu)},
        {"Ll", "Lowercase_Letter", bit(kLl)},
        {"Lt", "Titlecase_Letter", bit(kLt)},
        {"Lm", "Modifier_Letter", bit(kLm)},
        {"Lo", "Other_Letter", bit(kLo)},
        {"M", "Mark", mark},
        {"Mn", "Nonspacing_Mark", bit(kMn)},
        {"Mc", "Spacing_Mark", bit(kMc)},
        {"Me", "Enclosing_Mark", bit(kMe)},
        {"N", "Number", number},
        {"Nd", "Decimal_Number", bit(kNd)},
        {"Nl", "Letter_Number", bit(kNl)},
        {"No", "Other_Number", bit(kNo)},
        {"P", "Punctuation", punct},
        {"Pc", "Connector_Punctuation", bit(kPc)},
        {"Pd", "Dash_Punctuation", bit(kPd)},
        {"Ps", "Open_Punctuation", bit(kPs)},
        {"Pe", "Close_Punctuation", bit(kPe)},
        {"Pi", "Initial_Punctuation", bit(kPi)},
        {"Pf", "Final_Punctuation", bit(kPf)},
        {"Po", "Other_Punctuation", bit(kPo)},
        {"S", "Symbol", symbol},
        {"Sm", "Math_Symbol", bit(kSm)},
        {"Sc", "Currency_Symbol", bit(kSc)},
        {"Sk", "Modifier_Symbol", bit(kSk)},
        {"So", "Other_Symbol", bit(kSo)},
        {"Z", "Separator", separator},
        {"Zs", "Space_Separator", bit(kZs)},
        {"Zl", "Line_Separator", bit(kZl)},
        {"Zp", "Paragraph_Separator", bit(kZp)},
        {"C", "Other", other},
        {"Cc", "Control", bit(kCc)},
        {"Cf", "Format", bit(kCf)},
        {"Cs", "Surrogate", bit(kCs)},
        {"Co", "Private_Use", bit(kCo)},
        {"Cn", "Unassigned", bit(kCn)},
        // Aliases the Unicode property database defines for some categories.
        {"digit", "Nd", bit(kNd)},
        {"punct", "Punctuation", punct},
        {"Combining_Mark", "Combining_Mark", mark},
        {"cntrl", "Control", bit(kCc)},
        {"Any", "Any", kAllCategories},
        {"Assigned", "Assigned", kAllCategories & ~bit(kCn)},
    };
    for (const Entry& e : table) {
        if (name == e.short_name || name == e.long_name) return e.mask;
    }
    throw std::invalid_argument("unsupported Unicode property \\p{" + raw + "}");
}

// Valid ECMA-262 that std::regex cannot run.
struct Unsupported : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

std::wstring class_name_for(std::uint64_t mask) {
    static const char* hex = "0123456789abcdef";
    std::wstring out = L"x";
    std::wstring digits;
    do {
        digits.insert(digits.begin(), static_cast<wchar_t>(hex[mask & 15]));
        mask >>= 4;
    } while (mask != 0);
    return out + digits;
}

struct Translated {
    std::wstring pattern;
    bool has_backreference = false;
};

// Rewrites an ECMA-262 pattern (with the "u" flag semantics JSON Schema implies) into the
// ECMAScript grammar libstdc++ accepts, with EcmaTraits classes.
class PatternTranslator {
public:
    PatternTranslator(std::string_view pattern, bool strict) : strict_(strict) {
        decode_utf8(pattern, [this](char32_t c) { in_.push_back(c); });
    }

    // Quantifier bounds and the (estimated) size of the expanded automaton are capped: std::regex
    // builds one state per repetition, so "a{1000000}" or "(a{1000}){1000}" in a schema would
    // cost seconds and gigabytes at compile time.
    static constexpr std::size_t kMaxRepeat = 10000;
    static constexpr std::size_t kMaxCost = 100000;
    // libstdc++ compiles patterns by recursive descent (about 400 bytes of stack per atom and
    // per nesting level in release builds, several times that under AddressSanitizer) and its
    // matcher recurses through alternatives, so pattern size, group nesting and alternatives
    // are capped too: a pattern at these limits needs at most 0.5 MB of stack to compile and
    // 0.15 MB to match in release builds (4 MB / 0.3 MB under AddressSanitizer), within the
    // 8 MB of Toolport's threads.
    static constexpr std::size_t kMaxLength = 1000;
    static constexpr std::size_t kMaxNesting = 32;
    static constexpr std::size_t kMaxAlternatives = 256;

    Translated run() {
        if (in_.size() > kMaxLength) {
            throw std::invalid_argument("pattern is longer than " + std::to_string(kMaxLength) + " characters");
        }
        Translated t;
        bool in_class = false;
        std::size_t alternatives = 0;
        std::vector<std::size_t> group_cost;  // cost when each open group started
        std::size_t cost = 0;                 // estimated automaton size so far
        std::size_t last = 0;                 // cost of the last atom or group (what a quantifier repeats)
        auto add = [&](std::size_t n) {
            cost += n;
            if (cost > kMaxCost) throw std::invalid_argument("pattern is too complex (too many repetitions)");
        };
        while (pos_ < in_.size()) {
            char32_t c = in_[pos_++];
            if (in_class) {
                if (c == ']') {
                    in_class = false;
                    out_ += L']';
                } else if (c == '\\') {
                    escape(true, t);
                } else if (c == '[') {
                    out_ += L"\\[";  // ECMA-262 has no [:class:] / [.coll.] / [=equiv=] syntax
                } else {
                    out_ += static_cast<wchar_t>(c);
                }
                continue;
            }
            bool atom = true;
            switch (c) {
                case '\\': escape(false, t); break;
                case '.': out_ += L"[^\n\r\u2028\u2029]"; break;
                case '[': {
                    bool negated = peek() == '^';
                    if (negated) ++pos_;
                    if (peek() == ']') {  // [] matches nothing, [^] matches anything
                        ++pos_;
                        out_ += negated ? L"[\\s\\S]" : L"(?!)";
                        break;
                    }
                    out_ += negated ? L"[^" : L"[";
                    in_class = true;
                    break;
                }
                case '(':
                    atom = false;
                    group_cost.push_back(cost);
                    if (group_cost.size() > kMaxNesting) {
                        throw std::invalid_argument("groups nested more than " + std::to_string(kMaxNesting) + " deep");
                    }
                    out_ += L'(';
                    if (peek() == '?' && peek(1) == '<') {
                        if (peek(2) == '=' || peek(2) == '!') {
                            throw Unsupported("lookbehind assertions are not supported");
                        }
                        // Named group: keep the group, drop the name (nothing refers to it by name
                        // unless \k<name> is used, which is rejected below).
                        pos_ += 2;
                        while (pos_ < in_.size() && in_[pos_] != '>') ++pos_;
                        if (pos_ >= in_.size()) throw std::invalid_argument("unterminated group name");
                        ++pos_;
                    }
                    break;
                case ')':
                    atom = false;
                    if (!group_cost.empty()) {
                        last = cost - group_cost.back();
                        group_cost.pop_back();
                    }
                    out_ += L')';
                    break;
                case '*':
                case '+':
                case '?':
                    atom = false;
                    add(last);  // a starred atom is kept once more in the automaton
                    last = 0;   // a lazy '?' or another quantifier repeats nothing more
                    out_ += static_cast<wchar_t>(c);
                    break;
                case '{': {
                    atom = false;
                    std::size_t save = pos_;
                    std::size_t min = 0;
                    std::size_t max = 0;
                    if (read_bound(min) && (peek() == '}' || peek() == ',')) {
                        max = min;
                        bool ok = true;
                        if (peek() == ',') {
                            ++pos_;
                            if (peek() != '}') ok = read_bound(max);
                        }
                        if (ok && peek() == '}') {
                            ++pos_;
                            add(last * std::max(min, max));
                            last = 0;
                            out_.append(in_.begin() + static_cast<std::ptrdiff_t>(save - 1),
                                        in_.begin() + static_cast<std::ptrdiff_t>(pos_));
                            break;
                        }
                    }
                    pos_ = save;  // not a quantifier: std::regex decides what it is
                    out_ += L'{';
                    break;
                }
                case '|':
                    if (++alternatives > kMaxAlternatives) {
                        throw std::invalid_argument("more than " + std::to_string(kMaxAlternatives) + " alternatives");
                    }
                    [[fallthrough]];
                case '^':
                case '$':
                    atom = false;
                    out_ += static_cast<wchar_t>(c);
                    break;
                default: out_ += static_cast<wchar_t>(c);
            }
            if (atom) {
                add(1);
                last = 1;
            }
        }
        if (in_class) throw std::invalid_argument("missing ']'");
        t.pattern = std::move(out_);
        return t;
    }

private:
    char32_t peek(std::size_t ahead = 0) const {
        return pos_ + ahead < in_.size() ? in_[pos_ + ahead] : char32_t{0xFFFFFFFF};
    }

    static bool is_hex(char32_t c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    }
    static unsigned hex_value(char32_t c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

    void literal(char32_t c) {
        static const std::u32string_view special = U"^$\\.*+?()[]{}|/-";
        if (special.find(c) != std::u32string_view::npos) out_ += L'\\';
        out_ += static_cast<wchar_t>(c);
    }

    // A decimal quantifier bound, at most kMaxRepeat.
    bool read_bound(std::size_t& out) {
        std::size_t start = pos_;
        out = 0;
        while (peek() >= '0' && peek() <= '9') {
            out = out * 10 + (in_[pos_++] - '0');
            if (out > kMaxRepeat) throw std::invalid_argument("quantifier bound exceeds " + std::to_string(kMaxRepeat));
        }
        return pos_ > start;
    }

    char32_t read_hex(std::size_t digits) {
        char32_t v = 0;
        for (std::size_t i = 0; i < digits; ++i) {
            if (!is_hex(peek())) throw std::invalid_argument("invalid hexadecimal escape");
            v = v * 16 + hex_value(in_[pos_++]);
        }
        return v;
    }

    char32_t read_unicode_escape() {  // after "\u"
        if (peek() == '{') {
            ++pos_;
            char32_t v = 0;
            std::size_t n = 0;
            while (is_hex(peek())) {
                v = v * 16 + hex_value(in_[pos_++]);
                if (++n > 6 || v > 0x10FFFF) throw std::invalid_argument("invalid \\u{...} escape");
            }
            if (n == 0 || peek() != '}') throw std::invalid_argument("invalid \\u{...} escape");
            ++pos_;
            return v;
        }
        char32_t v = read_hex(4);
        // A surrogate pair written as two escapes is one code point.
        if (v >= 0xD800 && v <= 0xDBFF && peek() == '\\' && peek(1) == 'u' && is_hex(peek(2))) {
            std::size_t save = pos_;
            pos_ += 2;
            char32_t lo = read_hex(4);
            if (lo >= 0xDC00 && lo <= 0xDFFF) return 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
            pos_ = save;
        }
        return v;
    }

    void escape(bool in_class, Translated& t) {
        if (pos_ >= in_.size()) throw std::invalid_argument("pattern ends with '\\'");
        char32_t c = in_[pos_++];
        switch (c) {
            case 'd':
            case 'D':
            case 'w':
            case 'W':
            case 's':
            case 'S':
                out_ += L'\\';
                out_ += static_cast<wchar_t>(c);
                return;
            case 'b':
                if (in_class) {
                    literal(0x08);
                } else {
                    out_ += L"\\b";
                }
                return;
            case 'B':
                if (in_class) throw std::invalid_argument("\\B inside a character class");
                out_ += L"\\B";
                return;
            case 'p':
            case 'P': {
                if (peek() != '{') throw std::invalid_argument("\\p must be followed by {property}");
                ++pos_;
                std::string name;
                while (pos_ < in_.size() && in_[pos_] != '}') {
                    if (in_[pos_] > 0x7F) throw std::invalid_argument("invalid Unicode property name");
                    name += static_cast<char>(in_[pos_++]);
                }
                if (pos_ >= in_.size()) throw std::invalid_argument("unterminated \\p{...}");
                ++pos_;
                std::uint64_t mask = property_mask(name);
                if (c == 'P') mask = ~mask & kAllCategories;
                std::wstring cls = L"[:" + class_name_for(mask) + L":]";
                out_ += in_class ? cls : L"[" + cls + L"]";
                return;
            }
            case 'c': {
                char32_t l = peek();
                if ((l >= 'a' && l <= 'z') || (l >= 'A' && l <= 'Z')) {
                    ++pos_;
                    literal(l % 32);
                } else {
                    literal('\\');
                    literal('c');
                }
                return;
            }
            case 'u': literal(read_unicode_escape()); return;
            case 'x': literal(read_hex(2)); return;
            case 't': literal('\t'); return;
            case 'n': literal('\n'); return;
            case 'v': literal('\v'); return;
            case 'f': literal('\f'); return;
            case 'r': literal('\r'); return;
            case '0':
                if (peek() >= '0' && peek() <= '9') throw std::invalid_argument("invalid octal escape");
                literal(0);
                return;
            case 'k': throw Unsupported("named back-references (\\k<name>) are not supported");
            default: break;
        }
        if (c >= '1' && c <= '9') {
            if (in_class) throw std::invalid_argument("back-reference inside a character class");
            t.has_backreference = true;
            out_ += L'\\';
            out_ += static_cast<wchar_t>(c);
            for (int digits = 1; peek() >= '0' && peek() <= '9'; ++digits) {
                if (digits == 3) throw std::invalid_argument("back-reference number too large");
                out_ += static_cast<wchar_t>(in_[pos_++]);
            }
            return;
        }
        // Identity escapes: ECMA-262 (u flag) allows only syntax characters and '/'. Escaped
        // letters and digits (\a, \e, \_) are errors there; outside strict mode they are kept as
        // the literal character, as most other engines do.
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (strict_ && (alnum || (c > 0x7F))) throw std::invalid_argument("invalid escape");
        literal(c);
    }

    bool strict_;
    std::u32string in_;
    std::size_t pos_ = 0;
    std::wstring out_;
};

// ---- Fast path ------------------------------------------------------------------------
//
// Most patterns in tool schemas are a sequence of single-character atoms with quantifiers:
// ^[a-z0-9_-]+$, ^\d{4}-\d{2}-\d{2}$, ^https?://\S+$. For those, a position automaton
// simulated with a bit set (one bit per expanded atom) decides a match in one pass over the
// code points, with no allocation and no backtracking. Patterns with groups, alternation,
// assertions or back-references (or too many expanded atoms) use std::regex.

struct CharSet {
    bool negated = false;
    std::vector<std::pair<char32_t, char32_t>> ranges;
    std::uint64_t classes = 0;          // EcmaTraits class bits (\d \w \s, \p{...})
    std::uint64_t negated_classes = 0;  // \D \W \S \P{...} inside a bracket expression

    bool matches(char32_t c) const {
        bool in = false;
        for (const auto& [lo, hi] : ranges) {
            if (c >= lo && c <= hi) {
                in = true;
                break;
            }
        }
        if (!in && classes != 0) in = in_classes(c, classes);
        if (!in && negated_classes != 0) {
            for (std::uint64_t m : {kClassDigit, kClassWord, kClassSpace}) {
                if ((negated_classes & m) && !in_classes(c, m)) in = true;
            }
            std::uint64_t cats = negated_classes & ~(kClassDigit | kClassWord | kClassSpace);
            if (cats != 0 && !in_classes(c, cats)) in = true;
        }
        return in != negated;
    }
};

class SimpleMatcher {
public:
    static constexpr std::size_t kMaxPositions = 255;

    // nullopt when the pattern needs the general matcher. Only called on patterns std::regex
    // has already accepted, so syntax errors need no reporting here.
    static std::optional<SimpleMatcher> parse(const std::u32string& p) {
        SimpleMatcher m;
        std::size_t i = 0;
        const std::size_t n = p.size();
        if (i < n && p[i] == '^') {
            m.anchored_start_ = true;
            ++i;
        }
        while (i < n) {
            char32_t c = p[i];
            if (c == '$' && i + 1 == n) {
                m.anchored_end_ = true;
                break;
            }
            CharSet atom;
            if (c == '\\') {
                ++i;
                if (i >= n || !m.escape(p, i, atom, /*in_class=*/false)) return std::nullopt;
            } else if (c == '.') {
                atom.negated = true;
                atom.ranges = {{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}};
                ++i;
            } else if (c == '[') {
                ++i;
                if (!m.bracket(p, i, atom)) return std::nullopt;
            } else if (std::u32string_view(U"()|^$*+?{}]").find(c) != std::u32string_view::npos) {
                return std::nullopt;
            } else {
                atom.ranges = {{c, c}};
                ++i;
            }
            std::size_t min = 1;
            std::size_t max = 1;  // SIZE_MAX: unbounded
            if (i < n && (p[i] == '*' || p[i] == '+' || p[i] == '?')) {
                min = p[i] == '+' ? 1 : 0;
                max = p[i] == '?' ? 1 : SIZE_MAX;
                ++i;
            } else if (i < n && p[i] == '{') {
                ++i;
                auto number = [&](std::size_t& out) {
                    std::size_t start = i;
                    out = 0;
                    while (i < n && p[i] >= '0' && p[i] <= '9' && i - start < 6) out = out * 10 + (p[i++] - '0');
                    return i > start && !(i < n && p[i] >= '0' && p[i] <= '9');
                };
                if (!number(min)) return std::nullopt;
                max = min;
                if (i < n && p[i] == ',') {
                    ++i;
                    if (i < n && p[i] == '}') {
                        max = SIZE_MAX;
                    } else if (!number(max)) {
                        return std::nullopt;
                    }
                }
                if (i >= n || p[i] != '}' || max < min) return std::nullopt;
                ++i;
            }
            if (i < n && p[i] == '?' && !(min == 1 && max == 1)) ++i;  // lazy: same language
            auto index = static_cast<std::uint16_t>(m.atoms_.size());
            m.atoms_.push_back(std::move(atom));
            std::size_t copies = min + (max == SIZE_MAX ? 1 : max - min);
            if (m.positions_.size() + copies > kMaxPositions) return std::nullopt;
            for (std::size_t k = 0; k < min; ++k) m.positions_.push_back({index, Repeat::once});
            if (max == SIZE_MAX) {
                m.positions_.push_back({index, Repeat::star});
            } else {
                for (std::size_t k = min; k < max; ++k) m.positions_.push_back({index, Repeat::optional});
            }
        }
        return m;
    }

    bool search(std::string_view utf8) const {
        const std::size_t end = positions_.size();  // the accepting state
        Bits current;
        current.set(0);
        close(current);
        if (!anchored_end_ && current.test(end)) return true;
        for (std::size_t i = 0; i < utf8.size();) {
            char32_t c = next_code_point(utf8, i);
            Bits next;
            for (std::size_t w = 0; w < Bits::kWords; ++w) {
                for (std::uint64_t bits = current.words[w]; bits != 0; bits &= bits - 1) {
                    std::size_t state = w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits));
                    if (state >= end) continue;
                    const Position& pos = positions_[state];
                    if (!atoms_[pos.atom].matches(c)) continue;
                    if (pos.repeat == Repeat::star) next.set(state);
                    next.set(state + 1);
                }
            }
            if (!anchored_start_) next.set(0);  // a match may start at any position
            close(next);
            if (!anchored_end_ && next.test(end)) return true;
            if (next.empty()) return false;
            current = next;
        }
        return current.test(end);
    }

private:
    enum class Repeat : std::uint8_t { once, optional, star };
    struct Position {
        std::uint16_t atom;
        Repeat repeat;
    };
    struct Bits {
        static constexpr std::size_t kWords = (kMaxPositions + 1 + 63) / 64;
        std::uint64_t words[kWords] = {};
        void set(std::size_t i) { words[i >> 6] |= std::uint64_t{1} << (i & 63); }
        bool test(std::size_t i) const { return (words[i >> 6] >> (i & 63)) & 1; }
        bool empty() const {
            for (std::uint64_t w : words) {
                if (w != 0) return false;
            }
            return true;
        }
    };

    // Adds the states reachable by skipping optional and starred positions.
    void close(Bits& b) const {
        for (std::size_t s = 0; s < positions_.size(); ++s) {
            if (positions_[s].repeat != Repeat::once && b.test(s)) b.set(s + 1);
        }
    }

    static bool hex(char32_t c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }
    static unsigned hex_value(char32_t c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

    // One escape after '\' at p[i]; a class escape sets `classes`/`negated_classes`, anything
    // else a single code point. False: leave the pattern to std::regex.
    bool escape(const std::u32string& p, std::size_t& i, CharSet& set, bool in_class) {
        const std::size_t n = p.size();
        char32_t c = p[i++];
        auto single = [&](char32_t v) {
            set.ranges.push_back({v, v});
            return true;
        };
        auto read_hex = [&](std::size_t digits, char32_t& out) {
            out = 0;
            for (std::size_t k = 0; k < digits; ++k) {
                if (i >= n || !hex(p[i])) return false;
                out = out * 16 + hex_value(p[i++]);
            }
            return true;
        };
        switch (c) {
            case 'd': set.classes |= kClassDigit; return true;
            case 'w': set.classes |= kClassWord; return true;
            case 's': set.classes |= kClassSpace; return true;
            case 'D':
            case 'W':
            case 'S': {
                std::uint64_t m = c == 'D' ? kClassDigit : c == 'W' ? kClassWord : kClassSpace;
                if (in_class) {
                    set.negated_classes |= m;
                } else {
                    set.negated = true;
                    set.classes |= m;
                }
                return true;
            }
            case 'p':
            case 'P': {
                if (i >= n || p[i] != '{') return false;
                std::size_t close = p.find('}', i);
                if (close == std::u32string::npos) return false;
                std::string name;
                for (std::size_t k = i + 1; k < close; ++k) {
                    if (p[k] > 0x7F) return false;
                    name += static_cast<char>(p[k]);
                }
                i = close + 1;
                std::uint64_t mask;
                try {
                    mask = property_mask(name);
                } catch (const std::exception&) {
                    return false;
                }
                if (c == 'P') mask = ~mask & kAllCategories;
                set.classes |= mask << kCategoryShift;
                return true;
            }
            case 't': return single('\t');
            case 'n': return single('\n');
            case 'v': return single('\v');
            case 'f': return single('\f');
            case 'r': return single('\r');
            case 'b': return in_class && single(0x08);
            case '0': return !(i < n && p[i] >= '0' && p[i] <= '9') && single(0);
            case 'c':
                if (i < n && (((p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'z'))) return single(p[i++] % 32);
                return false;
            case 'x': {
                char32_t v;
                return read_hex(2, v) && single(v);
            }
            case 'u': {
                char32_t v;
                if (i < n && p[i] == '{') return false;  // rare; the general path handles it
                if (!read_hex(4, v)) return false;
                if (v >= 0xD800 && v <= 0xDBFF && i + 1 < n && p[i] == '\\' && p[i + 1] == 'u') {
                    std::size_t save = i;
                    i += 2;
                    char32_t lo;
                    if (read_hex(4, lo) && lo >= 0xDC00 && lo <= 0xDFFF)
                        return single(0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00));
                    i = save;
                }
                return single(v);
            }
            default:
                if ((c >= '1' && c <= '9') || c == 'k' || c == 'B') return false;
                return single(c);  // identity escape
        }
    }

    // A bracket expression after '['; i ends past ']'.
    bool bracket(const std::u32string& p, std::size_t& i, CharSet& set) {
        const std::size_t n = p.size();
        if (i < n && p[i] == '^') {
            set.negated = true;
            ++i;
        }
        if (i < n && p[i] == ']') return false;  // [] and [^]: rare, general path
        while (i < n && p[i] != ']') {
            // One class atom; returns false if it was a class escape (cannot start a range).
            auto atom = [&](char32_t& out, bool& is_char) {
                is_char = true;
                if (p[i] != '\\') {
                    out = p[i++];
                    return true;
                }
                ++i;
                if (i >= n) return false;
                CharSet tmp;
                if (!escape(p, i, tmp, /*in_class=*/true)) return false;
                if (tmp.ranges.size() == 1 && tmp.classes == 0 && tmp.negated_classes == 0) {
                    out = tmp.ranges[0].first;
                } else {
                    is_char = false;
                    set.classes |= tmp.classes;
                    set.negated_classes |= tmp.negated_classes;
                }
                return true;
            };
            char32_t lo;
            bool lo_char;
            if (!atom(lo, lo_char)) return false;
            if (!lo_char) continue;
            if (i + 1 < n && p[i] == '-' && p[i + 1] != ']') {
                ++i;
                char32_t hi;
                bool hi_char;
                if (!atom(hi, hi_char) || !hi_char || hi < lo) return false;
                set.ranges.push_back({lo, hi});
            } else {
                set.ranges.push_back({lo, lo});
            }
        }
        if (i >= n) return false;
        ++i;  // ']'
        return true;
    }

    std::vector<CharSet> atoms_;
    std::vector<Position> positions_;
    bool anchored_start_ = false;
    bool anchored_end_ = false;
};

}  // namespace

std::size_t count_code_points(std::string_view utf8) {
    // Every code point has exactly one byte that is not a continuation byte (10xxxxxx).
    std::size_t n = 0;
    for (char c : utf8) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

struct Regex::Impl {
    std::basic_regex<wchar_t, EcmaTraits> re;
    std::optional<SimpleMatcher> simple;  // used instead of `re` when the pattern allows
    bool backtracking = false;
    std::string source;
};

Regex::Regex(std::string_view pattern) {
    auto impl = std::make_shared<Impl>();
    impl->source = std::string(pattern);
    Translated t = PatternTranslator(pattern, /*strict=*/false).run();
    impl->backtracking = t.has_backreference;
    auto flags = std::regex_constants::ECMAScript;
    if (!t.has_backreference) flags |= std::regex_constants::__polynomial;
    try {
        impl->re.assign(t.pattern, flags);  // also validates patterns the fast path takes
    } catch (const std::regex_error& e) {
        throw std::invalid_argument(e.what());
    }
    std::u32string code_points;
    decode_utf8(pattern, [&](char32_t c) { code_points.push_back(c); });
    impl->simple = SimpleMatcher::parse(code_points);
    impl_ = std::move(impl);
}

const std::string& Regex::source() const { return impl_->source; }

bool Regex::is_valid_syntax(std::string_view pattern) {
    try {
        Translated t = PatternTranslator(pattern, /*strict=*/true).run();
        std::basic_regex<wchar_t, EcmaTraits> re(t.pattern, std::regex_constants::ECMAScript);
        return true;
    } catch (const Unsupported&) {
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

Regex::Match Regex::search(std::string_view utf8) const {
    if (impl_->simple) return impl_->simple->search(utf8) ? Match::yes : Match::no;
    // Reused per thread so that matching allocates nothing for the decoded text once warm.
    thread_local std::wstring text;
    text.clear();
    decode_utf8(utf8, [](char32_t c) { text.push_back(static_cast<wchar_t>(c)); });
    Match result = Match::too_long;
    if (!impl_->backtracking || text.size() <= kMaxBacktrackingInput) {
        result = std::regex_search(text.cbegin(), text.cend(), impl_->re) ? Match::yes : Match::no;
    }
    // Do not keep a huge buffer alive per thread after an unusually long string.
    if (text.capacity() > (std::size_t{1} << 16)) std::wstring().swap(text);
    return result;
}

}  // namespace toolport::schema::detail
