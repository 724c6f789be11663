// Adding an entry to a YAML file by editing its text, so that everything else in it —
// comments, blank lines, key order, quoting — stays as the user wrote it (a YAML library
// that loads and dumps the file would drop its comments). `toolport registry add` writes an
// upstream into the configuration this way.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace toolport::document {

struct YamlEditError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// `text` with `name:` and `body` (its lines, indented relative to it; comments allowed)
// added as the last entry of the top-level mapping `section` (made at the end of the file
// when missing; `section: {}` becomes a block). The result is parsed again and must hold
// exactly `expected` at section/name, else YamlEditError. Also YamlEditError when the file
// is not a mapping, `section` is not a block mapping, or it has an entry `name` already.
std::string insert_mapping_entry(const std::string& text, const std::string& section, const std::string& name,
                                 const std::vector<std::string>& body, const Json& expected);

}  // namespace toolport::document
