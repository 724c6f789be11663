// YAML and JSON files as JSON values, plus the line every value was written on, so that a
// reader can check a file as plain JSON and still name the line of a bad key: the spec
// runner's spec and schema files (src/spec), OpenAPI documents (src/providers/openapi).
//
// ## How YAML scalars are read: one rule
//
// YAML 1.2's core schema, as the `yaml` package of JavaScript tools (mcp-server-kit) reads
// it. A plain (unquoted) scalar is typed by its spelling, and by nothing else:
//
//   null     (empty), ~, null, Null, NULL
//   boolean  true, True, TRUE, false, False, FALSE
//   integer  [-+]?[0-9]+ in decimal (0123 is 123, not octal), 0o17 octal, 0x1F hex;
//            beyond 64 bits a decimal is a floating-point number (as JavaScript reads it),
//            an octal or hex one is refused
//   float    [-+]?(.[0-9]+ | [0-9]+(.[0-9]*)?)([eE][-+]?[0-9]+)?: 1.5, .5, 1., 1e3;
//            one too large for a double (1e999) is refused, and so are .inf and .nan
//            (JSON has neither)
//   string   everything else: yes, no, on, off, y, n (YAML 1.1 booleans, strings in 1.2),
//            3.0.3, 1_000, 0b101, 2024-01-01 (no timestamps), ${NAME}
//
// Quoted scalars ('...', "..."), block scalars (| and >) and !!str are strings whatever
// they spell. The tags !!int, !!float, !!bool and !!null are checked against the rule
// (!!float turns an integer into a float); any other tag is refused. A plain scalar typed
// as a boolean or a number keeps its spelling (Document::spelling): a reader that wants
// text there (an identifier written 0123, a version 1.10) takes what was written, not
// "123". Mapping keys are strings as written (`1:`, `yes:`), except that a key spelled null
// (~, null) is refused. Nothing is expanded here: ${NAME} stays as written, for the reader
// to expand.
//
// Besides the rule: one document per file (--- between two is an error), mapping keys are
// scalars and appear once, aliases expand to at most 100,000 values, values nest at most
// kMaxDocumentDepth deep, and a UTF-8 byte order mark is skipped. JSON is read strictly
// (no comments, no trailing commas), duplicate keys refused.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "util/json.hpp"

namespace YAML {
class Node;
}

namespace toolport::document {

struct Document {
    Json value;
    // JSON Pointer of a value -> its 1-based line. A mapping member is at the line of its key.
    std::map<std::string, int> lines;
    // JSON Pointer -> the text of a plain YAML scalar that the rule typed as a boolean or a
    // number ("0123", "1.10", "True"). Strings are not repeated; JSON files have none.
    std::map<std::string, std::string> spellings;

    // The line of `pointer`, or of its nearest ancestor that has one; 0 when none is known.
    int line_of(const std::string& pointer) const;
    // What the boolean or number at `pointer` spelled in YAML; nullopt for any other value.
    std::optional<std::string> spelling(const std::string& pointer) const;
};

// A file that is not well-formed. `line` is 1-based, 0 when unknown; what() has no file name.
class DocumentError : public std::runtime_error {
public:
    DocumentError(int line, const std::string& message) : std::runtime_error(message), line_(line) {}
    int line() const { return line_; }

private:
    int line_;
};

// Largest file read (read_text_file), and deepest nesting accepted.
inline constexpr std::size_t kMaxDocumentBytes = 4 * 1024 * 1024;
inline constexpr int kMaxDocumentDepth = 256;

// YAML under the rule above. Throws DocumentError.
Document parse_yaml(const std::string& text);
// The two halves of parse_yaml, for a reader that walks the YAML nodes itself too (the
// configuration keeps each key's column): the one document of `text` (nullopt for none;
// throws DocumentError for a syntax error or several documents), and that document under
// the rule above (throws DocumentError). The file is parsed once.
std::optional<YAML::Node> load_yaml(const std::string& text);
Document convert_yaml(const YAML::Node& root);
// Strict JSON; duplicate keys are errors. Throws DocumentError.
Document parse_json(const std::string& text);
// Just the value of a JSON text, with the nesting limit (responses: duplicate keys allowed).
Json parse_json_value(const std::string& text);
// By extension: .json -> parse_json, .yaml / .yml -> parse_yaml, anything else is an error.
Document parse_document(const std::string& text, const std::filesystem::path& file);

// Reads a file of at most kMaxDocumentBytes. Throws DocumentError (line 0) naming what failed.
std::string read_text_file(const std::filesystem::path& file);

// "/a/b~1c" style JSON Pointer building.
std::string pointer_append(const std::string& pointer, const std::string& key);
std::string pointer_append(const std::string& pointer, std::size_t index);

}  // namespace toolport::document
