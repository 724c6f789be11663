// The URIs under which the gateway serves its upstreams' skills (skill_uris.hpp): a prefix
// that keeps a skill URI a skill URI, and moving an entry's URIs without touching anything else.
#include <gtest/gtest.h>

#include "providers/gateway/skill_uris.hpp"

namespace toolport::gateway {
namespace {

TEST(GatewaySkillUris, RootsAreTheSkillMdUrisWithoutTheFileName) {
    EXPECT_EQ(skill_root("skill://database/rls-policy/SKILL.md"), "skill://database/rls-policy");
    EXPECT_EQ(skill_root("skill://git-workflow/SKILL.md"), "skill://git-workflow");
    EXPECT_EQ(skill_root("github://o/r/skills/refunds/SKILL.md"), "github://o/r/skills/refunds");
    for (const char* not_one : {"skill://SKILL.md", "skill:///SKILL.md", "skill://a/skill.md", "SKILL.md",
                                "skill://a/README.md", "skill://a//SKILL.md", ""}) {
        EXPECT_FALSE(skill_root(not_one)) << not_one;
    }
    EXPECT_EQ(skill_root_name("skill://acme/billing/refunds"), "refunds");
}

TEST(GatewaySkillUris, APrefixIsAFirstSegmentSoTheNameStaysLast) {
    EXPECT_EQ(namespaced_skill_root("beta", "skill://database/rls-policy"), "skill://beta/database/rls-policy");
    EXPECT_EQ(namespaced_skill_root("beta", "skill://git-workflow"), "skill://beta/git-workflow");
    EXPECT_EQ(skill_root_name(namespaced_skill_root("beta", "skill://git-workflow")), "git-workflow");
    // Another scheme: as the gateway's other resources.
    EXPECT_EQ(namespaced_skill_root("beta", "github://o/r/refunds"), "beta+github://o/r/refunds");
}

TEST(GatewaySkillUris, RebasingMovesOnlyWhatLiesUnderTheRoot) {
    const std::string from = "skill://database/rls", to = "skill://beta/database/rls";
    EXPECT_EQ(rebase_uri("skill://database/rls", from, to), to);
    EXPECT_EQ(rebase_uri("skill://database/rls/scripts/x.py", from, to), "skill://beta/database/rls/scripts/x.py");
    EXPECT_FALSE(rebase_uri("skill://database/rls-other/SKILL.md", from, to));
    EXPECT_FALSE(rebase_uri("skill://database", from, to));

    const Json entry = {{"uri", "skill://database/rls/SKILL.md"},
                        {"frontmatter", {{"name", "rls"}, {"description", "d"}, {"metadata", {{"uri", "keep"}}}}},
                        {"resources",
                         {{{"uri", "skill://database/rls/SKILL.md"}, {"digest", "sha256:aa"}, {"size", 10}},
                          {{"uri", "skill://database/rls/scripts/x.py"}, {"digest", "sha256:bb"}, {"size", 3}},
                          {{"uri", "skill://elsewhere/x"}, {"digest", "sha256:cc"}, {"size", 1}}}}};
    const Json moved = rebase_skill_entry(entry, from, to);
    EXPECT_EQ(moved["uri"], "skill://beta/database/rls/SKILL.md");
    EXPECT_EQ(moved["frontmatter"], entry["frontmatter"]);
    EXPECT_EQ(moved["resources"][0],
              Json({{"uri", "skill://beta/database/rls/SKILL.md"}, {"digest", "sha256:aa"}, {"size", 10}}));
    EXPECT_EQ(moved["resources"][1]["uri"], "skill://beta/database/rls/scripts/x.py");
    EXPECT_EQ(moved["resources"][1]["digest"], "sha256:bb");
    EXPECT_EQ(moved["resources"][2], entry["resources"][2]);  // not the skill's: left as it is
    EXPECT_EQ(rebase_skill_entry(entry, from, from), entry);
    EXPECT_EQ(rebase_skill_entry(Json("dynamic"), from, to), Json("dynamic"));
}

}  // namespace
}  // namespace toolport::gateway
