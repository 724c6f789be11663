// "Did you mean": the closest of a set of names, for typos only.
#include <gtest/gtest.h>

#include "util/closest_name.hpp"

using namespace toolport::util;

namespace {

TEST(ClosestName, CountsEditsAndSwapsWithoutCase) {
    EXPECT_EQ(edit_distance("comand", "command"), 1u);
    EXPECT_EQ(edit_distance("comamnd", "command"), 1u);  // two neighbours swapped
    EXPECT_EQ(edit_distance("Listen", "listen"), 0u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(ClosestName, SuggestsOnlyLikelyTypos) {
    const std::vector<std::string> keys = {"command", "args", "env", "url"};
    EXPECT_EQ(closest_name("comand", keys), "command");
    EXPECT_EQ(closest_name("arg", keys), "args");
    EXPECT_EQ(closest_name("headers", keys), std::nullopt);
    EXPECT_EQ(closest_name("x", keys), std::nullopt);  // one letter from "env"? too short to guess
    EXPECT_EQ(did_you_mean("urll", keys), " (did you mean \"url\"?)");
    EXPECT_EQ(did_you_mean("zzzz", keys), "");
}

}  // namespace
