#include <gtest/gtest.h>

#include "protocol/jsonrpc.hpp"

using namespace toolport::protocol;

TEST(JsonRpc, ParsesRequestAndKeepsIdType) {
    auto p = parse_payload(R"({"jsonrpc":"2.0","id":"abc","method":"ping"})");
    ASSERT_FALSE(p.fatal);
    ASSERT_EQ(p.items.size(), 1u);
    const auto& r = std::get<Request>(std::get<Message>(p.items[0]));
    EXPECT_EQ(r.id, Json("abc"));
    EXPECT_EQ(r.method, "ping");
}
