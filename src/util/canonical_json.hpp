// RFC 8785 JSON Canonicalization Scheme (JCS): one text for every JSON value however it
// was written (key order, number spelling, escapes), so a digest of it names the value.
//
//   canonical_json(Json::parse(R"({"b":1,"a":[1.0,"\u00e9"]})"))  ->  {"a":[1,"é"],"b":1}
//
// The rules (RFC 8785 §3.2): no whitespace; object members sorted by their names compared
// as UTF-16 code units (so U+1F600, a surrogate pair, sorts before U+E000); numbers in
// ECMAScript's Number.prototype.toString form (the shortest digits that round-trip, 1e21
// and up and below 1e-6 in exponent form, -0 as 0); strings with only `"`, `\` and the
// control characters escaped (\b \f \n \r \t by name, the others as \u00xx lower-case).
// Integers beyond ±2^53 are written as the nearest double, as JavaScript would read them.
#pragma once

#include <stdexcept>
#include <string>

#include "util/json.hpp"

namespace toolport::util {

// A value JCS cannot represent (NaN or an infinity: nlohmann keeps them, JSON has none).
struct CanonicalJsonError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// The canonical text. With `indent` >= 0 the same order and spellings, laid out one member
// a line (for people and diffs; not canonical, but as stable).
std::string canonical_json(const Json& value, int indent = -1);

// ECMAScript's Number::toString(value) (RFC 8785 §3.2.2.3); throws CanonicalJsonError for
// NaN and infinities.
std::string ecmascript_number(double value);

// Whether `a` sorts before `b` when both are compared as UTF-16 code units.
bool utf16_less(const std::string& a, const std::string& b);

}  // namespace toolport::util
