// OpenAPI operations as tools: names (operationId, method + path, made safe, kept within
// 64 characters, collisions), include/exclude, the merged inputSchema and its `required`,
// the outputSchema, the hints, the security alternatives and document order.
#include <gtest/gtest.h>

#include "openapi_test_support.hpp"

using namespace toolport;
using namespace toolport::openapi;
using namespace toolport::openapi::test;

namespace {

OperationList inventory(const OperationFilter& filter = {}, const std::string& prefix = "") {
    auto docs = load_file_document((fixture_dir() / "inventory.yaml").string());
    return read_operations(docs, filter, prefix);
}

std::vector<std::string> names(const OperationList& list) {
    std::vector<std::string> out;
    for (const auto& op : list.operations) out.push_back(op.tool_name);
    return out;
}

TEST(OpenApiOperations, EveryOperationInDocumentOrder) {
    auto list = inventory();
    EXPECT_TRUE(list.warnings.empty()) << list.warnings[0];
    EXPECT_EQ(names(list), (std::vector<std::string>{"listItems", "createItem", "getItem", "updateItem", "deleteItem",
                                                     "addNotes", "getFile", "getCategory", "getStatus", "explode"}));
}

TEST(OpenApiOperations, NamesMadeSafeShortAndUnique) {
    EXPECT_EQ(safe_tool_name("get_/pets/{petId}/photos.json"), "get_pets_petId_photos_json");
    EXPECT_EQ(safe_tool_name("list-Things"), "list-Things");
    EXPECT_EQ(safe_tool_name("ünïcode op"), "n_code_op");
    EXPECT_EQ(safe_tool_name("{}"), "operation");
    const std::string long_name(80, 'a');
    const std::string fitted = fit_tool_name(long_name);
    EXPECT_EQ(fitted.size(), 64u);
    EXPECT_EQ(fitted.substr(0, 55), std::string(55, 'a'));
    EXPECT_NE(fit_tool_name(long_name + "b"), fit_tool_name(long_name + "c"));  // the hash keeps them apart
    EXPECT_EQ(fit_tool_name(long_name), fitted);                                // and is stable
    auto unique = unique_tool_names({"x", "y", "x", "x", long_name, long_name});
    EXPECT_EQ(unique[0], "x");
    EXPECT_EQ(unique[2], "x_2");
    EXPECT_EQ(unique[3], "x_3");
    EXPECT_EQ(unique[5].size(), 64u);
    EXPECT_EQ(unique[5].substr(62), "_2");
    EXPECT_NE(unique[4], unique[5]);
}

TEST(OpenApiOperations, NamesFromMethodAndPathWithPrefixAndCollisions) {
    auto list = operations_of(R"(openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /pets/{petId}:
    get: {responses: {'200': {description: ok}}}
    delete: {operationId: 'remove pet!', responses: {'200': {description: ok}}}
  /a:
    get: {operationId: same, responses: {'200': {description: ok}}}
  /b:
    get: {operationId: same, responses: {'200': {description: ok}}}
  /c:
    get: {operationId: same_2, responses: {'200': {description: ok}}}
)",
                              {}, "pets_");
    EXPECT_EQ(names(list), (std::vector<std::string>{"pets_get_pets_petId", "pets_remove_pet", "pets_same",
                                                     "pets_same_2", "pets_same_2_2"}));
    EXPECT_EQ(list.operations[1].operation_id, "remove pet!");
}

TEST(OpenApiOperations, IncludeAndExcludeByTagAndOperation) {
    OperationFilter tags;
    tags.include_tags = {"admin"};
    EXPECT_EQ(names(inventory(tags)), (std::vector<std::string>{"deleteItem", "explode"}));

    OperationFilter mixed;
    mixed.include_tags = {"items"};
    mixed.include_operations = {"getStatus"};
    mixed.exclude_operations = {"createItem"};
    EXPECT_EQ(names(inventory(mixed)),
              (std::vector<std::string>{"listItems", "getItem", "updateItem", "addNotes", "getStatus"}));

    OperationFilter excluded;
    excluded.exclude_tags = {"items", "admin"};
    EXPECT_EQ(names(inventory(excluded)), (std::vector<std::string>{"getFile", "getCategory", "getStatus"}));

    // A derived name matches too when the operation has no operationId.
    auto list = operations_of(R"(openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /x: {get: {responses: {'200': {description: ok}}}, post: {responses: {'200': {description: ok}}}}
)",
                              OperationFilter{.exclude_operations = {"post_x"}});
    EXPECT_EQ(names(list), (std::vector<std::string>{"get_x"}));
}

TEST(OpenApiOperations, ParametersAndAnObjectBodyMergeIntoOneSchema) {
    auto list = inventory();
    const Operation& update = named(list, "updateItem");
    const Json& schema = update.input_schema;
    EXPECT_EQ(schema["type"], "object");
    EXPECT_EQ(schema["additionalProperties"], false);
    // The path-level parameter, the operation's header, and the body's properties side by side.
    EXPECT_EQ(schema["properties"]["itemId"]["type"], "string");
    EXPECT_EQ(schema["properties"]["itemId"]["description"], "The item's id.");
    EXPECT_EQ(schema["properties"]["If-Match"]["type"], "string");
    EXPECT_EQ(schema["properties"]["name"]["minLength"], 1);
    EXPECT_EQ(schema["properties"]["parent"]["type"], Json({"string", "null"}));  // 3.0 nullable
    EXPECT_EQ(schema["properties"]["price"]["exclusiveMinimum"], 0);  // from common.yaml, 3.0 form converted
    EXPECT_EQ(schema["required"], Json({"itemId", "name"}));
    EXPECT_EQ(update.body.layout, BodyLayout::merged);
    EXPECT_EQ(update.body.properties, (std::vector<std::string>{"name", "parent", "price", "tags"}));

    const Json& listing = named(list, "listItems").input_schema;
    EXPECT_EQ(listing["properties"]["tag"]["type"], "array");
    EXPECT_EQ(listing["properties"]["limit"]["maximum"], 100);
    EXPECT_TRUE(listing["properties"].contains("X-Request-Id"));
    EXPECT_FALSE(listing.contains("required"));
    const auto& params = named(list, "listItems").parameters;
    ASSERT_EQ(params.size(), 4u);
    EXPECT_EQ(params[0].style, "form");
    EXPECT_TRUE(params[0].explode);
    EXPECT_FALSE(params[1].explode);
    EXPECT_EQ(params[3].location, "header");
}

TEST(OpenApiOperations, AnyOtherBodyGoesUnderBody) {
    auto list = inventory();
    const Operation& notes = named(list, "addNotes");
    EXPECT_EQ(notes.body.layout, BodyLayout::nested);
    EXPECT_EQ(notes.input_schema["properties"]["body"]["type"], "array");
    EXPECT_EQ(notes.input_schema["required"], Json({"itemId", "body"}));

    // A clash with a parameter name, or an optional body: nested, and `body` not required.
    auto clash = operations_of(R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /things/{id}:
    patch:
      operationId: patchThing
      parameters: [{name: id, in: path, required: true, schema: {type: string}},
                   {name: id, in: query, schema: {type: integer}}]
      requestBody:
        content:
          application/merge-patch+json:
            schema: {type: object, properties: {id: {type: string}, size: {type: integer}}, required: [size]}
      responses: {'200': {description: ok}}
)");
    const Operation& patch = clash.operations.at(0);
    EXPECT_EQ(patch.body.layout, BodyLayout::nested);
    EXPECT_EQ(patch.body.media_type, "application/merge-patch+json");
    EXPECT_EQ(patch.parameters[1].argument, "id_query");
    EXPECT_EQ(patch.input_schema["required"], Json({"id"}));
    EXPECT_EQ(patch.input_schema["properties"]["body"]["required"], Json({"size"}));
}

TEST(OpenApiOperations, OutputSchemaOnlyForAnObjectAndHintsByMethod) {
    auto list = inventory();
    const Operation& get = named(list, "getItem");
    EXPECT_EQ(get.output_schema["type"], "object");
    EXPECT_EQ(get.output_schema["allOf"][1]["required"], Json({"id"}));
    EXPECT_TRUE(named(list, "addNotes").output_schema.is_null());  // an array: MCP wants an object
    EXPECT_TRUE(named(list, "getFile").output_schema.is_null());   // text
    EXPECT_FALSE(named(list, "getFile").expects_json);
    EXPECT_EQ(named(list, "createItem").output_schema["type"], "object");  // 201

    EXPECT_EQ(get.annotations.read_only, true);
    EXPECT_EQ(get.annotations.idempotent, true);
    EXPECT_FALSE(get.annotations.destructive.has_value());
    EXPECT_EQ(get.annotations.open_world, true);
    const Operation& del = named(list, "deleteItem");
    EXPECT_FALSE(del.annotations.read_only.has_value());
    EXPECT_EQ(del.annotations.destructive, true);
    EXPECT_EQ(del.annotations.idempotent, true);
    EXPECT_EQ(named(list, "updateItem").annotations.idempotent, true);
    EXPECT_FALSE(named(list, "createItem").annotations.idempotent.has_value());
    EXPECT_EQ(named(list, "createItem").annotations.open_world, true);

    EXPECT_EQ(get.title, "One item");
    EXPECT_NE(named(list, "listItems").description.find("Items in stock"), std::string::npos);
    EXPECT_NE(named(list, "listItems").description.find("(GET /items)"), std::string::npos);
}

TEST(OpenApiOperations, SecurityFromTheOperationOrTheDocument) {
    auto list = inventory();
    EXPECT_EQ(named(list, "getItem").security, (std::vector<std::vector<std::string>>{{"api_key"}}));
    EXPECT_EQ(named(list, "createItem").security, (std::vector<std::vector<std::string>>{{"bearer"}}));
    EXPECT_TRUE(named(list, "getStatus").security.empty());
}

TEST(OpenApiOperations, ARequiredBodyThatIsNotJsonLeavesTheOperationOut) {
    auto list = operations_of(R"(openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /upload:
    post:
      operationId: upload
      requestBody: {required: true, content: {application/octet-stream: {schema: {type: string, format: binary}}}}
      responses: {'200': {description: ok}}
  /ok:
    get: {operationId: fine, responses: {'200': {description: ok}}}
)");
    EXPECT_EQ(names(list), (std::vector<std::string>{"fine"}));
    ASSERT_EQ(list.warnings.size(), 1u);
    EXPECT_NE(list.warnings[0].find("POST /upload"), std::string::npos);
}

}  // namespace

namespace {

TEST(OpenApiOperations, ReadOnlyPropertiesAreNotAskedForAndWriteOnlyOnesNotPromised) {
    auto list = operations_of(R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /users:
    post:
      operationId: createUser
      requestBody:
        required: true
        content: {application/json: {schema: {$ref: '#/components/schemas/User'}}}
      responses:
        '201': {description: ok, content: {application/json: {schema: {$ref: '#/components/schemas/User'}}}}
components:
  schemas:
    User:
      type: object
      required: [id, name, password]
      properties:
        id: {type: string, readOnly: true}
        name: {type: string}
        password: {type: string, writeOnly: true}
)");
    const Operation& create = list.operations.at(0);
    EXPECT_FALSE(create.input_schema["properties"].contains("id"));
    EXPECT_TRUE(create.input_schema["properties"].contains("password"));
    EXPECT_EQ(create.input_schema["required"], Json::array({"name", "password"}));
    EXPECT_FALSE(create.output_schema["properties"].contains("password"));
    EXPECT_EQ(create.output_schema["required"], Json::array({"id", "name"}));
    EXPECT_EQ(create.body.properties, (std::vector<std::string>{"name", "password"}));
}

}  // namespace

namespace {

TEST(OpenApiOperations, AnUndeclaredPathVariableIsARequiredString) {
    auto list = operations_of(R"(openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /orgs/{org}/repos/{repo}:
    get:
      operationId: getRepo
      parameters: [{name: org, in: path, required: true, schema: {type: string, minLength: 2}}]
      responses: {'200': {description: ok}}
)");
    const Operation& op = list.operations.at(0);
    EXPECT_EQ(op.input_schema["required"], Json::array({"org", "repo"}));
    EXPECT_EQ(op.input_schema["properties"]["repo"], Json({{"type", "string"}}));
    EXPECT_EQ(op.input_schema["properties"]["org"]["minLength"], 2);
}

}  // namespace
