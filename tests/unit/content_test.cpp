// ToolResult's serializations agree with each other: to_json() (copy or move), dump(), and
// the pipeline's result_size() of the same result.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pipeline/result_size.hpp"
#include "server/content.hpp"

using namespace toolport;

namespace {

std::vector<ToolResult> shapes() {
    std::vector<ToolResult> all;
    all.push_back(ToolResult{});  // empty content
    all.push_back(ToolResult::text("hello \"world\"\n"));
    all.push_back(ToolResult::error("it failed"));
    all.push_back(ToolResult::structured(Json{{"b", 1}, {"a", {1.5, "x", nullptr}}}));
    ToolResult with_meta = ToolResult::structured(Json{{"key", "k"}});
    with_meta.meta = {{"downstream_api_calls", 3}, {"cache_status", "miss"}};
    with_meta.is_error = true;
    all.push_back(with_meta);
    ToolResult invalid_utf8 = ToolResult::text(std::string("bad \xff\xfe bytes"));
    invalid_utf8.add(content::image("aGVsbG8=", "image/png"));
    all.push_back(invalid_utf8);
    return all;
}

std::string compact(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

TEST(ToolResult, DumpIsTheTextOfToJson) {
    for (const auto& r : shapes()) EXPECT_EQ(r.dump(), compact(r.to_json()));
}

TEST(ToolResult, MovingToJsonGivesTheSameObject) {
    for (auto r : shapes()) {
        const Json copied = r.to_json();
        EXPECT_EQ(std::move(r).to_json(), copied);
    }
}

TEST(ToolResult, TheUpperBoundIsNeverBelowTheSize) {
    auto all = shapes();
    ToolResult escapes = ToolResult::structured(Json{{std::string("k\x01\"\\", 4), std::string(100, '\x02')},
                                                     {"n", -1.7976931348623157e308},
                                                     {"i", INT64_MIN},
                                                     {"u", UINT64_MAX},
                                                     {"bytes", Json::binary({1, 2, 255}, 7)},
                                                     {"utf8", "日本語 😀"},
                                                     {"empty", Json::array()}});
    escapes.meta = {{"nested", {{"a", {nullptr, true, false, 0}}}}};
    all.push_back(escapes);
    all.push_back(ToolResult::text(std::string(5000, '"')));
    for (const auto& r : all) {
        EXPECT_GE(pipeline::result_size_upper_bound(r), pipeline::result_size(r)) << r.dump();
    }
    const auto plain = ToolResult::text(std::string(1000, 'a'));
    EXPECT_LE(pipeline::result_size_upper_bound(plain), 7 * pipeline::result_size(plain));
}

TEST(ToolResult, ResultSizeIsTheLengthOfTheDump) {
    for (const auto& r : shapes()) EXPECT_EQ(pipeline::result_size(r), r.dump().size()) << r.dump();
    for (const auto& r : shapes()) EXPECT_EQ(pipeline::serialized_size(r.content), compact(r.content).size());
}
