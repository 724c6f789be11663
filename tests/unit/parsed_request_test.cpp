#include "transports/parsed_request.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace toolport {
namespace {

std::vector<std::pair<std::string, std::string>> headers_of(const HttpRequestView& view) {
    std::vector<std::pair<std::string, std::string>> out;
    view.for_each_header([&](std::string_view n, std::string_view v) { out.emplace_back(n, v); });
    return out;
}

TEST(ParsedRequest, FindsTheFirstFieldOfANameIgnoringCase) {
    ParsedRequest r;
    r.add_field("Host", "localhost");
    r.add_field("MCP-Session-Id", "first");
    r.add_field("mcp-session-id", "second");
    r.add_field("Accept", "");
    ParsedRequestView view(r);
    EXPECT_EQ(view.header("mcp-session-id"), "first");
    EXPECT_EQ(view.header("Mcp-Session-Id"), "first");
    EXPECT_EQ(view.header("host"), "localhost");
    EXPECT_TRUE(view.has_header("accept"));  // present though empty
    EXPECT_EQ(view.header("accept"), "");
    EXPECT_FALSE(view.has_header("Origin"));
    EXPECT_FALSE(view.has_header("Hos"));  // a prefix is another name
    EXPECT_EQ(view.header("Origin"), "");
}

TEST(ParsedRequest, VisitsTheFieldsInTheOrderTheyCame) {
    ParsedRequest r;
    r.add_field("B", "2");
    r.add_field("a", "1");
    r.add_field("B", "3");
    const std::vector<std::pair<std::string, std::string>> expected{{"B", "2"}, {"a", "1"}, {"B", "3"}};
    EXPECT_EQ(headers_of(ParsedRequestView(r)), expected);
}

TEST(ParsedRequest, ClearForgetsTheLastRequestAndKeepsSmallBuffers) {
    ParsedRequest r;
    r.method = HttpMethod::post;
    r.target = "/mcp";
    r.version = 10;
    r.keep_alive = true;
    r.body = "{\"jsonrpc\":\"2.0\"}";
    r.add_field("Mcp-Session-Id", "abc");
    const auto body_capacity = r.body.capacity();
    r.clear();
    ParsedRequestView view(r);
    EXPECT_EQ(view.method(), HttpMethod::other);
    EXPECT_EQ(view.target(), "");
    EXPECT_EQ(view.version(), 11u);
    EXPECT_FALSE(view.keep_alive());
    EXPECT_EQ(view.body(), "");
    EXPECT_EQ(r.field_count(), 0u);
    EXPECT_FALSE(view.has_header("Mcp-Session-Id"));
    EXPECT_EQ(r.body.capacity(), body_capacity);  // the next request reuses it

    r.add_field("Origin", "http://localhost");
    EXPECT_EQ(view.header("origin"), "http://localhost");
}

TEST(ParsedRequest, ClearLetsLargeBuffersGo) {
    ParsedRequest r;
    r.body.assign(1 << 20, 'x');
    for (int i = 0; i < 200; ++i) r.add_field("X-Field-" + std::to_string(i), std::string(100, 'v'));
    r.clear();
    EXPECT_LT(r.body.capacity(), std::size_t{1} << 20);
    r.add_field("A", "b");  // still usable
    EXPECT_EQ(r.find("a").value_or("none"), "b");
}

TEST(ParsedRequest, RefusesFieldsPastItsLimit) {
    ParsedRequest r(20);                            // bytes of names and values
    EXPECT_TRUE(r.add_field("Host", "localhost"));  // 13
    EXPECT_FALSE(r.add_field("Accept", "*/*"));     // 22 in all: refused whole
    EXPECT_EQ(r.field_count(), 1u);
    EXPECT_TRUE(r.add_field("A", "123456"));  // 20: at the limit
    EXPECT_FALSE(r.add_field("B", ""));
    r.clear();
    EXPECT_TRUE(r.add_field("Accept", "*/*"));  // room again for the next request
}

}  // namespace
}  // namespace toolport
