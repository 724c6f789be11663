// fuzz_uri_template: RFC 6570 resource templates (which upstream servers declare) and the URIs
// clients ask to read through them (server/uri_template.hpp). The input is a template, a
// newline, and a URI; an input without a newline is matched against itself. Properties, not
// only crashes:
//   - match() never throws; what it returns is an object of strings and arrays of strings that
//     serialises (valid UTF-8), and every value keeps a {var:n} limit of its name;
//   - a malformed template matches nothing;
//   - the variables matched, expanded again, give a URI the template matches too, when each
//     name is in the template once (a name with two modifiers, "{?v:1,v}", may expand to what
//     reads back otherwise) and the search does not stop at its work cap (a long URI of a
//     template of adjacent expressions);
//   - the work stays bounded on any URI (libFuzzer's -timeout reports a blow-up).
// A violated property aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "server/uri_template.hpp"
#include "util/json.hpp"

namespace {

using toolport::Json;
using toolport::UriTemplate;

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

bool names_unique(const UriTemplate& t) {
    std::set<std::string> seen;
    for (const auto& part : t.parts()) {
        for (const auto& spec : part.vars) {
            if (!seen.insert(spec.name).second) return false;
        }
    }
    return true;
}

std::size_t code_points(const std::string& s) {
    std::size_t n = 0;
    for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    return n;
}

void check_shape(const UriTemplate& t, const Json& vars) {
    if (!vars.is_object()) violated("match: not an object");
    (void)vars.dump();  // throws (and so fails the run) on invalid UTF-8
    for (const auto& part : t.parts()) {
        for (const auto& spec : part.vars) {
            auto it = vars.find(spec.name);
            if (it == vars.end()) continue;
            if (it->is_array()) {
                for (const auto& item : *it) {
                    if (!item.is_string()) violated("match: a list item that is not a string");
                }
            } else if (!it->is_string()) {
                violated("match: a value that is neither a string nor a list");
            }
        }
    }
    // A name may be in several expressions, some of them absent from the URI: its value
    // keeps the limit of one of them at least.
    for (const auto& [name, value] : vars.items()) {
        if (!value.is_string()) continue;  // a list has no prefix
        bool fits_one = false;
        for (const auto& part : t.parts()) {
            for (const auto& spec : part.vars) {
                if (spec.name == name &&
                    (spec.max_length == 0 || code_points(value.get<std::string>()) <= spec.max_length)) {
                    fits_one = true;
                }
            }
        }
        if (!fits_one) violated("match: a value longer than its {var:n}");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto newline = input.find('\n');
    const std::string pattern(input.substr(0, newline));
    const std::string_view uri = newline == std::string_view::npos ? input : input.substr(newline + 1);

    const UriTemplate t(pattern);
    const auto vars = t.match(uri);
    if (!vars) return 0;
    if (!t.valid()) violated("a malformed template matched");
    check_shape(t, *vars);
    if (!names_unique(t)) return 0;
    const std::string again = t.expand(*vars);
    bool gave_up = false;
    if (!t.match(again, &gave_up) && !gave_up) {
        std::fprintf(stderr, "template %s\nuri %.*s\nvariables %s\nexpanded %s\n", pattern.c_str(),
                     static_cast<int>(uri.size()), uri.data(), vars->dump().c_str(), again.c_str());
        violated("the matched variables, expanded, do not match");
    }
    return 0;
}
