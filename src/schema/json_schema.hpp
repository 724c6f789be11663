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
//
// Semantics worth knowing:
//  - "pattern" / "patternProperties" are ECMA-262 regular expressions matched over Unicode
//    code points (\d and \w are ASCII, \s is Unicode whitespace, \p{L} etc. are supported).
//    Matching takes time linear in the input (no catastrophic backtracking), except for
//    patterns with back-references, whose input is limited to 2000 characters. Lookbehind
//    and named back-references are rejected at compile time (SchemaError), and so are
//    patterns beyond the engine's safety limits (1000 characters, groups nested 32 deep,
//    256 alternatives, quantifier bounds above 10000).
//  - minLength/maxLength count code points; numbers compare by value (1 == 1.0).
//  - In 2020-12 schemas (MCP's default dialect, so also every schema sent without
//    "$schema"), the draft-07 forms MCP servers still use keep their draft-07 meaning:
//    array-form "items" (+ "additionalItems") and "dependencies". "definitions" works as a
//    $ref target in both dialects.
//  - Schemas nesting more than 512 subschemas, or JSON more than 2048 levels deep, are
//    refused (SchemaError) rather than risking the stack.

#include <cstddef>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/json.hpp"

namespace toolport::schema {

enum class Dialect {
    draft7,        // http://json-schema.org/draft-07/schema#
    draft2020_12,  // https://json-schema.org/draft/2020-12/schema (MCP's default)
};

struct Options {
    // Dialect of a schema document that has no "$schema" keyword. Documents that do have one
    // use it (per embedded resource); referenced documents without one inherit the dialect of
    // the schema being compiled.
    Dialect default_dialect = Dialect::draft2020_12;

    // Known documents, by absolute URI (a trailing empty fragment "#" is ignored); each is also
    // known by the "$id" at its root. Absolute $refs (and "$schema" URIs of custom
    // meta-schemas) are resolved against these, then against the built-in meta-schemas.
    // Nothing is ever fetched: a $ref to any other document is a SchemaError.
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

    // Maximum nesting depth of the instance (the root is at depth 0). When a schema descends
    // into a value nested deeper, validation fails with an error whose keyword is "$maxDepth"
    // instead of exhausting the stack. Evaluation that recurses without descending into the
    // instance (e.g. a "$ref" cycle) is capped at 8 * max_depth nested schemas, also reported
    // as a "$maxDepth" error.
    std::size_t max_depth = 128;
};

// Thrown by compile() for a schema that cannot be compiled: a keyword with an invalid value,
// an invalid or unsupported regular expression, an unsupported "$schema", or a "$ref" that
// does not resolve (including any remote document not present in Options::documents).
class SchemaError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One failed assertion. Keywords that only combine subschemas (properties, items, allOf,
// $ref, then/else, ...) report the failures inside them rather than an error of their own;
// keywords whose subschemas may fail without that being an error (anyOf, oneOf, not,
// contains, propertyNames) report one error for themselves.
struct ValidationError {
    std::string instance_location;  // JSON Pointer into the instance, "" for the root
    std::string keyword_location;   // evaluation path through the schema, e.g. "/properties/a/$ref/type"
    std::string keyword;            // "type", "required", ...; "false" for a false schema;
                                    // "$maxDepth" for the depth limits of Options::max_depth
    std::string message;            // human readable, e.g. "expected string, got number"
    Json expected;                  // the constraint's value: "string" (or ["string","null"]) for type,
                                    // the enum list, the const value, the pattern, the limit of
                                    // minimum/maxLength/..., the missing property's name for
                                    // required/dependentRequired, the allowed property names for
                                    // additionalProperties: false; null where there is none (anyOf...)
    Json actual;                    // the value at instance_location (for propertyNames: the name);
                                    // a placeholder string if it is nested too deeply to copy
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
