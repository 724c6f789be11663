// MCP protocol revisions: parsing, names and the per-revision predicates.
#include <gtest/gtest.h>

#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"

using namespace toolport::protocol;

namespace {
constexpr Revision kAll[] = {Revision::v2024_11_05, Revision::v2025_03_26, Revision::v2025_06_18, Revision::v2025_11_25,
                             Revision::v2026_07_28};
}

TEST(Versions, ParseEveryName) {
    EXPECT_EQ(parse_revision("2024-11-05"), Revision::v2024_11_05);
    EXPECT_EQ(parse_revision("2025-03-26"), Revision::v2025_03_26);
    EXPECT_EQ(parse_revision("2025-06-18"), Revision::v2025_06_18);
    EXPECT_EQ(parse_revision("2025-11-25"), Revision::v2025_11_25);
    EXPECT_EQ(parse_revision("2026-07-28"), Revision::v2026_07_28);
}

TEST(Versions, ParseGarbage) {
    for (std::string_view text : {"", "2025-03-25", "2025-3-26", " 2025-03-26", "2025-03-26 ", "2025-03-26\n", "latest",
                                  "2024-11-05x", "2027-01-01", "2025/03/26"}) {
        EXPECT_FALSE(parse_revision(text).has_value()) << '"' << text << '"';
    }
}

TEST(Versions, NameRoundTrips) {
    EXPECT_EQ(name(Revision::v2024_11_05), "2024-11-05");
    EXPECT_EQ(name(Revision::v2026_07_28), "2026-07-28");
    for (auto r : kAll) EXPECT_EQ(parse_revision(name(r)), r) << name(r);
}

TEST(Versions, SupportedListNamesAllInOrder) {
    EXPECT_EQ(supported_revisions_list(), "2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28");
}

TEST(Versions, Constants) {
    EXPECT_EQ(kLatestStateful, Revision::v2025_11_25);
    EXPECT_EQ(kLatest, Revision::v2026_07_28);
}

TEST(Versions, AllowsBatchesOnlyIn20250326) {
    for (auto r : kAll) EXPECT_EQ(allows_batches(r), r == Revision::v2025_03_26) << name(r);
}

TEST(Versions, IsStatelessOnlyIn20260728) {
    for (auto r : kAll) EXPECT_EQ(is_stateless(r), r == Revision::v2026_07_28) << name(r);
    for (auto r : kAll) EXPECT_EQ(has_server_requests(r), r != Revision::v2026_07_28) << name(r);
}

TEST(Versions, FeaturePredicates) {
    EXPECT_FALSE(has_structured_output(Revision::v2025_03_26));
    EXPECT_TRUE(has_structured_output(Revision::v2025_06_18));
    EXPECT_FALSE(has_elicitation(Revision::v2025_03_26));
    EXPECT_TRUE(has_elicitation(Revision::v2025_06_18));
    EXPECT_FALSE(has_icons(Revision::v2025_06_18));
    EXPECT_TRUE(has_icons(Revision::v2025_11_25));
    EXPECT_FALSE(has_audio(Revision::v2024_11_05));
    EXPECT_TRUE(has_audio(Revision::v2025_03_26));
    EXPECT_FALSE(has_annotations(Revision::v2024_11_05));
    EXPECT_TRUE(has_annotations(Revision::v2025_03_26));
    EXPECT_FALSE(has_completions(Revision::v2024_11_05));
    EXPECT_TRUE(has_completions(Revision::v2025_03_26));
    EXPECT_FALSE(has_titles(Revision::v2025_03_26));
    EXPECT_TRUE(has_titles(Revision::v2025_06_18));
    EXPECT_FALSE(has_resource_links(Revision::v2025_03_26));
    EXPECT_TRUE(has_resource_links(Revision::v2025_06_18));
}

TEST(Versions, ResourceNotFoundCode) {
    EXPECT_EQ(resource_not_found_code(Revision::v2024_11_05), -32002);
    EXPECT_EQ(resource_not_found_code(Revision::v2025_03_26), -32002);
    EXPECT_EQ(resource_not_found_code(Revision::v2025_06_18), -32002);
    EXPECT_EQ(resource_not_found_code(Revision::v2025_11_25), -32002);
    EXPECT_EQ(resource_not_found_code(Revision::v2026_07_28), -32602);
    EXPECT_EQ(error_code::kResourceNotFound, -32002);
    EXPECT_EQ(error_code::kInvalidParams, -32602);
}
