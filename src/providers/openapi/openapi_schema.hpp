// OpenAPI Schema Objects as the JSON Schema (2020-12, MCP's dialect) a tool declares.
//
// 3.1 schemas are JSON Schema already and pass through. 3.0 schemas are a dialect of
// draft 4: `nullable: true` becomes a type array with "null" (or an anyOf with
// {"type": "null"} when the schema names no type), and the boolean exclusiveMinimum /
// exclusiveMaximum become the numeric form. In both, the OpenAPI-only keywords that mean
// nothing to a validator (discriminator, xml, externalDocs, x-*) are dropped and
// `example` becomes `examples: [..]`.
#pragma once

#include <nlohmann/json.hpp>

namespace toolport::openapi {

using Json = nlohmann::json;

// `schema` with its `$ref`s already resolved (DocumentSet::resolve).
Json to_json_schema(const Json& schema, bool openapi_30);

// MCP requires a tool's inputSchema and outputSchema to be `type: object`.
bool is_object_schema(const Json& schema);

}  // namespace toolport::openapi
