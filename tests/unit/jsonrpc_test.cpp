#include <gtest/gtest.h>

#include "protocol/jsonrpc.hpp"
#include "util/json.hpp"

using namespace toolport::protocol;
using toolport::Json;

TEST(JsonRpc, ParsesRequestAndKeepsIdType) {
    auto p = parse_payload(R"({"jsonrpc":"2.0","id":"abc","method":"ping"})");
    ASSERT_FALSE(p.fatal);
    ASSERT_EQ(p.items.size(), 1u);
    const auto& r = std::get<Request>(std::get<Message>(p.items[0]));
    EXPECT_EQ(r.id, Json("abc"));
    EXPECT_EQ(r.method, "ping");
}

TEST(JsonRpc, NumberOutOfRangeIsAParseErrorNotACrash) {
    for (const char* input : {"1e999", R"({"jsonrpc":"2.0","id":1e999,"method":"ping"})", "-1e99999"}) {
        auto p = parse_payload(input);
        ASSERT_TRUE(p.fatal) << input;
        EXPECT_EQ(p.fatal->code, error_code::kParseError) << input;
    }
}
