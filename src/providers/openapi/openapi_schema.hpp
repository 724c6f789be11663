// OpenAPI Schema Objects as the JSON Schema (2020-12, MCP's dialect) a tool declares.
//
// 3.1 schemas are JSON Schema already and pass through. 3.0 schemas are a dialect of
// draft 4: `nullable: true` becomes a type array with "null" (or an anyOf with
// {"type": "null"} when the schema names no type), and the boolean exclusiveMinimum /
// exclusiveMaximum become the numeric form. In both, the OpenAPI-only keywords that mean
// nothing to a validator (discriminator, xml, externalDocs, x-*) are dropped and
// `example` becomes `examples: [..]`. `$schema` and `$id` are dropped: the refs are
// resolved already, and a tool's schemas are read in MCP's dialect.
#pragma once

#include "util/json.hpp"

namespace toolport::openapi {

// `schema` with its `$ref`s already resolved (DocumentSet::resolve).
Json to_json_schema(const Json& schema, bool openapi_30);

// A schema as one direction of the exchange sees it: in a request, properties marked
// `readOnly` (ids the server assigns) are not required and, at the top of an object,
// left out; in a response, `writeOnly` ones (passwords) likewise. Applies through
// properties, items and allOf/anyOf/oneOf.
enum class Direction { request, response };
Json for_direction(const Json& schema, Direction direction);

// MCP requires a tool's inputSchema and outputSchema to be `type: object`.
bool is_object_schema(const Json& schema);

}  // namespace toolport::openapi
