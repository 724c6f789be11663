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

#include "schema/regex.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string>

namespace toolport::schema::detail {

static_assert(sizeof(wchar_t) == 4, "the pattern matcher needs 32-bit wchar_t to hold code points");

GeneralCategory general_category(char32_t c) {
  const UnicodeRange* begin = kUnicodeCategoryRanges;
  const UnicodeRange* end = kUnicodeCategoryRanges + kUnicodeCategoryRangeCount;
  const UnicodeRange* it =
      std::upper_bound(begin, end, c, [](char32_t v, const UnicodeRange& r) { return v < r.first; });
  if (it == begin) return kCn;
  --it;
  return c <= it->last ? static_cast<GeneralCategory>(it->category) : kCn;
}

namespace {

// Decodes UTF-8; malformed sequences become U+FFFD (instances built in code, rather than
// parsed, may hold arbitrary bytes).
template <typename Sink>
void decode_utf8(std::string_view s, Sink&& sink) {
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      sink(static_cast<char32_t>(b0));
      ++i;
      continue;
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
    bool ok = len > 0 && i + static_cast<std::size_t>(len) <= n;
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
      sink(static_cast<char32_t>(0xFFFD));
      ++i;
      continue;
    }
    sink(cp);
    i += static_cast<std::size_t>(len);
  }
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
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0xA0: case 0x1680:
    case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000: case 0xFEFF:
      return true;
    default:
      return c >= 0x2000 && c <= 0x200A;
  }
}

bool is_ascii_word(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
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

  bool isctype(wchar_t wc, char_class_type mask) const {
    auto c = static_cast<char32_t>(wc);
    if ((mask & kClassDigit) && c >= '0' && c <= '9') return true;
    if ((mask & kClassWord) && is_ascii_word(c)) return true;
    if ((mask & kClassSpace) && is_ecma_space(c)) return true;
    std::uint64_t categories = mask >> kCategoryShift;
    if (categories != 0 && ((categories >> general_category(c)) & 1)) return true;
    return false;
  }
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
  explicit PatternTranslator(std::string_view pattern) {
    decode_utf8(pattern, [this](char32_t c) { in_.push_back(c); });
  }

  Translated run() {
    Translated t;
    bool in_class = false;
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
      switch (c) {
        case '\\':
          escape(false, t);
          break;
        case '.':
          out_ += L"[^\n\r\u2028\u2029]";
          break;
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
          out_ += L'(';
          if (peek() == '?' && peek(1) == '<') {
            if (peek(2) == '=' || peek(2) == '!') {
              throw std::invalid_argument("lookbehind assertions are not supported");
            }
            // Named group: keep the group, drop the name (nothing refers to it by name
            // unless \k<name> is used, which is rejected below).
            pos_ += 2;
            while (pos_ < in_.size() && in_[pos_] != '>') ++pos_;
            if (pos_ >= in_.size()) throw std::invalid_argument("unterminated group name");
            ++pos_;
          }
          break;
        default:
          out_ += static_cast<wchar_t>(c);
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
  static unsigned hex_value(char32_t c) {
    return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
  }

  void literal(char32_t c) {
    static const std::u32string_view special = U"^$\\.*+?()[]{}|/-";
    if (special.find(c) != std::u32string_view::npos) out_ += L'\\';
    out_ += static_cast<wchar_t>(c);
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
      case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
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
      case 'p': case 'P': {
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
      case 'u':
        literal(read_unicode_escape());
        return;
      case 'x':
        literal(read_hex(2));
        return;
      case 't': literal('\t'); return;
      case 'n': literal('\n'); return;
      case 'v': literal('\v'); return;
      case 'f': literal('\f'); return;
      case 'r': literal('\r'); return;
      case '0':
        if (peek() >= '0' && peek() <= '9') throw std::invalid_argument("invalid octal escape");
        literal(0);
        return;
      case 'k':
        throw std::invalid_argument("named back-references (\\k<name>) are not supported");
      default:
        break;
    }
    if (c >= '1' && c <= '9') {
      if (in_class) throw std::invalid_argument("back-reference inside a character class");
      t.has_backreference = true;
      out_ += L'\\';
      out_ += static_cast<wchar_t>(c);
      while (peek() >= '0' && peek() <= '9') out_ += static_cast<wchar_t>(in_[pos_++]);
      return;
    }
    literal(c);  // identity escape: \. \/ \- \$ ...
  }

  std::u32string in_;
  std::size_t pos_ = 0;
  std::wstring out_;
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
  bool backtracking = false;
  std::string source;
};

Regex::Regex(std::string_view pattern) {
  auto impl = std::make_shared<Impl>();
  impl->source = std::string(pattern);
  Translated t = PatternTranslator(pattern).run();
  impl->backtracking = t.has_backreference;
  auto flags = std::regex_constants::ECMAScript;
  if (!t.has_backreference) flags |= std::regex_constants::__polynomial;
  try {
    impl->re.assign(t.pattern, flags);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument(e.what());
  }
  impl_ = std::move(impl);
}

const std::string& Regex::source() const { return impl_->source; }

Regex::Match Regex::search(std::string_view utf8) const {
  // Reused per thread so that matching allocates nothing for the decoded text once warm.
  thread_local std::wstring text;
  text.clear();
  decode_utf8(utf8, [](char32_t c) { text.push_back(static_cast<wchar_t>(c)); });
  if (impl_->backtracking && text.size() > kMaxBacktrackingInput) return Match::too_long;
  return std::regex_search(text.cbegin(), text.cend(), impl_->re) ? Match::yes : Match::no;
}

}  // namespace toolport::schema::detail
