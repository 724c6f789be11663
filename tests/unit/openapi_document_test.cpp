// OpenAPI documents: reading JSON and YAML, `$ref`s within a file, to a file beside it and
// in cycles, where refs may point (a file document: only files beside it; a URL document:
// only its own origin), the server URL, and 3.0 schemas as JSON Schema.
#include <gtest/gtest.h>

#include "openapi_test_support.hpp"
#include "providers/openapi/openapi_schema.hpp"

using namespace toolport;
using namespace toolport::openapi;
using namespace toolport::openapi::test;

namespace {

TEST(OpenApiDocument, ResolvesLocalRefsAndRefsToAFileBesideIt) {
    auto docs = load_file_document((fixture_dir() / "inventory.yaml").string());
    EXPECT_EQ(docs.version(), "3.0");
    const Json& paths = docs.root()["paths"];
    // A parameter by local ref.
    Json list = docs.resolve(paths["/items"]["get"], docs.root_location());
    EXPECT_EQ(list["parameters"][2]["name"], "limit");
    EXPECT_EQ(list["parameters"][2]["schema"]["maximum"], 100);
    // A response by local ref whose schema is in common.yaml.
    Json problem = list["responses"]["default"];
    EXPECT_EQ(problem["content"]["application/json"]["schema"]["required"], Json({"code", "message"}));
    // A ref inside the other file is read relative to that file.
    Json created = docs.resolve(paths["/items"]["post"], docs.root_location());
    Json price = created["requestBody"]["content"]["application/json"]["schema"]["properties"]["price"];
    EXPECT_EQ(price["type"], "number");
    EXPECT_TRUE(docs.missing().empty());
}

TEST(OpenApiDocument, CutsARecursiveSchemaAtItsFirstRepetition) {
    auto docs = load_file_document((fixture_dir() / "inventory.yaml").string());
    Json op = docs.resolve(docs.root()["paths"]["/categories/{categoryId}"]["get"], docs.root_location());
    Json category = op["responses"]["200"]["content"]["application/json"]["schema"];
    EXPECT_EQ(category["properties"]["name"]["type"], "string");
    Json child = category["properties"]["children"]["items"];
    // The child is any value (no type, no properties), with a description saying why.
    EXPECT_FALSE(child.contains("type"));
    EXPECT_FALSE(child.contains("properties"));
    EXPECT_NE(child["description"].get<std::string>().find("recursive"), std::string::npos);
}

TEST(OpenApiDocument, MutualRecursionAndSiblingsOfARef) {
    DocumentFolder folder;
    auto path = folder.write("api.yaml", R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths: {}
components:
  schemas:
    A: {type: object, properties: {b: {$ref: '#/components/schemas/B', description: the B}}}
    B: {type: object, properties: {a: {$ref: '#/components/schemas/A'}}}
)");
    auto docs = load_file_document(path);
    EXPECT_EQ(docs.version(), "3.1");
    Json a = docs.resolve(docs.root()["components"]["schemas"]["A"], docs.root_location());
    EXPECT_EQ(a["properties"]["b"]["description"], "the B");  // the sibling wins over the target
    EXPECT_EQ(a["properties"]["b"]["type"], "object");
    // A itself was not reached by a ref: the cut comes where A's ref is met a second time.
    const Json& inner_a = a["properties"]["b"]["properties"]["a"];
    EXPECT_EQ(inner_a["type"], "object");
    EXPECT_EQ(inner_a["properties"]["b"], Json({{"description", "the B"}}));
}

TEST(OpenApiDocument, ARefToNothingFailsOnlyItsOperation) {
    auto list = operations_of(R"(openapi: 3.0.0
info: {title: t, version: '1'}
paths:
  /a:
    get:
      operationId: good
      responses: {'200': {description: ok}}
  /b:
    get:
      operationId: broken
      parameters: [{$ref: '#/components/parameters/Nope'}]
      responses: {'200': {description: ok}}
    post:
      operationId: neighbour
      responses: {'200': {description: ok}}
  /c:
    get:
      operationId: elsewhere
      parameters: [{$ref: 'missing.yaml#/Nope'}]
      responses: {'200': {description: ok}}
)");
    ASSERT_EQ(list.operations.size(), 2u);
    EXPECT_EQ(list.operations[0].tool_name, "good");
    EXPECT_EQ(list.operations[1].tool_name, "neighbour");  // beside the broken one, on the same path
    ASSERT_EQ(list.warnings.size(), 2u);
    EXPECT_NE(list.warnings[0].find("points to nothing"), std::string::npos);
    EXPECT_NE(list.warnings[1].find("missing.yaml"), std::string::npos);
}

TEST(OpenApiDocument, ReadsJsonAndRefusesWhatIsNotOpenApi3) {
    DocumentFolder folder;
    auto docs = load_file_document(
        folder.write("api.json", R"({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {}})"));
    EXPECT_EQ(docs.version(), "3.1");
    EXPECT_THROW(load_file_document(folder.write("s.yaml", "swagger: '2.0'\npaths: {}\n")), DocumentError);
    EXPECT_THROW(load_file_document(folder.write("v.yaml", "openapi: 4.0.0\n")), DocumentError);
    EXPECT_THROW(load_file_document(folder.write("x.yaml", "openapi: [\n")), DocumentError);
    EXPECT_THROW(load_file_document((folder.path() / "absent.yaml").string()), DocumentError);
}

TEST(OpenApiDocument, WhereRefsMayPoint) {
    // From a file: relative files only.
    EXPECT_EQ(resolve_location("/srv/api/main.yaml", "common.yaml"), "/srv/api/common.yaml");
    EXPECT_EQ(resolve_location("/srv/api/main.yaml", "schemas/../c%20d.yaml"), "/srv/api/c d.yaml");
    EXPECT_THROW(resolve_location("/srv/api/main.yaml", "/etc/passwd"), DocumentError);
    EXPECT_THROW(resolve_location("/srv/api/main.yaml", "http://example.com/x.yaml"), DocumentError);
    EXPECT_THROW(resolve_location("/srv/api/main.yaml", "file:///etc/passwd"), DocumentError);
    // From a URL: the same origin only.
    EXPECT_EQ(resolve_location("http://api.test:8080/docs/v1/openapi.yaml?x=1", "common.yaml"),
              "http://api.test:8080/docs/v1/common.yaml");
    EXPECT_EQ(resolve_location("http://api.test:8080/docs/v1/openapi.yaml", "../../shared/c.yaml"),
              "http://api.test:8080/shared/c.yaml");
    EXPECT_EQ(resolve_location("http://api.test:8080/docs/openapi.yaml", "/c.yaml"), "http://api.test:8080/c.yaml");
    EXPECT_EQ(resolve_location("http://api.test:8080/docs/openapi.yaml", "http://API.test:8080/c.yaml"),
              "http://API.test:8080/c.yaml");
    EXPECT_THROW(resolve_location("http://api.test:8080/openapi.yaml", "http://other.test/c.yaml"), DocumentError);
    EXPECT_THROW(resolve_location("http://api.test:8080/openapi.yaml", "https://api.test:8080/c.yaml"), DocumentError);
    EXPECT_THROW(resolve_location("http://api.test:8080/openapi.yaml", "//other.test/c.yaml"), DocumentError);
    EXPECT_THROW(resolve_location("http://api.test:8080/openapi.yaml", "file:///etc/passwd"), DocumentError);
}

TEST(OpenApiDocument, ServerUrlFromTheDocumentOrTheSettings) {
    DocumentFolder folder;
    auto docs = load_file_document(folder.write("api.yaml", R"(openapi: 3.0.0
info: {title: t, version: '1'}
servers:
  - url: https://{region}.api.test/{version}
    variables:
      region: {default: eu}
      version: {default: v2}
paths: {}
)"));
    EXPECT_EQ(server_url(docs, ""), "https://eu.api.test/v2");
    EXPECT_EQ(server_url(docs, "http://127.0.0.1:9/x"), "http://127.0.0.1:9/x");
    // A relative server URL means nothing for a file.
    auto relative = load_file_document((fixture_dir() / "inventory.yaml").string());
    EXPECT_THROW(server_url(relative, ""), DocumentError);
}

TEST(OpenApiSchema, NullableIn30BecomesATypeWithNull) {
    Json schema = Json::parse(R"({"type": "object", "properties": {
        "a": {"type": "string", "nullable": true},
        "b": {"type": "string", "enum": ["x", "y"], "nullable": true},
        "c": {"allOf": [{"type": "integer"}], "nullable": true},
        "d": {"type": "string", "nullable": false},
        "nullable": {"type": "integer"},
        "e": {"type": "number", "minimum": 0, "exclusiveMinimum": true},
        "f": {"type": "string", "example": "hi", "xml": {"name": "f"}, "x-internal": true}}})");
    Json out = to_json_schema(schema, true);
    const Json& p = out["properties"];
    EXPECT_EQ(p["a"]["type"], Json::array({"string", "null"}));
    EXPECT_FALSE(p["a"].contains("nullable"));
    EXPECT_EQ(p["b"]["enum"], Json::array({"x", "y", nullptr}));
    EXPECT_EQ(p["c"]["anyOf"][1], Json({{"type", "null"}}));
    EXPECT_EQ(p["d"], Json({{"type", "string"}}));
    EXPECT_EQ(p["nullable"], Json({{"type", "integer"}}));
    EXPECT_EQ(p["e"]["exclusiveMinimum"], 0);
    EXPECT_FALSE(p["e"].contains("minimum"));
    EXPECT_EQ(p["f"], Json({{"type", "string"}, {"examples", Json::array({"hi"})}}));
}

TEST(OpenApiSchema, A31SchemaIsLeftAsItIs) {
    Json schema = {{"type", Json::array({"string", "null"})}, {"exclusiveMinimum", 3}, {"nullable", true}};
    EXPECT_EQ(to_json_schema(schema, false), schema);
    EXPECT_TRUE(is_object_schema({{"type", "object"}}));
    EXPECT_FALSE(is_object_schema({{"type", "array"}}));
    EXPECT_FALSE(is_object_schema({{"properties", Json::object()}}));
}

}  // namespace

namespace {

TEST(OpenApiDocument, APathItemInAnotherFileWithRefsOfItsOwn) {
    DocumentFolder folder;
    folder.write("paths.yaml", R"(pets:
  get:
    operationId: listPets
    parameters: [{$ref: '#/parameters/Limit'}]
    responses:
      '200': {description: ok, content: {application/json: {schema: {$ref: 'schemas/pet.yaml'}}}}
parameters:
  Limit: {name: limit, in: query, schema: {type: integer, maximum: 50}}
)");
    std::filesystem::create_directories(folder.path() / "schemas");
    folder.write("schemas/pet.yaml",
                 "type: object\nproperties:\n  name: {type: string}\n  owner: {$ref: 'owner.yaml'}\n");
    folder.write("schemas/owner.yaml", "type: object\nproperties:\n  email: {type: string}\n");
    auto docs = load_file_document(folder.write("api.yaml", R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /pets: {$ref: 'paths.yaml#/pets'}
)"));
    auto list = read_operations(docs, {}, "");
    ASSERT_EQ(list.operations.size(), 1u) << (list.warnings.empty() ? "" : list.warnings[0]);
    const Operation& op = list.operations[0];
    EXPECT_EQ(op.input_schema["properties"]["limit"]["maximum"], 50);
    EXPECT_EQ(op.output_schema["properties"]["owner"]["properties"]["email"]["type"], "string");
}

TEST(OpenApiDocument, ARefOutOfTheDocumentsFolderIsRefusedAndNothingOfItIsRead) {
    // secret.json sits beside the document's folder; refs climb to it with "..", with
    // "%2e%2e" and through a symbolic link in the folder. Each costs its operation (a
    // warning naming the ref's file from the folder, not the absolute path), and nothing
    // of the file reaches the tools. A ref from a subfolder back up into the folder stays
    // allowed.
    DocumentFolder outer;
    outer.write("secret.json", R"({"type": "object", "description": "TOP-SECRET-CONTENT"})");
    std::filesystem::create_directories(outer.path() / "api" / "schemas");
    std::filesystem::create_symlink(outer.path() / "secret.json", outer.path() / "api" / "link.json");
    std::filesystem::create_directory_symlink(outer.path(), outer.path() / "api" / "up");
    outer.write("api/common.yaml", "Thing: {type: object, description: inside}\n");
    outer.write("api/schemas/thing.yaml", "$ref: '../common.yaml#/Thing'\n");
    const std::string document = outer.write("api/api.yaml", R"(openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /dots:
    get:
      operationId: dots
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '../secret.json'}}}}}
  /encoded:
    get:
      operationId: encoded
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: '%2e%2e/secret.json'}}}}}
  /deeper:
    get:
      operationId: deeper
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: 'schemas/../../secret.json'}}}}}
  /symlink:
    get:
      operationId: symlink
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: 'link.json'}}}}}
  /folder-link:
    get:
      operationId: folderLink
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: 'up/secret.json'}}}}}
  /fine:
    get:
      operationId: fine
      responses: {'200': {description: ok, content: {application/json: {schema: {$ref: 'schemas/thing.yaml'}}}}}
)");
    auto list = read_operations(load_file_document(document), {}, "");
    ASSERT_EQ(list.operations.size(), 1u);
    EXPECT_EQ(list.operations[0].tool_name, "fine");
    EXPECT_EQ(list.operations[0].output_schema["description"], "inside");
    ASSERT_EQ(list.warnings.size(), 5u);
    std::string all;
    for (const auto& w : list.warnings) all += w + "\n";
    EXPECT_EQ(all.find("TOP-SECRET"), std::string::npos) << all;
    EXPECT_EQ(all.find(outer.path().string()), std::string::npos) << "no absolute path in messages: " << all;
    for (const char* op : {"/dots", "/encoded", "/deeper"}) {
        EXPECT_NE(all.find(std::string("GET ") + op + " left out: \"../secret.json\" is outside the document's folder"),
                  std::string::npos)
            << op << ": " << all;
    }
    EXPECT_NE(all.find("GET /symlink left out: \"link.json\" is a symbolic link out of the document's folder; refused"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("GET /folder-link left out: \"up/secret.json\" is a symbolic link out of the document's folder"),
              std::string::npos)
        << all;
}

TEST(OpenApiDocument, FileInsideFolderChecksThePathThenWhereItReallyIs) {
    DocumentFolder folder;
    folder.write("a.yaml", "x: 1\n");
    const std::string home = folder.path().string();
    EXPECT_EQ(file_inside_folder(home + "/a.yaml", home), std::filesystem::canonical(folder.path() / "a.yaml").string());
    EXPECT_THROW(file_inside_folder(home + "/../a.yaml", home), DocumentError);
    EXPECT_THROW(file_inside_folder(home, home), DocumentError);
    EXPECT_THROW(file_inside_folder(home + "/absent.yaml", home), DocumentError);
    std::filesystem::create_directory(folder.path() / "sub");
    EXPECT_THROW(file_inside_folder(home + "/sub", home), DocumentError) << "not a regular file";
    std::filesystem::create_symlink("/etc/hostname", folder.path() / "out.yaml");
    EXPECT_THROW(file_inside_folder(home + "/out.yaml", home), DocumentError);
}

}  // namespace
