// A document in the shape of the public Petstore 3.0 example (written for these tests,
// tests/fixtures/openapi/petstore_shape.json): JSON, local refs only, a query parameter,
// an array response and a body.
#include <gtest/gtest.h>

#include "openapi_test_support.hpp"
#include "providers/openapi/request_builder.hpp"

using namespace toolport;
using namespace toolport::openapi;
using namespace toolport::openapi::test;

namespace {

TEST(OpenApiPetstore, ParsesTheClassicShape) {
    auto docs = load_file_document((fixture_dir() / "petstore_shape.json").string());
    EXPECT_EQ(docs.version(), "3.0");
    EXPECT_EQ(server_url(docs, ""), "http://petstore.example.test/v1");
    auto list = read_operations(docs, {}, "");
    EXPECT_TRUE(list.warnings.empty());
    ASSERT_EQ(list.operations.size(), 3u);
    // JSON documents keep their order too.
    EXPECT_EQ(list.operations[0].tool_name, "listPets");
    EXPECT_EQ(list.operations[1].tool_name, "createPets");
    EXPECT_EQ(list.operations[2].tool_name, "showPetById");

    const Operation& list_pets = list.operations[0];
    EXPECT_EQ(list_pets.input_schema["properties"]["limit"]["maximum"], 100);
    EXPECT_TRUE(list_pets.output_schema.is_null());  // Pets is an array
    EXPECT_EQ(list_pets.annotations.read_only, true);

    const Operation& create = list.operations[1];
    EXPECT_EQ(create.body.layout, BodyLayout::merged);
    EXPECT_EQ(create.input_schema["required"], Json({"id", "name"}));
    EXPECT_EQ(create.input_schema["properties"]["id"]["format"], "int64");
    EXPECT_TRUE(create.output_schema.is_null());  // 201 without content

    const Operation& show = list.operations[2];
    EXPECT_EQ(show.input_schema["required"], Json({"petId"}));
    EXPECT_EQ(show.output_schema["required"], Json({"id", "name"}));
    EXPECT_TRUE(show.security.empty());

    auto built = build_request(show, {{"petId", "42"}}, server_url(docs, ""), {},
                               [](const std::string&) { return std::optional<std::string>(); });
    EXPECT_EQ(built.request.url, "http://petstore.example.test/v1/pets/42");
}

}  // namespace
