#include "providers/openapi/openapi_schema.hpp"

#include <algorithm>

namespace toolport::openapi {

namespace {

// Keywords whose value is one schema, a list of schemas, or a map of names to schemas:
// the only places the walk descends, so a property named "nullable" is never taken for
// the keyword.
constexpr const char* kSchemaKeywords[] = {"additionalProperties",
                                           "items",
                                           "not",
                                           "if",
                                           "then",
                                           "else",
                                           "contains",
                                           "propertyNames",
                                           "unevaluatedProperties",
                                           "unevaluatedItems",
                                           "additionalItems"};
constexpr const char* kSchemaListKeywords[] = {"allOf", "anyOf", "oneOf", "prefixItems"};
constexpr const char* kSchemaMapKeywords[] = {"properties", "patternProperties", "$defs", "definitions",
                                              "dependentSchemas"};

bool dropped_keyword(const std::string& key) {
    return key == "discriminator" || key == "xml" || key == "externalDocs" || key == "$schema" || key == "$id" ||
           key.rfind("x-", 0) == 0;
}

void convert_nullable(Json& schema) {
    auto nullable = schema.find("nullable");
    if (nullable == schema.end()) return;
    const bool is_nullable = nullable->is_boolean() && nullable->get<bool>();
    schema.erase(nullable);
    if (!is_nullable) return;
    if (auto e = schema.find("enum");
        e != schema.end() && e->is_array() && std::find(e->begin(), e->end(), Json()) == e->end()) {
        e->push_back(nullptr);
    }
    auto type = schema.find("type");
    if (type != schema.end() && type->is_string()) {
        *type = Json::array({*type, "null"});
    } else if (type != schema.end() && type->is_array()) {
        if (std::find(type->begin(), type->end(), Json("null")) == type->end()) type->push_back("null");
    } else {
        // No type to widen (allOf, oneOf, a bare enum...): null is allowed beside the rest.
        Json inner = std::move(schema);
        schema = {{"anyOf", Json::array({std::move(inner), {{"type", "null"}}})}};
    }
}

// Draft 4: `exclusiveMinimum: true` qualifies `minimum`; 2020-12 gives the bound itself.
void convert_exclusive_bound(Json& schema, const char* exclusive, const char* bound) {
    auto it = schema.find(exclusive);
    if (it == schema.end() || !it->is_boolean()) return;
    const bool on = it->get<bool>();
    schema.erase(it);
    if (on && schema.contains(bound)) {
        schema[exclusive] = schema[bound];
        schema.erase(bound);
    }
}

Json convert(const Json& schema, bool openapi_30) {
    if (!schema.is_object()) return schema;  // true / false schemas
    Json out = Json::object();
    for (const auto& [key, value] : schema.items()) {
        if (dropped_keyword(key)) continue;
        if (key == "example") {
            if (!schema.contains("examples")) out["examples"] = Json::array({value});
            continue;
        }
        out[key] = value;
    }
    for (const char* key : kSchemaKeywords) {
        if (auto it = out.find(key); it != out.end()) {
            if (it->is_object()) *it = convert(*it, openapi_30);
            else if (it->is_array() && std::string_view(key) == "items") {
                for (auto& item : *it) item = convert(item, openapi_30);
            }
        }
    }
    for (const char* key : kSchemaListKeywords) {
        if (auto it = out.find(key); it != out.end() && it->is_array()) {
            for (auto& item : *it) item = convert(item, openapi_30);
        }
    }
    for (const char* key : kSchemaMapKeywords) {
        if (auto it = out.find(key); it != out.end() && it->is_object()) {
            for (auto& [name, item] : it->items()) item = convert(item, openapi_30);
        }
    }
    if (openapi_30) {
        convert_exclusive_bound(out, "exclusiveMinimum", "minimum");
        convert_exclusive_bound(out, "exclusiveMaximum", "maximum");
        convert_nullable(out);
    }
    return out;
}

Json directed(const Json& schema, const char* hidden) {
    if (!schema.is_object()) return schema;
    Json out = schema;
    if (auto props = out.find("properties"); props != out.end() && props->is_object()) {
        Json kept = Json::object();
        std::vector<std::string> dropped;
        for (const auto& [name, property] : props->items()) {
            if (property.is_object() && property.value(hidden, false) == true) dropped.push_back(name);
            else kept[name] = directed(property, hidden);
        }
        *props = std::move(kept);
        if (auto required = out.find("required"); required != out.end() && required->is_array()) {
            Json still = Json::array();
            for (const auto& r : *required) {
                if (!r.is_string() || std::find(dropped.begin(), dropped.end(), r.get<std::string>()) == dropped.end()) {
                    still.push_back(r);
                }
            }
            *required = std::move(still);
        }
    }
    if (auto items = out.find("items"); items != out.end() && items->is_object()) *items = directed(*items, hidden);
    for (const char* key : {"allOf", "anyOf", "oneOf"}) {
        if (auto it = out.find(key); it != out.end() && it->is_array()) {
            for (auto& branch : *it) branch = directed(branch, hidden);
        }
    }
    return out;
}

}  // namespace

Json for_direction(const Json& schema, Direction direction) {
    return directed(schema, direction == Direction::request ? "readOnly" : "writeOnly");
}

Json to_json_schema(const Json& schema, bool openapi_30) { return convert(schema, openapi_30); }

bool is_object_schema(const Json& schema) {
    return schema.is_object() && schema.contains("type") && schema["type"] == "object";
}

}  // namespace toolport::openapi
