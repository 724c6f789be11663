#include <gtest/gtest.h>

#include "server/tool_error.hpp"

using namespace toolport;
using namespace std::chrono_literals;

TEST(ToolError, CarriesEveryFieldInStructuredContentAndText) {
    auto e = ToolError(ToolErrorCode::missing_parameter, "uei is required")
                 .parameter("uei")
                 .provided(nullptr)
                 .expected("12 alphanumeric characters")
                 .example("ZQGGHJH74DW7")
                 .suggest("Search by vendor name first");
    ToolResult r = e.to_result();
    EXPECT_TRUE(r.is_error);
    const Json& s = r.structured_content;
    EXPECT_EQ(s["error"], "uei is required");
    EXPECT_EQ(s["error_code"], "MISSING_PARAMETER");
    EXPECT_EQ(s["parameter"], "uei");
    EXPECT_FALSE(s.contains("provided"));  // null means "not given"
    EXPECT_EQ(s["expected_format"], "12 alphanumeric characters");
    EXPECT_EQ(s["example"], "ZQGGHJH74DW7");
    EXPECT_EQ(s["suggestion"], "Search by vendor name first");
    EXPECT_EQ(s["recoverable"], true);
    EXPECT_EQ(s["transient"], false);
    EXPECT_FALSE(s.contains("retry_after_ms"));
    const std::string text = r.content[0]["text"];
    EXPECT_EQ(text.rfind("MISSING_PARAMETER: uei is required", 0), 0u) << text;
    EXPECT_NE(text.find("Parameter: uei"), std::string::npos);
    EXPECT_NE(text.find("Example: \"ZQGGHJH74DW7\""), std::string::npos);
}

TEST(ToolError, CodesHaveTheirNamesAndDefaults) {
    EXPECT_EQ(code_name(ToolErrorCode::budget_exceeded), "MCP_BUDGET_EXCEEDED");
    EXPECT_EQ(code_name(ToolErrorCode::response_too_large), "MCP_RESPONSE_TOO_LARGE");
    EXPECT_EQ(code_name(ToolErrorCode::server_unhealthy), "SERVER_UNHEALTHY");
    auto limited = ToolError(ToolErrorCode::rate_limited, "slow down").retry_after(1500ms).to_json();
    EXPECT_EQ(limited["transient"], true);
    EXPECT_EQ(limited["retry_after_ms"], 1500);
    EXPECT_FALSE(limited["suggestion"].get<std::string>().empty());
    auto internal = ToolError(ToolErrorCode::internal_error, "bug").to_json();
    EXPECT_EQ(internal["recoverable"], false);
    EXPECT_EQ(ToolError(ToolErrorCode::timeout, "t").recoverable(false).to_json()["recoverable"], false);
}

TEST(ToolError, MessagesAreSanitized) {
    auto j = ToolError(ToolErrorCode::upstream_error, "failed reading /home/bob/.config/key\nline2").to_json();
    const std::string msg = j["error"];
    EXPECT_EQ(msg.find("/home/bob"), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}
