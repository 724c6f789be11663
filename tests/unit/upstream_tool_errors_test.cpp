// gateway::label_upstream_error: an upstream's error result without a code gets one, with a
// suggestion, and nothing else changes.
#include <gtest/gtest.h>

#include "providers/gateway/upstream_tool_errors.hpp"
#include "server/error_result_guard.hpp"

using namespace toolport;
using gateway::label_upstream_error;

namespace {

ToolResult error_with(const std::string& text) {
    ToolResult r = ToolResult::error(text);
    return r;
}

TEST(UpstreamToolErrors, AnErrorWithoutACodeGetsOneAndASuggestionNamingTheMissingCapability) {
    ToolResult r = error_with(
        "MCP error -32601: the client of this call does not support sampling/createMessage (it did not declare the "
        "sampling capability)");
    ASSERT_TRUE(label_upstream_error(r, "everything", "trigger-sampling-request"));
    ASSERT_EQ(r.content.size(), 2u);
    EXPECT_EQ(r.content[0]["text"].get<std::string>().rfind("MCP error -32601", 0), 0u)
        << "the upstream's text stays first";
    const std::string added = r.content[1]["text"];
    EXPECT_EQ(added.rfind(
                  "UPSTREAM_TOOL_ERROR: upstream everything reported a failure of its tool trigger-sampling-request", 0),
              0u)
        << added;
    EXPECT_NE(added.find("Suggestion:"), std::string::npos);
    EXPECT_NE(added.find("declares the sampling capability"), std::string::npos) << added;
    EXPECT_EQ(r.meta[kDroppedErrorMetaKey]["error_code"], "UPSTREAM_TOOL_ERROR");
    EXPECT_TRUE(r.meta[kDroppedErrorMetaKey]["error"].get<std::string>().find("-32601") != std::string::npos);
}

TEST(UpstreamToolErrors, AnErrorWithItsOwnCodeOrASuccessIsLeftAlone) {
    ToolResult coded = error_with("NOT_FOUND: no such city\nSuggestion: check the spelling");
    EXPECT_FALSE(label_upstream_error(coded, "weather", "forecast"));
    EXPECT_EQ(coded.content.size(), 1u);

    ToolResult structured = error_with("no such city");
    structured.structured_content = Json{{"error_code", "NOT_FOUND"}, {"error", "no such city"}};
    EXPECT_FALSE(label_upstream_error(structured, "weather", "forecast"));

    ToolResult ok = ToolResult::text("sunny");
    EXPECT_FALSE(label_upstream_error(ok, "weather", "forecast"));
    EXPECT_TRUE(ok.meta.is_null());
}

TEST(UpstreamToolErrors, AnyOtherUncodedErrorIsPointedBackAtTheUpstreamsMessage) {
    ToolResult r = error_with("division by zero");
    ASSERT_TRUE(label_upstream_error(r, "calc", "divide"));
    EXPECT_NE(r.content[1]["text"].get<std::string>().find("Read the message above from calc"), std::string::npos);
}

}  // namespace
