// The operations of an OpenAPI document as tool definitions: what each tool is called,
// the one inputSchema its arguments are checked against, and everything the request
// builder needs to turn those arguments back into the HTTP request the operation
// describes.
//
// Rules:
//  - Name: operationId, else method + path ("get_pets_petId"); every character outside
//    [A-Za-z0-9_-] becomes '_' (runs collapsed, none at the ends); the source's tool_prefix
//    in front; longer than 64 characters: cut and ended with '_' + 8 hex digits of a hash
//    of the whole name, so two long names stay apart. Names taken by an earlier operation
//    (document order) get _2, _3, ... (still within 64).
//  - inputSchema: an object of the path, query, header and cookie parameters (a name used
//    in two places is `<name>_<in>` for the later one), plus the JSON request body: its
//    properties at the top level when the body is an object schema with properties, no
//    composition (allOf/anyOf/oneOf), no declared additionalProperties and no property
//    named like a parameter; otherwise the whole body as one `body` property. Flattening
//    is what models fill in best; the `body` fallback keeps every other shape exact.
//    Required: the required parameters, plus the body's required properties (merged) or
//    `body` (nested) when the request body is required. Unknown arguments are refused.
//  - outputSchema: the JSON schema of the first 2xx response (200, 201, ..., then 2XX)
//    when it is an object schema (MCP requires type object); otherwise none.
//  - Hints: readOnly for GET/HEAD, destructive for DELETE, idempotent for GET, HEAD, PUT,
//    DELETE, OPTIONS; openWorld always.
//  - Kept: when no include_* is given or one matches (a tag, or the operationId / derived
//    name), and no exclude_* matches.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "providers/openapi/openapi_document.hpp"
#include "providers/tool_declaration.hpp"

namespace toolport::openapi {

struct Parameter {
    std::string name;      // as the API knows it
    std::string location;  // "path", "query", "header" or "cookie"
    std::string argument;  // the inputSchema property that carries it
    bool required = false;
    // OpenAPI serialization: "simple", "form", "spaceDelimited", "pipeDelimited",
    // "deepObject"; "json" for a parameter described by `content` (sent as JSON text).
    std::string style;
    bool explode = false;
};

enum class BodyLayout { none, merged, nested };

struct RequestBody {
    BodyLayout layout = BodyLayout::none;
    std::string media_type;               // application/json or a +json type
    std::vector<std::string> properties;  // merged: the arguments that make up the body
    std::string argument;                 // nested: the argument that is the body
    bool required = false;                // requestBody.required
};

struct Operation {
    std::string tool_name;
    std::string operation_id;  // empty when the document gives none
    std::string method;        // upper-case
    std::string path;          // the template, e.g. "/pets/{petId}"
    std::vector<std::string> tags;
    std::string title;  // the summary
    std::string description;
    std::vector<Parameter> parameters;
    RequestBody body;
    // Alternatives, in order; each the security schemes sent together. An empty
    // alternative means the operation may be called without credentials.
    std::vector<std::vector<std::string>> security;
    Json input_schema;
    Json output_schema;        // null: none
    bool expects_json = true;  // a 2xx response is declared as JSON (or nothing is declared)
    providers::ToolAnnotations annotations;
};

struct OperationFilter {
    std::vector<std::string> include_tags;
    std::vector<std::string> exclude_tags;
    std::vector<std::string> include_operations;  // operationIds (or derived names)
    std::vector<std::string> exclude_operations;

    // `names`: the operationId and the derived name (either may match); `tags`: its tags.
    bool keeps(const std::vector<std::string>& names, const std::vector<std::string>& tags) const;
};

struct OperationList {
    std::vector<Operation> operations;  // in document order
    std::vector<std::string> warnings;  // operations left out, and why
};

// Every operation of `docs` that `filter` keeps. An operation whose refs cannot be
// resolved, or whose required body is not JSON, is left out with a warning.
OperationList read_operations(const DocumentSet& docs, const OperationFilter& filter, const std::string& tool_prefix);

// `raw` with every character outside [A-Za-z0-9_-] as '_', runs of '_' collapsed and none
// at the ends; "operation" when nothing is left.
std::string safe_tool_name(const std::string& raw);
// `name` cut to `max` characters, ending in '_' + 8 hex digits of its hash when cut.
std::string fit_tool_name(const std::string& name, std::size_t max = 64);
// Names for `wanted` (each already safe) in order: fitted to 64 characters, and the later
// of equal names suffixed _2, _3, ...
std::vector<std::string> unique_tool_names(const std::vector<std::string>& wanted);

}  // namespace toolport::openapi
