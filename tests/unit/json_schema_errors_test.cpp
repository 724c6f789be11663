// toolport::schema API beyond pass/fail: what errors say and where they point, limits
// (max_errors, max_depth), compile-time SchemaErrors, dialect selection, remote-document
// registry, thread safety.

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "schema/json_schema.hpp"
#include "util/json.hpp"

namespace {

using toolport::Json;
using toolport::schema::compile;
using toolport::schema::CompiledSchema;
using toolport::schema::Dialect;
using toolport::schema::Options;
using toolport::schema::SchemaError;
using toolport::schema::ValidationError;
using toolport::schema::ValidationResult;

const ValidationError* find_error(const ValidationResult& r, const std::string& keyword) {
    for (const auto& e : r.errors) {
        if (e.keyword == keyword) return &e;
    }
    return nullptr;
}

std::string compile_error(const Json& schema, Options options = {}) {
    try {
        compile(schema, std::move(options));
    } catch (const SchemaError& e) {
        return e.what();
    }
    return "";
}

// A tool inputSchema of the kind MCP servers send.
const Json kAddressSchema = Json::parse(R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "minLength": 1},
    "address": {"$ref": "#/$defs/address"},
    "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}
  },
  "required": ["name"],
  "additionalProperties": false,
  "$defs": {
    "address": {
      "type": "object",
      "properties": {
        "city": {"type": "string"},
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
        "country": {"enum": ["DE", "FR", "US"]}
      },
      "required": ["city"]
    }
  }
})");

TEST(JsonSchemaErrors, TypeErrorThroughRefHasLocationsMessageAndValues) {
    CompiledSchema schema = compile(kAddressSchema);
    ValidationResult r = schema.validate(Json::parse(R"({"name": "x", "address": {"city": 5}})"));
    ASSERT_FALSE(r.valid);
    ASSERT_EQ(r.errors.size(), 1u);
    const ValidationError& e = r.errors[0];
    EXPECT_EQ(e.instance_location, "/address/city");
    EXPECT_EQ(e.keyword_location, "/properties/address/$ref/properties/city/type");
    EXPECT_EQ(e.keyword, "type");
    EXPECT_EQ(e.message, "expected string, got number");
    EXPECT_EQ(e.expected, Json("string"));
    EXPECT_EQ(e.actual, Json(5));
}

TEST(JsonSchemaErrors, ValidInstanceHasNoErrors) {
    CompiledSchema schema = compile(kAddressSchema);
    Json args = Json::parse(R"({"name": "x", "address": {"city": "Paris", "zip": "75001", "country": "FR"},
                              "tags": ["a", "b"]})");
    ValidationResult r = schema.validate(args);
    EXPECT_TRUE(r.valid);
    EXPECT_TRUE(static_cast<bool>(r));
    EXPECT_TRUE(r.errors.empty());
    EXPECT_FALSE(r.truncated);
    EXPECT_TRUE(schema.is_valid(args));
}

TEST(JsonSchemaErrors, EachKeywordReportsExpectedAndActual) {
    CompiledSchema schema = compile(kAddressSchema);
    ValidationResult r = schema.validate(
        Json::parse(R"({"address": {"zip": "7500", "country": "IT"}, "tags": ["a", "a"], "extra": true, "name": ""})"));
    ASSERT_FALSE(r.valid);

    const ValidationError* required = find_error(r, "required");
    ASSERT_NE(required, nullptr);
    EXPECT_EQ(required->instance_location, "/address");
    EXPECT_EQ(required->keyword_location, "/properties/address/$ref/required");
    EXPECT_EQ(required->expected, Json("city"));
    EXPECT_NE(required->message.find("'city'"), std::string::npos) << required->message;

    const ValidationError* pattern = find_error(r, "pattern");
    ASSERT_NE(pattern, nullptr);
    EXPECT_EQ(pattern->instance_location, "/address/zip");
    EXPECT_EQ(pattern->expected, Json("^[0-9]{5}$"));
    EXPECT_EQ(pattern->actual, Json("7500"));

    const ValidationError* enumeration = find_error(r, "enum");
    ASSERT_NE(enumeration, nullptr);
    EXPECT_EQ(enumeration->instance_location, "/address/country");
    EXPECT_EQ(enumeration->expected, Json::parse(R"(["DE", "FR", "US"])"));
    EXPECT_EQ(enumeration->actual, Json("IT"));
    EXPECT_NE(enumeration->message.find("\"DE\""), std::string::npos) << enumeration->message;

    const ValidationError* unique = find_error(r, "uniqueItems");
    ASSERT_NE(unique, nullptr);
    EXPECT_EQ(unique->instance_location, "/tags");
    EXPECT_NE(unique->message.find("index 0 and 1"), std::string::npos) << unique->message;

    const ValidationError* additional = find_error(r, "additionalProperties");
    ASSERT_NE(additional, nullptr);
    EXPECT_EQ(additional->instance_location, "/extra");
    EXPECT_EQ(additional->keyword_location, "/additionalProperties");
    EXPECT_EQ(additional->actual, Json(true));
    EXPECT_EQ(additional->expected, Json::parse(R"(["address", "name", "tags"])"));
    EXPECT_NE(additional->message.find("'extra'"), std::string::npos) << additional->message;

    const ValidationError* min_length = find_error(r, "minLength");
    ASSERT_NE(min_length, nullptr);
    EXPECT_EQ(min_length->instance_location, "/name");
    EXPECT_EQ(min_length->expected, Json(1));
}

TEST(JsonSchemaErrors, NumericAndSizeMessages) {
    CompiledSchema schema = compile(Json::parse(R"({
    "properties": {
      "n": {"minimum": 1, "maximum": 10, "multipleOf": 2},
      "e": {"exclusiveMinimum": 0},
      "a": {"minItems": 2},
      "o": {"maxProperties": 1}
    }
  })"));
    ValidationResult r = schema.validate(Json::parse(R"({"n": 11, "e": 0, "a": [1], "o": {"x": 1, "y": 2}})"));
    ASSERT_FALSE(r.valid);
    const ValidationError* maximum = find_error(r, "maximum");
    ASSERT_NE(maximum, nullptr);
    EXPECT_EQ(maximum->message, "value 11 is greater than the maximum of 10");
    EXPECT_EQ(maximum->expected, Json(10));
    const ValidationError* multiple = find_error(r, "multipleOf");
    ASSERT_NE(multiple, nullptr);
    EXPECT_EQ(multiple->message, "value 11 is not a multiple of 2");
    EXPECT_NE(find_error(r, "exclusiveMinimum"), nullptr);
    const ValidationError* min_items = find_error(r, "minItems");
    ASSERT_NE(min_items, nullptr);
    EXPECT_EQ(min_items->message, "array must have at least 2 items (got 1)");
    EXPECT_NE(find_error(r, "maxProperties"), nullptr);
}

TEST(JsonSchemaErrors, InstanceLocationsEscapeAndIndexArrays) {
    CompiledSchema schema = compile(Json::parse(R"({
    "properties": {"a/b~c": {"type": "array", "items": {"type": "integer"}}}
  })"));
    ValidationResult r = schema.validate(Json::parse(R"({"a/b~c": [1, 2, "three"]})"));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].instance_location, "/a~1b~0c/2");
    EXPECT_EQ(r.errors[0].keyword_location, "/properties/a~1b~0c/items/type");
    EXPECT_EQ(r.errors[0].expected, Json("integer"));
}

TEST(JsonSchemaErrors, CompositionKeywordsReportOneErrorEach) {
    CompiledSchema schema = compile(Json::parse(R"({
    "properties": {
      "any": {"anyOf": [{"type": "string"}, {"type": "number"}]},
      "one": {"oneOf": [{"minimum": 0}, {"maximum": 10}]},
      "not": {"not": {"type": "null"}},
      "cond": {"if": {"type": "string"}, "then": {"minLength": 3}, "else": {"type": "number"}}
    }
  })"));
    ValidationResult r = schema.validate(Json::parse(R"({"any": null, "one": 5, "not": null, "cond": "ab"})"));
    ASSERT_EQ(r.errors.size(), 4u);
    const ValidationError* any = find_error(r, "anyOf");
    ASSERT_NE(any, nullptr);
    EXPECT_EQ(any->instance_location, "/any");
    // All alternatives declare a type, so the error says which types would do.
    EXPECT_EQ(any->expected, Json::parse(R"(["string", "number"])"));
    EXPECT_NE(any->message.find("expected string or number, got null"), std::string::npos) << any->message;
    const ValidationError* one = find_error(r, "oneOf");
    ASSERT_NE(one, nullptr);
    EXPECT_NE(one->message.find("more than one"), std::string::npos) << one->message;
    EXPECT_NE(find_error(r, "not"), nullptr);
    const ValidationError* then = find_error(r, "minLength");
    ASSERT_NE(then, nullptr);
    EXPECT_EQ(then->keyword_location, "/properties/cond/then/minLength");
}

TEST(JsonSchemaErrors, UnevaluatedPropertiesNamesTheProperty) {
    CompiledSchema schema = compile(Json::parse(R"({
    "allOf": [{"properties": {"a": true}}],
    "properties": {"b": true},
    "unevaluatedProperties": false
  })"));
    EXPECT_TRUE(schema.is_valid(Json::parse(R"({"a": 1, "b": 2})")));
    ValidationResult r = schema.validate(Json::parse(R"({"a": 1, "b": 2, "c": 3})"));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].keyword, "unevaluatedProperties");
    EXPECT_EQ(r.errors[0].instance_location, "/c");
    EXPECT_EQ(r.errors[0].actual, Json(3));
}

TEST(JsonSchemaErrors, MaxErrorsCapsCollection) {
    Json many = Json::array();
    for (int i = 0; i < 50; ++i) many.push_back(i);
    const Json items_schema = Json::parse(R"({"items": {"type": "string"}})");

    ValidationResult r = compile(items_schema).validate(many);
    EXPECT_FALSE(r.valid);
    EXPECT_EQ(r.errors.size(), 20u);  // the default
    EXPECT_TRUE(r.truncated);
    EXPECT_EQ(r.errors[19].instance_location, "/19");

    Options options;
    options.max_errors = 3;
    r = compile(items_schema, options).validate(many);
    EXPECT_FALSE(r.valid);
    EXPECT_EQ(r.errors.size(), 3u);
    EXPECT_TRUE(r.truncated);

    // Exactly at the cap: nothing was left out.
    r = compile(items_schema, options).validate(Json::array({1, 2, 3}));
    EXPECT_EQ(r.errors.size(), 3u);
    EXPECT_FALSE(r.truncated);
}

TEST(JsonSchemaErrors, IsValidAgreesWithValidateAndStopsEarly) {
    CompiledSchema schema = compile(kAddressSchema);
    const Json bad = Json::parse(R"({"address": {"zip": 1}, "extra": 1})");
    EXPECT_FALSE(schema.is_valid(bad));
    EXPECT_FALSE(schema.validate(bad).valid);
    EXPECT_TRUE(schema.is_valid(Json::parse(R"({"name": "n"})")));

    // is_valid() stops at the first failing item: a million-item array of wrong types is
    // rejected without evaluating (or reporting on) the rest.
    Json big = Json::array();
    for (int i = 0; i < 1000000; ++i) big.push_back(i);
    CompiledSchema strings = compile(Json::parse(R"({"items": {"type": "string"}})"));
    EXPECT_FALSE(strings.is_valid(big));
}

// `depth` arrays inside an array: [[[...]]], the innermost empty one at depth `depth`.
Json nested_arrays(int depth) {
    Json root = Json::array();
    Json* cur = &root;
    for (int i = 0; i < depth; ++i) {
        cur->push_back(Json::array());
        cur = &cur->back();
    }
    return root;
}

TEST(JsonSchemaErrors, DeepInstanceHitsDepthLimitInsteadOfCrashing) {
    CompiledSchema schema = compile(Json::parse(R"({"items": {"$ref": "#"}})"));
    Json deep = nested_arrays(100000);
    ValidationResult r = schema.validate(deep);
    ASSERT_FALSE(r.valid);
    const ValidationError* depth = find_error(r, "$maxDepth");
    ASSERT_NE(depth, nullptr);
    // 128 levels of arrays are fine; the 129th is reported.
    EXPECT_EQ(std::count(depth->instance_location.begin(), depth->instance_location.end(), '/'), 129);
    EXPECT_FALSE(schema.is_valid(deep));
    EXPECT_TRUE(schema.is_valid(nested_arrays(100)));

    Options options;
    options.max_depth = 5;
    CompiledSchema shallow = compile(Json::parse(R"({"items": {"$ref": "#"}})"), options);
    EXPECT_TRUE(shallow.is_valid(nested_arrays(5)));  // innermost value at depth 5
    EXPECT_FALSE(shallow.is_valid(nested_arrays(6)));
    ValidationResult r6 = shallow.validate(nested_arrays(6));
    ASSERT_EQ(r6.errors.size(), 1u);
    EXPECT_EQ(r6.errors[0].keyword, "$maxDepth");
    EXPECT_EQ(r6.errors[0].instance_location, "/0/0/0/0/0/0");
    EXPECT_EQ(r6.errors[0].expected, Json(5));
}

TEST(JsonSchemaErrors, ReferenceCyclesTerminate) {
    // Compiles (cycles are pointer cycles) and fails validation instead of recursing forever.
    struct Case {
        const char* schema;
        const char* reported;  // anyOf reports its own failure, not the one inside it
    };
    for (const Case& c :
         {Case{R"({"$ref": "#"})", "$maxDepth"},
          Case{R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"})",
               "$maxDepth"},
          Case{R"({"anyOf": [{"$ref": "#"}]})", "anyOf"}}) {
        SCOPED_TRACE(c.schema);
        CompiledSchema schema = compile(Json::parse(c.schema));
        ValidationResult r = schema.validate(Json(1));
        EXPECT_FALSE(r.valid);
        EXPECT_NE(find_error(r, c.reported), nullptr);
        EXPECT_FALSE(schema.is_valid(Json(1)));
    }
}

TEST(JsonSchemaErrors, DeepUniqueItemsAndErrorValuesAreBounded) {
    CompiledSchema schema = compile(Json::parse(R"({"uniqueItems": true, "type": "object"})"));
    Json deep = Json::array();
    deep.push_back(nested_arrays(50000));
    deep.push_back(nested_arrays(50000));
    ValidationResult r = schema.validate(deep);
    EXPECT_FALSE(r.valid);
    // The offending value is too deep to copy into the error; a placeholder is used.
    const ValidationError* type = find_error(r, "type");
    ASSERT_NE(type, nullptr);
    EXPECT_TRUE(type->actual.is_string());
    EXPECT_NE(find_error(r, "$maxDepth"), nullptr);
}

TEST(JsonSchemaErrors, AbsurdlyDeepSchemasAreRefused) {
    // Deep JSON anywhere in a schema (here a const value) is refused before it is copied.
    Json schema = Json::object();
    schema["const"] = nested_arrays(100000);
    EXPECT_NE(compile_error(schema).find("levels deep"), std::string::npos);
    // Deeply nested subschemas too.
    Json nested = Json::object();
    Json* cur = &nested;
    for (int i = 0; i < 1000; ++i) cur = &((*cur)["not"] = Json::object());
    EXPECT_NE(compile_error(nested).find("schema nesting exceeds"), std::string::npos);
}

TEST(JsonSchemaErrors, UnresolvableRefIsSchemaError) {
    std::string message = compile_error(Json::parse(R"({"properties": {"a": {"$ref": "#/$defs/missing"}}})"));
    EXPECT_NE(message.find("cannot resolve $ref '#/$defs/missing'"), std::string::npos) << message;
    EXPECT_NE(message.find("#/properties/a"), std::string::npos) << message;

    message = compile_error(Json::parse(R"({"$ref": "#nowhere"})"));
    EXPECT_NE(message.find("no anchor named 'nowhere'"), std::string::npos) << message;
}

TEST(JsonSchemaErrors, RemoteRefsComeOnlyFromTheRegistry) {
    const Json schema = Json::parse(
        R"({"properties": {"p": {"$ref": "https://schemas.example.com/point.json#/$defs/x"}}})");
    std::string message = compile_error(schema);
    EXPECT_NE(message.find("never fetched"), std::string::npos) << message;
    EXPECT_NE(message.find("https://schemas.example.com/point.json"), std::string::npos) << message;

    Options options;
    options.documents["https://schemas.example.com/point.json"] = Json::parse(R"({"$defs": {"x": {"type": "number"}}})");
    CompiledSchema compiled = compile(schema, options);
    EXPECT_TRUE(compiled.is_valid(Json::parse(R"({"p": 1.5})")));
    ValidationResult r = compiled.validate(Json::parse(R"({"p": "1.5"})"));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].keyword_location, "/properties/p/$ref/type");

    // A registered document is also found by the "$id" it declares.
    Options by_id;
    by_id.documents["file:///schemas/point.json"] = Json::parse(
        R"({"$id": "https://schemas.example.com/point.json", "$defs": {"x": {"type": "number"}}})");
    EXPECT_FALSE(compile(schema, by_id).is_valid(Json::parse(R"({"p": "1.5"})")));
}

TEST(JsonSchemaErrors, InvalidKeywordValuesAreSchemaErrors) {
    EXPECT_NE(compile_error(Json::parse(R"({"type": "strnig"})")).find("unknown type \"strnig\""), std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"properties": {"a": {"minLength": -1}}})")).find("#/properties/a/minLength"),
              std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"pattern": "(unclosed"})")).find("regular expression"), std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"pattern": "(?<=a)b"})")).find("lookbehind"), std::string::npos);
    // Patterns that would make the regex engine build huge automata.
    EXPECT_NE(compile_error(Json::parse(R"({"pattern": "a{100000}"})")).find("exceeds 10000"), std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"pattern": "(a{1000}){1000}"})")).find("too complex"), std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"multipleOf": 0})")).find("greater than 0"), std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"allOf": []})")).find("non-empty array"), std::string::npos);
    EXPECT_NE(compile_error(Json::parse(R"({"properties": {"a": 5}})")).find("object or a boolean"), std::string::npos);
    EXPECT_NE(compile_error(Json(42)).find("object or a boolean"), std::string::npos);
}

TEST(JsonSchemaErrors, DialectComesFromSchemaKeywordOrOptions) {
    // $ref siblings: ignored in draft-07, applied in 2020-12.
    const char* body = R"("$defs": {"n": {"type": "number"}},
                        "properties": {"a": {"$ref": "#/$defs/n", "maximum": 5}})";
    const Json value = Json::parse(R"({"a": 10})");

    for (const char* uri : {"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-07/schema"}) {
        CompiledSchema d7 = compile(Json::parse(std::string("{\"$schema\": \"") + uri + "\", " + body + "}"));
        EXPECT_EQ(d7.dialect(), Dialect::draft7);
        EXPECT_TRUE(d7.is_valid(value)) << uri;
    }
    CompiledSchema d2020 = compile(
        Json::parse(std::string(R"({"$schema": "https://json-schema.org/draft/2020-12/schema", )") + body + "}"));
    EXPECT_EQ(d2020.dialect(), Dialect::draft2020_12);
    EXPECT_FALSE(d2020.is_valid(value));

    // No $schema: Options::default_dialect, which defaults to 2020-12 (MCP's default).
    const Json plain = Json::parse(std::string("{") + body + "}");
    EXPECT_EQ(compile(plain).dialect(), Dialect::draft2020_12);
    EXPECT_FALSE(compile(plain).is_valid(value));
    Options draft7;
    draft7.default_dialect = Dialect::draft7;
    EXPECT_EQ(compile(plain, draft7).dialect(), Dialect::draft7);
    EXPECT_TRUE(compile(plain, draft7).is_valid(value));

    // Keywords that exist in one dialect only.
    const Json tuple = Json::parse(R"({"$schema": "http://json-schema.org/draft-07/schema#",
                                     "items": [{"type": "string"}], "additionalItems": false})");
    EXPECT_TRUE(compile(tuple).is_valid(Json::parse(R"(["a"])")));
    EXPECT_FALSE(compile(tuple).is_valid(Json::parse(R"(["a", 1])")));
    const Json prefix = Json::parse(R"({"prefixItems": [{"type": "string"}], "items": false})");
    EXPECT_TRUE(compile(prefix).is_valid(Json::parse(R"(["a"])")));
    EXPECT_FALSE(compile(prefix).is_valid(Json::parse(R"(["a", 1])")));
    // draft-07 has no prefixItems, so there "items": false rejects every item.
    EXPECT_FALSE(compile(prefix, draft7).is_valid(Json::parse(R"(["a"])")));
    EXPECT_TRUE(compile(prefix, draft7).is_valid(Json::array()));

    const Json dependent = Json::parse(R"({"dependentRequired": {"a": ["b"]}})");
    EXPECT_FALSE(compile(dependent).is_valid(Json::parse(R"({"a": 1})")));
    EXPECT_TRUE(compile(dependent, draft7).is_valid(Json::parse(R"({"a": 1})")));
}

TEST(JsonSchemaErrors, UnknownDialect) {
    const Json schema = Json::parse(R"({"$schema": "http://json-schema.org/draft-04/schema#", "type": "string"})");
    std::string message = compile_error(schema);
    EXPECT_NE(message.find("unsupported $schema"), std::string::npos) << message;

    Options lenient;
    lenient.reject_unknown_dialect = false;
    CompiledSchema compiled = compile(schema, lenient);
    EXPECT_TRUE(compiled.is_valid(Json("x")));
    EXPECT_FALSE(compiled.is_valid(Json(1)));
}

TEST(JsonSchemaErrors, FormatIsAnAnnotationUnlessAsserted) {
    const Json schema = Json::parse(R"({"format": "email"})");
    EXPECT_TRUE(compile(schema).is_valid(Json("not an email")));
    Options options;
    options.assert_format = true;
    CompiledSchema asserted = compile(schema, options);
    EXPECT_TRUE(asserted.is_valid(Json("someone@example.com")));
    ValidationResult r = asserted.validate(Json("not an email"));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].keyword, "format");
    EXPECT_EQ(r.errors[0].expected, Json("email"));
}

TEST(JsonSchemaErrors, ValueSemantics) {
    // Lengths count code points: "é🐲" is 2 characters (6 bytes).
    CompiledSchema two = compile(Json::parse(R"({"minLength": 2, "maxLength": 2})"));
    EXPECT_TRUE(two.is_valid(Json("\xC3\xA9\xF0\x9F\x90\xB2")));
    EXPECT_FALSE(two.is_valid(Json("\xC3\xA9")));
    // 1 and 1.0 are the same value.
    CompiledSchema unique = compile(Json::parse(R"({"uniqueItems": true})"));
    EXPECT_FALSE(unique.is_valid(Json::parse("[1, 1.0]")));
    EXPECT_FALSE(unique.is_valid(Json::parse(R"([{"a": [1]}, {"a": [1.0]}])")));
    EXPECT_TRUE(unique.is_valid(Json::parse(R"([{"a": 1}, {"a": 2}])")));
    CompiledSchema integer = compile(Json::parse(R"({"type": "integer", "enum": [2, 3]})"));
    EXPECT_TRUE(integer.is_valid(Json::parse("2.0")));
    EXPECT_FALSE(integer.is_valid(Json::parse("2.5")));
    // Patterns are not anchored, and use code points.
    CompiledSchema pattern = compile(Json::parse(R"({"pattern": "^.{2}$"})"));
    EXPECT_TRUE(pattern.is_valid(Json("\xC3\xA9\xF0\x9F\x90\xB2")));
}

TEST(JsonSchemaErrors, LongStringsDoNotExhaustTheRegexMatcher) {
    CompiledSchema schema = compile(Json::parse(R"({"pattern": "^(a|b)*$"})"));
    EXPECT_TRUE(schema.is_valid(Json(std::string(1000000, 'a'))));
    EXPECT_FALSE(schema.is_valid(Json(std::string(1000000, 'a') + "c")));
    // Catastrophic backtracking patterns run in linear time.
    CompiledSchema redos = compile(Json::parse(R"({"pattern": "^(a+)+$"})"));
    EXPECT_FALSE(redos.is_valid(Json(std::string(5000, 'a') + "!")));
    // Back-references need the backtracking matcher, which refuses very long input.
    CompiledSchema backref = compile(Json::parse(R"({"pattern": "^(a)\\1*$"})"));
    EXPECT_TRUE(backref.is_valid(Json(std::string(100, 'a'))));
    ValidationResult r = backref.validate(Json(std::string(100000, 'a')));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_NE(r.errors[0].message.find("too long"), std::string::npos) << r.errors[0].message;
}

TEST(JsonSchemaErrors, MetaSchemasAreBuiltIn) {
    CompiledSchema meta2020 = compile(Json::parse(R"({"$ref": "https://json-schema.org/draft/2020-12/schema"})"));
    EXPECT_TRUE(meta2020.is_valid(kAddressSchema));
    ValidationResult r = meta2020.validate(Json::parse(R"({"properties": {"a": {"type": 5}}})"));
    EXPECT_FALSE(r.valid);
    CompiledSchema meta7 = compile(Json::parse(R"({"$ref": "http://json-schema.org/draft-07/schema#"})"));
    EXPECT_TRUE(meta7.is_valid(Json::parse(R"({"type": "string", "minLength": 1})")));
    EXPECT_FALSE(meta7.is_valid(Json::parse(R"({"minLength": -1})")));
}

TEST(JsonSchemaErrors, DefaultConstructedSchemaAcceptsEverything) {
    CompiledSchema empty;
    EXPECT_TRUE(empty.is_valid(Json::parse(R"({"anything": [1, 2, 3]})")));
    EXPECT_TRUE(empty.validate(Json()).valid);
    EXPECT_FALSE(compile(Json(false)).is_valid(Json(1)));
    ValidationResult r = compile(Json(false)).validate(Json(1));
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(r.errors[0].keyword, "false");
    EXPECT_EQ(r.errors[0].keyword_location, "");
}

TEST(JsonSchemaErrors, ConcurrentValidationOfOneCompiledSchema) {
    // Exercises regexes, unevaluatedProperties and $dynamicRef from several threads at once.
    CompiledSchema schema = compile(Json::parse(R"({
    "$id": "https://example.com/tree",
    "$dynamicAnchor": "node",
    "type": "object",
    "properties": {
      "name": {"type": "string", "pattern": "^[a-z]+[0-9]*$"},
      "children": {"type": "array", "items": {"$dynamicRef": "#node"}}
    },
    "unevaluatedProperties": false
  })"));
    const Json good = Json::parse(
        R"({"name": "root", "children": [{"name": "leaf1"}, {"name": "leaf2", "children": []}]})");
    const Json bad = Json::parse(R"({"name": "root", "children": [{"name": "Leaf", "extra": 1}]})");
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&] {
            for (int i = 0; i < 2000; ++i) {
                if (!schema.is_valid(good) || schema.is_valid(bad)) ++mismatches;
                if (i % 100 == 0 && schema.validate(bad).errors.size() != 2) ++mismatches;
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
