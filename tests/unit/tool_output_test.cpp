// How `toolport list` and `toolport call` render tools and results for people.
#include <gtest/gtest.h>

#include "client/tool_output.hpp"
#include "util/json.hpp"

using namespace toolport::client;
using toolport::Json;

namespace {

TEST(ToolOutput, ToolListHasOneLinePerToolAndACount) {
    std::vector<Json> tools = {
        {{"name", "alpha"}, {"description", "First line\nsecond line"}},
        {{"name", "b"}, {"description", "Tab\there and \x1b[31mred"}},
        {{"name", "no_description"}},
    };
    EXPECT_EQ(render_tool_list(tools),
              "alpha           First line\n"
              "b               Tab here and  [31mred\n"
              "no_description\n"
              "3 tools\n");
    EXPECT_EQ(render_tool_list({}), "0 tools\n");
    EXPECT_EQ(render_tool_list({Json{{"name", "x"}}}), "x\n1 tool\n");
}

TEST(ToolOutput, ToolListShowsParametersOptionalOnesMarked) {
    Json search = {{"name", "search"},
                   {"description", "Find things"},
                   {"inputSchema",
                    {{"type", "object"},
                     {"properties",
                      {{"limit", {{"type", "integer"}}}, {"query", {{"type", "string"}}}, {"agency", Json::object()}}},
                     {"required", {"query"}}}}};
    EXPECT_EQ(tool_signature(search), "search(query, agency?, limit?)");
    EXPECT_EQ(tool_signature({{"name", "ping"}, {"inputSchema", {{"type", "object"}}}}), "ping");
    EXPECT_EQ(tool_signature({{"name", "odd"}, {"inputSchema", {{"properties", 3}}}}), "odd");
    EXPECT_EQ(render_tool_list({search}), "search(query, agency?, limit?)  Find things\n1 tool\n");
}

TEST(ToolOutput, StructuredContentRepeatedAsTextIsPrintedOnce) {
    Json structured = {{"data", {1, 2}}, {"success", true}};
    Json result = {{"content", {{{"type", "text"}, {"text", structured.dump()}}}}, {"structuredContent", structured}};
    EXPECT_EQ(render_call_result("t", result).text, structured.dump(2) + "\n");
    // An error whose text is its structuredContent: the header, then the JSON once.
    result["isError"] = true;
    EXPECT_EQ(render_call_result("t", result).text, "tool t failed:\n" + structured.dump(2) + "\n");
}

TEST(ToolOutput, ContentBlocksAreTextOrSummaries) {
    EXPECT_EQ(render_content_block({{"type", "text"}, {"text", "hello"}}), "hello");
    EXPECT_EQ(render_content_block({{"type", "image"}, {"data", "AAECAw=="}, {"mimeType", "image/png"}}),
              "[image image/png, 4 bytes]");
    EXPECT_EQ(render_content_block({{"type", "audio"}, {"data", "!!"}, {"mimeType", "audio/wav"}}),
              "[audio audio/wav, invalid base64]");
    EXPECT_EQ(render_content_block({{"type", "resource"},
                                    {"resource", {{"uri", "test://r"}, {"mimeType", "text/plain"}, {"text", "abc"}}}}),
              "[resource test://r text/plain, 3 bytes of text]");
    EXPECT_EQ(render_content_block({{"type", "resource"}, {"resource", {{"uri", "test://b"}, {"blob", "AAA="}}}}),
              "[resource test://b, 2 bytes]");
    EXPECT_EQ(render_content_block({{"type", "resource_link"}, {"uri", "file:///x"}, {"name", "x"}}),
              "[resource link file:///x \"x\"]");
    EXPECT_EQ(render_content_block({{"type", "hologram"}}), "[hologram content]");
    EXPECT_EQ(render_content_block(Json(5)), "[malformed content block]");
}

TEST(ToolOutput, CallResultPrintsBlocksThenStructuredContent) {
    Json result = {{"content", {{{"type", "text"}, {"text", "sum is 3"}}}}, {"structuredContent", {{"sum", 3}}}};
    auto rendered = render_call_result("add", result);
    EXPECT_FALSE(rendered.is_error);
    EXPECT_EQ(rendered.text, "sum is 3\n{\n  \"sum\": 3\n}\n");
}

TEST(ToolOutput, ErrorResultsNameTheToolAndTheCode) {
    Json result = {{"isError", true},
                   {"content", {{{"type", "text"}, {"text", "NOT_FOUND: no such vendor"}}}},
                   {"structuredContent", {{"error_code", "NOT_FOUND"}, {"error", "no such vendor"}}}};
    auto rendered = render_call_result("lookup", result);
    EXPECT_TRUE(rendered.is_error);
    EXPECT_EQ(rendered.text, "tool lookup failed [NOT_FOUND]:\nNOT_FOUND: no such vendor\n");

    auto plain = render_call_result("t", {{"isError", true}, {"content", {{{"type", "text"}, {"text", "bad\n"}}}}});
    EXPECT_EQ(plain.text, "tool t failed:\nbad\n");
}

TEST(ToolOutput, OddResultsDoNotThrow) {
    EXPECT_NO_THROW(render_call_result("t", {{"isError", "yes"}, {"content", "nope"}}));
    EXPECT_FALSE(render_call_result("t", {{"isError", "yes"}}).is_error);
    EXPECT_NO_THROW(render_call_result("t", Json::array()));
}

}  // namespace
