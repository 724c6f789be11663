// util::release_json: a document emptied bottom-up, freed without nlohmann's heap stack, and
// as safely as by nlohmann at any depth.
#include "util/json_release.hpp"

#include <string>

#include <gtest/gtest.h>

namespace toolport::util {
namespace {

TEST(JsonRelease, EmptiesContainersAndLeavesScalars) {
    Json reply = Json::parse(
        R"({"id":1,"jsonrpc":"2.0","result":{"_meta":{"a":1,"b":"x"},"content":[{"text":"t","type":"text"}]}})");
    release_json(reply);
    EXPECT_TRUE(reply.is_object());
    EXPECT_TRUE(reply.empty());

    Json list = Json::array({1, Json::array({2, 3}), Json::object({{"k", "v"}})});
    release_json(list);
    EXPECT_TRUE(list.is_array());
    EXPECT_TRUE(list.empty());

    Json text = "kept";
    release_json(text);
    EXPECT_EQ(text, "kept");
    Json nothing;
    release_json(nothing);
    EXPECT_TRUE(nothing.is_null());
}

// Far deeper than kReleaseDepth: the part below is left to nlohmann's destructor, which
// does not recurse (no stack overflow, nothing leaked under ASan).
TEST(JsonRelease, ADeepDocumentIsFreedSafely) {
    const int depth = 100000;
    const std::string text = std::string(depth, '[') + std::string(depth, ']');
    Json deep = Json::parse(text);
    release_json(deep);
    EXPECT_TRUE(deep.is_array());
    EXPECT_TRUE(deep.empty());

    Json objects = Json::object();
    Json* at = &objects;
    for (int i = 0; i < 1000; ++i) at = &((*at)["k"] = Json::object());
    release_json(objects);
    EXPECT_TRUE(objects.empty());
}

}  // namespace
}  // namespace toolport::util
