// The JSONPath subset of mcp-server-kit's json_path assertion, parsed once (the loader
// rejects a malformed path) and evaluated against the response document. Internal to src/spec.
//
//   $              the whole document ("$" may be left out: "a.b" is "$.a.b")
//   .name          a member (on an array, an all-digit name is an index, as in the kit)
//   ['name']       a member whose name has dots, spaces or brackets ("..." quotes work too)
//   [3] / [-1]     an array element, counted from the end when negative (on an object: the
//                  member named "3")
//   [*] / .*       every element of an array (or value of an object); the segments after it
//                  apply to each, and the matches form an array
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace toolport::spec::detail {

class JsonPath {
public:
    // Throws std::invalid_argument saying what is wrong and where.
    explicit JsonPath(const std::string& text);

    // The value at the path; nullopt when the path does not exist. After a wildcard the
    // result is the array of everything matched (possibly empty).
    std::optional<Json> evaluate(const Json& document) const;

    const std::string& text() const { return text_; }

private:
    struct Segment {
        enum class Kind { member, index, wildcard } kind;
        std::string name;       // member
        long long index = 0;    // index
        bool from_dot = false;  // ".0" (member syntax) rather than "[0]"
    };
    std::string text_;
    std::vector<Segment> segments_;
};

}  // namespace toolport::spec::detail
