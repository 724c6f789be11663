// RFC 6570 URI templates (levels 1 to 4), above all read backwards: whether a concrete URI is
// an expansion of a template, and with which variable values. resources/read names a URI;
// the registry finds the resource template it belongs to (ResourceTemplateSpec::match), and
// the gateway which upstream template an upstream's notifications/resources/updated concerns.
//
// Expansion loses information (an undefined variable leaves no trace, a list and a string
// may expand alike), so matching makes choices, kept predictable:
//   - A value never holds what delimits the URI part its operator writes into, characters
//     that expansion would have percent-encoded: a simple {var}, {.label} or {;param} value
//     no '/', '?' or '#'; a {/segment} value no '?' or '#'; a {?query}/{&query} value no
//     '#'. {+var} and {#var} values may hold anything.
//   - Where a value could end at several places, the shortest one that lets the rest of the
//     template match wins ("x://{a}.{b}" on x://1.2.3 gives a=1, b=2.3).
//   - Simple {var} and {+var} expressions match at least one character (an empty one could
//     be put anywhere, and a variable has always been non-empty here); the others, which
//     begin with their operator's character, may be absent, leaving their variables undefined.
//   - Values are strings; an exploded variable {list*} is an array of its items. A list that
//     is not exploded ({list} on "a,b") stays the one string "a,b". Exploded associative
//     arrays cannot be told from lists: their items come back as "key=value" strings (in
//     {?keys*} they are parameters the template does not name).
//   - {var:n} matches values of at most n characters (code points, after decoding).
//   - {?q,limit} and {&q}: parameters may come in any order, any may be missing, and ones the
//     template does not name are ignored. A client reads URIs it built from the template, and
//     web servers ignore query parameters they do not know (tracking, cache-busting), so
//     refusing them would make a URI the upstream itself serves unreadable through the
//     gateway. A variable that is not exploded given twice with two values refuses the
//     match. {;param}s match by name too, but an unknown one refuses: path parameters are
//     part of what is named.
//   - Values are percent-decoded (decode_value in the .cpp says what {+var} and {#var} keep).
//
// Matching is bounded: its work is capped in proportion to the URI's length (URIs come from
// clients), and a URI that would need more, which takes a contrived template (adjacent
// expressions that could each end anywhere) and a long URI, does not match. A malformed
// template (an unterminated '{', a stray '}', an empty expression, an operator RFC 6570
// reserves, a bad prefix, a variable name with URI punctuation, more than kMaxExpressions
// expressions) never throws: valid() is false and it matches nothing.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace toolport {

class UriTemplate {
public:
    // Real templates have a handful of expressions; the matcher recurses once per part.
    static constexpr std::size_t kMaxExpressions = 128;

    enum class Op : char {
        literal = 0,  // not an expression: text to match as it is
        simple = 's',
        reserved = '+',
        fragment = '#',
        label = '.',
        segment = '/',
        parameter = ';',
        query = '?',
        continuation = '&',
    };
    struct VarSpec {
        std::string name;
        bool explode = false;
        std::size_t max_length = 0;  // {var:n}; 0: none
    };
    // Literal text, or one expression. Consecutive {?..}{&..} expressions are one part, so
    // that their parameters may come in any order.
    struct Part {
        Op op = Op::literal;
        std::string literal;
        std::vector<VarSpec> vars;
    };

    explicit UriTemplate(std::string pattern);

    const std::string& pattern() const { return pattern_; }
    bool valid() const { return valid_; }
    const std::vector<Part>& parts() const { return parts_; }

    // The variables `uri` gives the template's expressions, as a JSON object holding those the
    // URI defines; nullopt when `uri` is not an expansion of the template. `gave_up`, when
    // given, tells whether the search stopped at its work cap (then nullopt does not prove
    // that no way to read `uri` exists).
    std::optional<Json> match(std::string_view uri, bool* gave_up = nullptr) const;
    // RFC 6570 expansion (strings, numbers and booleans; arrays as lists; objects as
    // associative arrays; null or a missing name is undefined). "" for a malformed template.
    std::string expand(const Json& variables) const;

private:
    bool parse();

    std::string pattern_;
    std::vector<Part> parts_;
    bool valid_ = false;
};

}  // namespace toolport
