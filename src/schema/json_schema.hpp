#pragma once
// JSON Schema validation for tool arguments (draft-07 and draft 2020-12).
//
// Usage:
//   auto schema = toolport::schema::compile(tool.input_schema);   // once, may throw SchemaError
//   if (!schema.is_valid(args)) { auto r = schema.validate(args); ... r.errors ... }
//
// A CompiledSchema is immutable: validate() and is_valid() may be called concurrently from
// any number of threads. Compilation resolves every $ref up front, so validation never looks
// anything up by URI and never touches the network; documents that schemas reference by
// absolute URI must be handed over in Options::documents (the draft-07 and 2020-12
// meta-schemas are built in).

#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::schema {

using Json = nlohmann::json;

enum class Dialect {
  draft7,        // http://json-schema.org/draft-07/schema#
  draft2020_12,  // https://json-schema.org/draft/2020-12/schema (MCP's default)
};

struct Options {
  // Dialect of a schema document that has no "$schema" keyword. Documents that do have one
  // use it (per embedded resource); referenced documents without one inherit the dialect of
  // the schema being compiled.
  Dialect default_dialect = Dialect::draft2020_12;

  // Known documents, by absolute URI (a trailing empty fragment "#" is ignored). Absolute
  // $refs (and "$schema" URIs of custom meta-schemas) are resolved against these, then
  // against the built-in meta-schemas. Nothing is ever fetched: a $ref to any other document
  // is a SchemaError.
  std::map<std::string, Json> documents;

  // Base URI of the root schema when it has no "$id" (relative $refs resolve against it).
  std::string base_uri = "urn:toolport:schema";

  // A "$schema" that is neither draft-07, 2020-12 nor a meta-schema in `documents` is a
  // SchemaError by default. Set to false to validate such schemas with default_dialect
  // instead (lenient mode for schemas sent by third-party servers).
  bool reject_unknown_dialect = true;

  // "format" is an annotation by default (as both drafts specify). When true, the formats
  // Toolport knows (date-time, date, time, duration, email, hostname, ipv4, ipv6, uri,
  // uri-reference, uuid, regex, json-pointer, relative-json-pointer) are asserted; unknown
  // formats are still ignored. A meta-schema that requires the 2020-12 format-assertion
  // vocabulary turns this on for the schemas that use it.
  bool assert_format = false;

  // validate() stops after collecting this many errors (ValidationResult::truncated is set).
  std::size_t max_errors = 20;

  // Maximum nesting depth of the instance. Deeper values fail validation with an error whose
  // keyword is "$maxDepth" (instead of exhausting the stack). Evaluation that recurses
  // without descending into the instance (e.g. a "$ref" cycle) is capped at 8 * max_depth
  // nested schemas, also reported as a "$maxDepth" error.
  std::size_t max_depth = 128;
};

// Thrown by compile() for a schema that cannot be compiled: a keyword with an invalid value,
// an invalid or unsupported regular expression, an unsupported "$schema", or a "$ref" that
// does not resolve (including any remote document not present in Options::documents).
class SchemaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ValidationError {
  std::string instance_location;  // JSON Pointer into the instance, "" for the root
  std::string keyword_location;   // evaluation path through the schema, e.g. "/properties/a/$ref/type"
  std::string keyword;            // "type", "required", ...; "false" for a false schema
  std::string message;            // human readable, e.g. "expected string, got number"
  Json expected;                  // the constraint: "string" for type, the enum list, the pattern, ...
  Json actual;                    // the offending value (for "required": the missing property name's
                                  // object; for "additionalProperties": the extra property's value)
};

struct ValidationResult {
  bool valid = true;
  bool truncated = false;  // more errors exist than Options::max_errors allowed to collect
  std::vector<ValidationError> errors;

  explicit operator bool() const { return valid; }
};

namespace detail {
struct Program;
}

class CompiledSchema {
 public:
  CompiledSchema() = default;  // an empty schema: accepts everything

  // Validates and collects up to Options::max_errors errors.
  ValidationResult validate(const Json& instance) const;
  // Validity only: stops at the first failure and builds no error messages.
  bool is_valid(const Json& instance) const;

  Dialect dialect() const;  // dialect of the root schema

 private:
  friend CompiledSchema compile(const Json& schema, Options options);
  explicit CompiledSchema(std::shared_ptr<const detail::Program> program) : program_(std::move(program)) {}
  std::shared_ptr<const detail::Program> program_;
};

// Compiles `schema` (an object or a boolean). Throws SchemaError.
CompiledSchema compile(const Json& schema, Options options = {});

}  // namespace toolport::schema
