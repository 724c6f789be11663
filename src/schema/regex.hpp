#pragma once
// ECMA-262 regular expressions for "pattern" and "patternProperties". Internal to src/schema.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace toolport::schema::detail {

// Unicode General_Category values, in the order the generated table uses.
enum GeneralCategory : std::uint8_t {
    kLu,
    kLl,
    kLt,
    kLm,
    kLo,
    kMn,
    kMc,
    kMe,
    kNd,
    kNl,
    kNo,
    kPc,
    kPd,
    kPs,
    kPe,
    kPi,
    kPf,
    kPo,
    kSm,
    kSc,
    kSk,
    kSo,
    kZs,
    kZl,
    kZp,
    kCc,
    kCf,
    kCs,
    kCo,
    kCn,
    kCategoryCount
};

struct UnicodeRange {
    char32_t first;
    char32_t last;
    std::uint8_t category;
};
// Sorted, non-overlapping; code points not covered are Cn (unassigned). See unicode_tables.cpp.
extern const UnicodeRange kUnicodeCategoryRanges[];
extern const std::size_t kUnicodeCategoryRangeCount;

GeneralCategory general_category(char32_t c);

// Number of Unicode code points in a UTF-8 string (what minLength/maxLength count).
std::size_t count_code_points(std::string_view utf8);

// A compiled ECMA-262 pattern, matched with "search" semantics (unanchored, as JSON Schema
// specifies) over code points, not bytes. Immutable; search() is thread-safe.
class Regex {
public:
    // Throws std::invalid_argument (with the reason) for an invalid or unsupported pattern.
    explicit Regex(std::string_view pattern);

    enum class Match { yes, no, too_long };
    // too_long: the pattern needs the backtracking matcher (it has back-references) and the
    // input is longer than that matcher can take without risking the stack.
    Match search(std::string_view utf8) const;

    const std::string& source() const;

    // Whether `pattern` is a valid ECMA-262 regular expression (u flag), including syntax the
    // matcher does not support (lookbehind, named back-references). Stricter than the
    // constructor, which accepts identity escapes of letters (\a as "a") for compatibility
    // with patterns written for other regex engines.
    static bool is_valid_syntax(std::string_view pattern);

    // Longest input (in code points) matched with the backtracking matcher.
    static constexpr std::size_t kMaxBacktrackingInput = 2000;

private:
    struct Impl;
    std::shared_ptr<const Impl> impl_;
};

}  // namespace toolport::schema::detail
