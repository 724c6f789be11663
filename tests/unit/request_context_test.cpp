// RequestContext::meta(): the request's params._meta, found once when the context is made.
#include <gtest/gtest.h>

#include "server/request_context.hpp"

namespace toolport {
namespace {

// No session: meta(), params() and wants_progress() need none.
TEST(RequestContextMeta, IsTheParamsMetaObject) {
    RequestContext ctx(nullptr, protocol::RequestId(1), "tools/call",
                       {{"name", "t"}, {"arguments", Json::object()}, {"_meta", {{"progressToken", 7}}}},
                       protocol::Revision::v2025_11_25);
    ASSERT_NE(ctx.meta(), nullptr);
    EXPECT_EQ(ctx.meta(), &ctx.params()["_meta"]);
    EXPECT_EQ((*ctx.meta())["progressToken"], 7);
    EXPECT_TRUE(ctx.wants_progress());
}

TEST(RequestContextMeta, IsNullWithoutAnObject) {
    for (Json params : {Json(), Json::object(), Json{{"name", "t"}}, Json{{"_meta", "not an object"}},
                        Json{{"_meta", Json::array()}}, Json{{"_meta", nullptr}}}) {
        RequestContext ctx(nullptr, protocol::RequestId(1), "tools/call", params, protocol::Revision::v2025_11_25);
        EXPECT_EQ(ctx.meta(), nullptr) << params.dump();
        EXPECT_FALSE(ctx.wants_progress()) << params.dump();
    }
}

}  // namespace
}  // namespace toolport
