// The context pack's pattern library and search index: SKILL.md quality and description
// in both formats, the three-file convention in both layouts, BM25-ranked search with
// quality breaking ties, an index kept current by inotify (a file added while serving is
// found by the next search) and rebuilt at start only for what changed; searchPatterns
// and loadSkill with their documented error codes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "context_test_support.hpp"
#include "providers/context/patterns/library.hpp"
#include "providers/context/patterns/search_index.hpp"

using namespace toolport;
using namespace toolport::context;
using namespace toolport::test_support;

namespace {

std::string skill_md(const std::string& title, double quality, const std::string& overview) {
    return fmt::format(
        "# Skill: {}\n**Category:** database\n**Quality Score:** {}/10\n\n## Overview\n\n{}\n\n## Quality "
        "Breakdown\n| Criterion | Score |\n",
        title, quality, overview);
}

// A library of a few patterns in both layouts, plus things that are not patterns.
void write_library(const ScratchDir& dir) {
    dir.write("library/database/rls-policy.md", "# RLS Policy\n\nRow level security policies for Postgres tenants.\n");
    dir.write("library/database/rls-policy-SKILL.md",
              skill_md("RLS Policy", 8.5, "Generates row level security policies."));
    dir.write("library/database/rls-policy.ts", "export function rlsPolicy() {}\n");
    dir.write("library/database/migrations.md",
              "# Migrations\n\nZero-downtime schema migrations; mentions policy once.\n");
    dir.write("library/database/migrations-SKILL.md", skill_md("Migrations", 9.0, "Safe migrations."));
    dir.write("library/security/secret-scan.md",
              "# Secret scan\n\n**Status:** draft\n\nFinds leaked credentials in diffs.\n");
    dir.write("library/security/secret-scan.py", "import json,sys\nprint(json.dumps({'ok': True}))\n");
    dir.write("library/patterns/testing/golden-files.md", "# Golden files\n\nSnapshot testing with golden files.\n");
    dir.write("library/database/.hidden.md", "# Hidden\n");
    dir.write("library/database/notes.txt", "not a pattern");
    dir.write("library/devops/ci-cache.md", "# CI cache\n\nNot a served category.\n");
    dir.write("elsewhere/leak.md", "# Leak\n\nOutside the library.\n");
    std::filesystem::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "library/ui");
}

TEST(ContextSkillMd, QualityAndDescriptionInBothFormats) {
    EXPECT_EQ(parse_quality("**Quality Score:** 8.5/10"), 8.5);
    EXPECT_EQ(parse_quality("## Quality Breakdown\n**Overall Score:** 7/10"), 7.0);
    EXPECT_FALSE(parse_quality("no score here"));
    EXPECT_EQ(parse_description(skill_md("X", 8, "The overview\nspans lines."), ""), "The overview spans lines.");
    EXPECT_EQ(parse_description("# Skill: X\n**Category:** ui\n\nFirst real line.\n", ""), "First real line.");
    EXPECT_EQ(parse_description("", "---\nname: x\n---\n# Doc\n\n" + std::string(300, 'a')), std::string(200, 'a'));
    EXPECT_EQ(parse_description("", ""), "No description available");
}

TEST(ContextLibrary, TheThreeFileConventionInBothLayoutsAndNothingOutsideTheLibrary) {
    ScratchDir dir;
    write_library(dir);
    PatternLibrary library(Root("pattern library", dir.path() / "library"), {"database", "security", "ui", "testing"});
    std::vector<std::string> ids;
    for (const auto& f : library.list()) ids.push_back(f.id());
    std::sort(ids.begin(), ids.end());
    EXPECT_EQ(ids, (std::vector<std::string>{"database/migrations", "database/rls-policy", "security/secret-scan",
                                             "testing/golden-files"}));
    auto rls = library.find("database", "rls-policy");
    ASSERT_TRUE(rls);
    EXPECT_EQ(rls->skill_file, "rls-policy-SKILL.md");
    EXPECT_EQ(rls->code_file, "rls-policy.ts");
    EXPECT_TRUE(rls->runnable_file.empty());
    auto scan = library.find("security", "secret-scan");
    EXPECT_EQ(scan->runnable_file, "secret-scan.py");
    EXPECT_FALSE(library.find("ui", "leak"));  // ui/ is a symlink out of the library
    EXPECT_EQ(library.unserved_dirs(), (std::vector<std::string>{"devops"}));
    PatternInfo info = library.read(*rls);
    EXPECT_EQ(info.quality, 8.5);
    EXPECT_EQ(info.description, "Generates row level security policies.");
}

TEST(ContextIndex, KeywordsBecomePrefixTermsOfAnyWord) {
    EXPECT_EQ(PatternIndex::fts_query("rls policy"), "\"rls\"* OR \"policy\"*");
    EXPECT_EQ(PatternIndex::fts_query("row-level \"sec\" OR"), "\"row\"* OR \"level\"* OR \"sec\"* OR \"OR\"*");
    EXPECT_EQ(PatternIndex::fts_query("!!! ..."), "");
}

class ContextIndexTest : public ::testing::Test {
protected:
    ContextIndexTest() {
        write_library(dir);
        library = std::make_unique<PatternLibrary>(Root("pattern library", dir.path() / "library"),
                                                   std::vector<std::string>{"database", "security", "ui", "testing"});
    }
    std::vector<std::string> ids(PatternIndex& index, PatternQuery q) {
        std::vector<std::string> out;
        for (const auto& h : index.search(q)) out.push_back(h.id);
        return out;
    }
    ScratchDir dir;
    std::unique_ptr<PatternLibrary> library;
};

TEST_F(ContextIndexTest, SearchIsRankedAndFiltered) {
    PatternIndex index(*library, dir.path() / "cache/index.sqlite");
    auto stats = index.sync();
    EXPECT_EQ(stats.patterns, 4u);
    EXPECT_EQ(stats.read, 4u);
    // A name match outranks a passing mention in another pattern's text.
    EXPECT_EQ(ids(index, {.keyword = "policy"}),
              (std::vector<std::string>{"database/rls-policy", "database/migrations"}));
    EXPECT_EQ(ids(index, {.keyword = "credentials"}), (std::vector<std::string>{"security/secret-scan"}));
    EXPECT_EQ(ids(index, {.keyword = "golden snapshot"}), (std::vector<std::string>{"testing/golden-files"}));
    EXPECT_EQ(ids(index, {.keyword = "polic"}).size(), 2u);  // prefixes match
    EXPECT_EQ(ids(index, {.keyword = "policy", .category = "security"}), std::vector<std::string>{});
    EXPECT_EQ(ids(index, {.executable_only = true}),
              (std::vector<std::string>{"database/rls-policy", "security/secret-scan"}));
    // No keyword: best quality first, then by name.
    EXPECT_EQ(ids(index, {.limit = 3}),
              (std::vector<std::string>{"database/migrations", "database/rls-policy", "testing/golden-files"}));
    auto hit = index.search({.keyword = "rls"}).at(0);
    EXPECT_EQ(hit.path, "database/rls-policy.md");
    EXPECT_EQ(hit.quality, 8.5);
    EXPECT_TRUE(hit.has_executable);
    EXPECT_TRUE(index.search({.keyword = "?!"}).empty());
}

TEST_F(ContextIndexTest, ChangesOnDiskAreFoundByTheNextSearch) {
    PatternIndex index(*library, dir.path() / "cache/index.sqlite");
    index.sync();
    ASSERT_TRUE(index.watch({}));
    dir.write("library/security/oauth-pkce.md", "# OAuth PKCE\n\nProof key for code exchange in public clients.\n");
    EXPECT_EQ(ids(index, {.keyword = "pkce"}), (std::vector<std::string>{"security/oauth-pkce"}));
    dir.write("library/security/oauth-pkce-SKILL.md", skill_md("OAuth", 9.9, "Updated overview about verifiers."));
    EXPECT_EQ(index.search({.keyword = "verifiers"}).at(0).quality, 9.9);
    std::filesystem::remove(dir.path() / "library/security/oauth-pkce.md");
    EXPECT_TRUE(ids(index, {.keyword = "pkce"}).empty());
    // A new category folder is watched too.
    dir.write("library/ui2/x.md", "# x\n");  // not served: no effect
    std::filesystem::remove(dir.path() / "library/ui");
    dir.write("library/ui/buttons.md", "# Buttons\n\nAccessible button patterns.\n");
    EXPECT_EQ(ids(index, {.keyword = "accessible"}), (std::vector<std::string>{"ui/buttons"}));
}

TEST_F(ContextIndexTest, AtStartOnlyChangedPatternsAreReadAgainAndABrokenCacheIsRebuilt) {
    {
        PatternIndex index(*library, dir.path() / "cache/index.sqlite");
        index.sync();
    }
    {
        PatternIndex index(*library, dir.path() / "cache/index.sqlite");
        auto stats = index.sync();
        EXPECT_EQ(stats.read, 0u);
        EXPECT_EQ(stats.patterns, 4u);
    }
    std::filesystem::remove(dir.path() / "library/database/migrations.md");
    dir.write("library/testing/golden-files.md",
              "# Golden files\n\nChanged text about fixtures.\n");  // wrong layout on purpose
    {
        PatternIndex index(*library, dir.path() / "cache/index.sqlite");
        auto stats = index.sync();
        EXPECT_EQ(stats.removed, 1u);
        EXPECT_EQ(stats.read, 1u);
        EXPECT_EQ(ids(index, {.keyword = "fixtures"}), (std::vector<std::string>{"testing/golden-files"}));
    }
    std::filesystem::remove(dir.path() / "cache/index.sqlite-wal");
    std::filesystem::remove(dir.path() / "cache/index.sqlite-shm");
    dir.write("cache/index.sqlite", "this is not a database");
    PatternIndex rebuilt(*library, dir.path() / "cache/index.sqlite");
    EXPECT_EQ(rebuilt.sync().patterns, 3u);
}

class ContextPatternTools : public ::testing::Test {
protected:
    ContextPatternTools() {
        write_library(dir);
        dir.mkdir("Dev");
        server = std::make_unique<ContextServer>(Json{{"patterns_root", (dir.path() / "library").string()},
                                                      {"projects_root", (dir.path() / "Dev").string()},
                                                      {"index_file", (dir.path() / "cache/index.sqlite").string()}});
    }
    ScratchDir dir;
    std::unique_ptr<ContextServer> server;
};

TEST_F(ContextPatternTools, SearchPatternsAnswersInTheEnvelopeAndEnforcesTheCategoryEnum) {
    Json found = server->call("searchPatterns", {{"keyword", "row level security"}});
    ASSERT_EQ(found["success"], true) << found;
    EXPECT_EQ(found["data"][0]["id"], "database/rls-policy");
    EXPECT_EQ(found["data"][0]["quality"], 8.5);
    EXPECT_EQ(found["metadata"]["resultsCount"], found["data"].size());
    Json bad = server->call("searchPatterns", {{"category", "devops"}});
    EXPECT_EQ(bad["success"], false);
    EXPECT_EQ(bad["error"]["code"], "CATEGORY_INVALID");
    EXPECT_EQ(server->last_result["isError"], true);
    EXPECT_EQ(server->call("searchPatterns", {{"limit", 0}})["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextPatternTools, LoadSkillReturnsTheTextsAndEachFailureHasItsCode) {
    Json skill = server->call("loadSkill", {{"skillId", "database/rls-policy"}, {"includeCode", true}});
    ASSERT_EQ(skill["success"], true) << skill;
    EXPECT_EQ(skill["data"]["documentation"], "# RLS Policy\n\nRow level security policies for Postgres tenants.\n");
    EXPECT_EQ(skill["data"]["code"], "export function rlsPolicy() {}\n");
    EXPECT_EQ(skill["data"]["codeFile"], "rls-policy.ts");
    EXPECT_EQ(skill["data"]["hasExecutable"], true);
    EXPECT_NE(skill["data"]["metadata"].get<std::string>().find("Quality Score"), std::string::npos);
    Json lean = server->call("loadSkill", {{"skillId", "database/rls-policy"}, {"includeMetadata", false}});
    EXPECT_FALSE(lean["data"].contains("metadata"));
    EXPECT_FALSE(lean["data"].contains("code"));

    EXPECT_EQ(server->call("loadSkill", {{"skillId", "database/nope"}})["error"]["code"], "PATTERN_NOT_FOUND");
    EXPECT_EQ(server->call("loadSkill", {{"skillId", "devops/ci-cache"}})["error"]["code"], "CATEGORY_INVALID");
    EXPECT_EQ(server->call("loadSkill", {{"skillId", "ui/leak"}})["error"]["code"], "PATTERN_NOT_FOUND");
    for (const char* hostile : {"../elsewhere/leak", "database/../../elsewhere/leak", "/etc/passwd", "..", ".hidden"}) {
        EXPECT_EQ(server->call("loadSkill", {{"skillId", hostile}})["error"]["code"], "VALIDATION_ERROR") << hostile;
    }
    // A bare name stands for the one pattern of that name; none is PATTERN_NOT_FOUND.
    Json bare = server->call("loadSkill", {{"skillId", "rls-policy"}});
    EXPECT_EQ(bare["data"]["id"], "database/rls-policy") << bare;
    Json none = server->call("loadSkill", {{"skillId", "database"}});
    EXPECT_EQ(none["error"]["code"], "PATTERN_NOT_FOUND");
    EXPECT_NE(none["error"]["suggestion"].get<std::string>().find("searchPatterns"), std::string::npos) << none;
}

}  // namespace
