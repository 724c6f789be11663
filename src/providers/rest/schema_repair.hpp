// Repairing the input schemas REST catalogs send. AgentPMT's, for one, are not standard
// JSON Schema: a property says "required": true instead of being listed in its object's
// `required`, and defaults have the wrong type ("3600" for an integer) or lie outside the
// enum. The Go server that first served this catalog crashed on them at start-up
// (shared/reference/rest-catalog-and-budget.md 1.2, 1.6). Here each such schema is
// repaired, every repair named (the source warns once per repair), and a schema that
// cannot mean "an object of arguments" drops its tool, never the server.
#pragma once

#include <string>
#include <vector>

#include "util/json.hpp"

namespace toolport::rest {

struct SchemaRepair {
    Json schema;                       // what the tool declares (valid when `unrepairable` is empty)
    std::vector<std::string> repairs;  // "properties.ttl.default: \"3600\" → 3600 (the type is integer)"
    std::string unrepairable;          // why the tool cannot be offered, or ""
};

// Repairs `schema` (the catalog's parameters). Null or absent means no arguments.
SchemaRepair repair_input_schema(Json schema);

}  // namespace toolport::rest
