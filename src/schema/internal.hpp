#pragma once
// The compiled form of a schema, shared by compile.cpp (which builds it) and validate.cpp
// (which runs it). Internal to src/schema.
//
// Compilation turns every schema object of the documents involved into one Node, resolves
// every $ref / $dynamicRef to a Node pointer (cycles are just pointer cycles), parses keyword
// values once (numbers, lengths, regexes, property tables) and rejects invalid schemas with a
// SchemaError. Validation then only walks Nodes: no URI handling, no map lookups by string
// other than the instance's own property names.

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schema/json_schema.hpp"
#include "schema/regex.hpp"

namespace toolport::schema::detail {

struct BuiltinDocument {
    std::string uri;  // absolute, without fragment
    Json document;
};
// The draft-07 and 2020-12 meta-schemas (metaschemas.cpp).
const std::vector<BuiltinDocument>& builtin_documents();

// 2020-12 vocabularies a dialect enables (draft-07 predates vocabularies: everything is on).
enum Vocabulary : std::uint16_t {
    kVocabCore = 1 << 0,
    kVocabApplicator = 1 << 1,
    kVocabUnevaluated = 1 << 2,
    kVocabValidation = 1 << 3,
    kVocabMetaData = 1 << 4,
    kVocabFormatAnnotation = 1 << 5,
    kVocabFormatAssertion = 1 << 6,
    kVocabContent = 1 << 7,
};

enum TypeMask : std::uint8_t {
    kTypeNull = 1 << 0,
    kTypeBoolean = 1 << 1,
    kTypeObject = 1 << 2,
    kTypeArray = 1 << 3,
    kTypeNumber = 1 << 4,
    kTypeString = 1 << 5,
    kTypeInteger = 1 << 6,
};

// A JSON number as nlohmann stores it, compared exactly across representations.
struct Number {
    enum Kind : std::uint8_t { kInt, kUInt, kFloat } kind = kInt;
    std::int64_t i = 0;
    std::uint64_t u = 0;
    double d = 0;

    static Number of(const Json& j);  // j must be a number
    double as_double() const;
    std::string to_string() const;
};
int compare_numbers(const Number& a, const Number& b);  // <0, 0, >0
bool is_multiple_of(const Number& value, const Number& divisor);

// Deep equality as JSON Schema defines it (1 == 1.0; objects unordered).
bool json_equal(const Json& a, const Json& b);
// A total order consistent with json_equal, used to find duplicates in large arrays.
int json_compare(const Json& a, const Json& b);
bool is_integral(const Json& j);  // an integer, or a float with no fractional part
// True if `v` has arrays/objects nested more than `limit` levels deep. Iterative.
bool nesting_exceeds(const Json& v, std::size_t limit);

enum class Format : std::uint8_t {
    none,  // not asserted (annotation only, or unknown format)
    date_time,
    date,
    time,
    duration,
    email,
    idn_email,
    hostname,
    idn_hostname,
    ipv4,
    ipv6,
    uri,
    uri_reference,
    iri,
    iri_reference,
    uri_template,
    uuid,
    regex,
    json_pointer,
    relative_json_pointer,
};
Format parse_format(std::string_view name);                // Format::none if unknown
bool check_format(Format format, std::string_view value);  // format.cpp

struct Node;

// A schema resource (a document, or a subschema with its own "$id"). Validation keeps the
// chain of resources it has entered (the "dynamic scope") to resolve $dynamicRef.
struct Resource {
    std::string uri;
    std::vector<std::pair<std::string, const Node*>> dynamic_anchors;

    const Node* dynamic_anchor(std::string_view name) const {
        for (const auto& [n, node] : dynamic_anchors) {
            if (n == name) return node;
        }
        return nullptr;
    }
};

// An edge to a subschema. `path` is the keyword-location segment(s) from the parent schema,
// already escaped as JSON Pointer tokens (e.g. "properties/a~1b", "allOf/2", "$ref").
struct Edge {
    std::string path;
    const Node* node = nullptr;
};
struct NamedEdge {
    std::string name;
    std::string path;
    const Node* node = nullptr;
};
struct PatternEdge {
    Regex regex;
    std::string path;
    const Node* node = nullptr;
};
struct Dependency {
    std::string name;
    std::string path;  // "dependentRequired/<name>" or "dependencies/<name>", escaped
    std::vector<std::string> required;
};

struct Node {
    bool is_bool = false;  // true / false schema
    bool bool_value = true;
    const Resource* resource = nullptr;

    // Applicators on the same instance.
    const Node* ref = nullptr;
    const Node* dynamic_ref = nullptr;
    std::string dynamic_anchor_name;  // non-empty: $dynamicRef consults the dynamic scope
    std::vector<Edge> all_of, any_of, one_of;
    const Node* not_schema = nullptr;
    const Node* if_schema = nullptr;
    const Node* then_schema = nullptr;
    const Node* else_schema = nullptr;

    // Any instance type.
    std::uint8_t types = 0;  // 0: no "type" keyword
    const Json* type_value = nullptr;
    const Json* enum_values = nullptr;
    const Json* const_value = nullptr;

    // Numbers.
    std::optional<Number> multiple_of, maximum, exclusive_maximum, minimum, exclusive_minimum;
    const Json* multiple_of_value = nullptr;  // the schema's own values, for error reports
    const Json* maximum_value = nullptr;
    const Json* exclusive_maximum_value = nullptr;
    const Json* minimum_value = nullptr;
    const Json* exclusive_minimum_value = nullptr;

    // Strings.
    std::optional<std::uint64_t> max_length, min_length;
    std::optional<Regex> pattern;
    Format format = Format::none;
    std::string format_name;

    // Arrays. prefix_items is draft-07 array-form "items" or 2020-12 "prefixItems";
    // items applies to the remaining elements (draft-07: schema-form "items" or
    // "additionalItems"; 2020-12: "items").
    std::vector<Edge> prefix_items;
    const Node* items = nullptr;
    std::string items_path;  // "items" or "additionalItems"
    std::optional<std::uint64_t> max_items, min_items;
    bool unique_items = false;
    const Node* contains = nullptr;
    std::uint64_t min_contains = 1;
    std::optional<std::uint64_t> max_contains;
    bool has_min_contains = false;
    const Node* unevaluated_items = nullptr;

    // Objects.
    std::vector<NamedEdge> properties;  // sorted by name
    std::vector<PatternEdge> pattern_properties;
    const Node* additional_properties = nullptr;
    const Node* property_names = nullptr;
    std::vector<std::string> required;
    std::optional<std::uint64_t> max_properties, min_properties;
    std::vector<Dependency> dependent_required;
    std::vector<NamedEdge> dependent_schemas;
    const char* dependent_required_keyword = "dependentRequired";  // or "dependencies"
    const Node* unevaluated_properties = nullptr;

    // Summary flags, so validation skips whole groups of keywords.
    bool has_number_keywords = false;
    bool has_string_keywords = false;
    bool has_array_keywords = false;
    bool has_object_keywords = false;
    bool has_in_place_applicators = false;
};

struct Program {
    std::deque<Json> documents;  // the root schema and every referenced document (stable addresses)
    std::deque<Node> nodes;
    std::deque<Resource> resources;
    const Node* root = nullptr;
    Dialect dialect = Dialect::draft2020_12;
    std::size_t max_errors = 20;
    std::size_t max_depth = 128;
};

}  // namespace toolport::schema::detail
