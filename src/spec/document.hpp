// Spec files (YAML or JSON) as JSON values, plus the line every value was written on, so that
// the loader can check a spec as plain JSON and still name the line of a bad key. Internal to
// src/spec.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace toolport::spec::detail {

using Json = nlohmann::json;

struct Document {
    Json value;
    // JSON Pointer of a value -> its 1-based line. A mapping member is at the line of its key.
    std::map<std::string, int> lines;

    // The line of `pointer`, or of its nearest ancestor that has one; 0 when none is known.
    int line_of(const std::string& pointer) const;
};

// A file that is not well-formed. `line` is 1-based, 0 when unknown; what() has no file name.
class DocumentError : public std::runtime_error {
public:
    DocumentError(int line, const std::string& message) : std::runtime_error(message), line_(line) {}
    int line() const { return line_; }

private:
    int line_;
};

// Largest spec (or schema) file read, and deepest nesting accepted.
inline constexpr std::size_t kMaxDocumentBytes = 4 * 1024 * 1024;
inline constexpr int kMaxDocumentDepth = 256;

// YAML 1.2 (core schema, as the `yaml` package mcp-server-kit uses reads it): plain scalars
// become null, booleans, integers and floats by their spelling; quoted ones stay strings;
// `yes`/`on` are strings. One document per file; duplicate keys are errors.
Document parse_yaml(const std::string& text);
// Strict JSON; duplicate keys are errors.
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

}  // namespace toolport::spec::detail
