// The pattern library as Agent Skills (the MCP Skills extension, SEP-2640): names, entries
// whose digests and sizes are those of the bytes resources/read returns, a SKILL.md whose
// YAML frontmatter parses back to the entry's, directory reads, paging of skills/list and
// the -32602 answers; and extractPattern, which promotes a pattern into the library.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "context_test_support.hpp"
#include "providers/context/patterns/library.hpp"
#include "providers/context/patterns/skill_sandbox.hpp"
#include "providers/context/skills/skill_catalog.hpp"
#include "util/digest.hpp"

using namespace toolport;
using namespace toolport::context;
using namespace toolport::test_support;

namespace {

const std::vector<std::string> kCategories = {"database", "backend", "testing"};

void write_library(const ScratchDir& dir) {
    dir.write("library/database/rls-policy.md",
              "---\ntitle: own frontmatter\n---\n# RLS Policy\n\nRow level security.\n");
    dir.write("library/database/rls-policy-SKILL.md",
              "# Skill: RLS\n**Quality Score:** 8.5/10\n\n## Overview\n\nPolicies: \"tenant\" rows — für Postgres.\n");
    dir.write("library/database/rls-policy.ts", "export function rlsPolicy() {}\n");
    dir.write("library/database/rls-policy.js", "export function rlsPolicy() {}\n");
    dir.write("library/backend/plain-doc.md", "# Plain\n\nJust documentation.\n");
    dir.write("library/backend/Not_A_Skill_Name.md", "# Bad name\n\nServed as a pattern, not as a skill.\n");
    dir.write("library/testing/golden-files.md", "# Golden files\n\nSnapshots.\n");
}

// The YAML frontmatter of a SKILL.md, parsed by yaml-cpp, as JSON (strings and maps only).
Json parse_frontmatter(const std::string& md) {
    EXPECT_EQ(md.rfind("---\n", 0), 0u) << md;
    const auto end = md.find("\n---\n", 4);
    YAML::Node node = YAML::Load(md.substr(4, end - 4));
    std::function<Json(const YAML::Node&)> to_json = [&](const YAML::Node& n) -> Json {
        if (n.IsMap()) {
            Json o = Json::object();
            for (const auto& kv : n) o[kv.first.as<std::string>()] = to_json(kv.second);
            return o;
        }
        return n.as<std::string>();
    };
    return to_json(node);
}

TEST(ContextSkillCatalog, NamesFollowTheAgentSkillsRules) {
    for (const std::string ok : {"a", "rls-policy", "x9", "a-b-c"}) EXPECT_TRUE(SkillCatalog::valid_name(ok)) << ok;
    EXPECT_TRUE(SkillCatalog::valid_name(std::string(64, 'a')));
    for (const char* bad : {"", "-a", "a-", "a--b", "A", "a_b", "a.b", "a/b"})
        EXPECT_FALSE(SkillCatalog::valid_name(bad)) << bad;
    EXPECT_FALSE(SkillCatalog::valid_name(std::string(65, 'a')));
}

TEST(ContextSkillCatalog, EntriesDescribeExactlyTheBytesThatAreServed) {
    ScratchDir dir;
    write_library(dir);
    PatternLibrary library(Root("pattern library", dir.path() / "library"), kCategories);
    SkillCatalog catalog(library);

    auto skills = catalog.skills();
    std::vector<std::string> ids;
    for (const auto& p : skills) ids.push_back(p.id());
    EXPECT_EQ(ids, (std::vector<std::string>{"backend/plain-doc", "database/rls-policy", "testing/golden-files"}));

    auto rls = std::find_if(skills.begin(), skills.end(), [](const PatternFiles& p) { return p.name == "rls-policy"; });
    Json entry = catalog.entry(*rls);
    EXPECT_EQ(entry["uri"], "skill://database/rls-policy/SKILL.md");
    std::vector<std::string> uris;
    for (const auto& r : entry["resources"]) {
        uris.push_back(r["uri"]);
        auto content = catalog.read(r["uri"]);
        ASSERT_TRUE(content) << r["uri"];
        EXPECT_EQ(r["size"], content->bytes.size());
        EXPECT_EQ(r["digest"], "sha256:" + util::sha256_hex(content->bytes));
    }
    EXPECT_EQ(uris, (std::vector<std::string>{"skill://database/rls-policy/SKILL.md",
                                              "skill://database/rls-policy/references/rls-policy-SKILL.md",
                                              "skill://database/rls-policy/scripts/rls-policy.ts",
                                              "skill://database/rls-policy/scripts/rls-policy.js"}));

    // The frontmatter a YAML parser reads from SKILL.md is the entry's, quotes and all; the
    // documentation's own frontmatter gives way to it.
    const std::string md = catalog.read("skill://database/rls-policy/SKILL.md")->bytes;
    EXPECT_EQ(parse_frontmatter(md), entry["frontmatter"]);
    EXPECT_EQ(entry["frontmatter"]["description"], "Policies: \"tenant\" rows — für Postgres.");
    EXPECT_EQ(entry["frontmatter"]["metadata"],
              Json({{"category", "database"}, {"id", "database/rls-policy"}, {"quality", "8.5"}}));
    EXPECT_EQ(md.find("own frontmatter"), std::string::npos);
    EXPECT_NE(md.find("# RLS Policy\n\nRow level security.\n"), std::string::npos);

    // A file changed on disk changes the entry (the cache follows size and time).
    dir.write("library/database/rls-policy.ts", "export function rlsPolicy() { return 1; }\n");
    Json changed = catalog.entry(*rls);
    EXPECT_NE(changed["resources"][2]["digest"], entry["resources"][2]["digest"]);
}

TEST(ContextSkillCatalog, DirectoriesListTheirChildrenAndNothingLeavesTheLibrary) {
    ScratchDir dir;
    write_library(dir);
    PatternLibrary library(Root("pattern library", dir.path() / "library"), kCategories);
    SkillCatalog catalog(library);

    auto names = [](const Json& children) {
        std::vector<std::string> out;
        for (const auto& c : children)
            out.push_back(c["name"].get<std::string>() + "|" + c["mimeType"].get<std::string>());
        return out;
    };
    EXPECT_EQ(names(*catalog.directory("skill://database/rls-policy")),
              (std::vector<std::string>{"SKILL.md|text/markdown", "references|inode/directory",
                                        "scripts|inode/directory"}));
    EXPECT_EQ(names(*catalog.directory("skill://database/rls-policy/scripts/")),
              (std::vector<std::string>{"rls-policy.ts|text/x-typescript", "rls-policy.js|text/javascript"}));
    EXPECT_EQ(names(*catalog.directory("skill://backend")), (std::vector<std::string>{"plain-doc|inode/directory"}));
    EXPECT_EQ(names(*catalog.directory("skill://backend/plain-doc")),
              (std::vector<std::string>{"SKILL.md|text/markdown"}));

    for (const char* not_a_dir :
         {"skill://database/rls-policy/SKILL.md", "skill://database/rls-policy/scripts/rls-policy.ts",
          "skill://database/nope", "skill://devops", "skill://database/rls-policy/nothing",
          "skill://backend/Not_A_Skill_Name", "file:///etc", "skill://database/rls-policy/../../x"}) {
        EXPECT_FALSE(catalog.directory(not_a_dir)) << not_a_dir;
    }
    for (const char* hostile :
         {"skill://database/rls-policy/../rls-policy/SKILL.md", "skill://database/../../etc/passwd",
          "skill://database/rls-policy/scripts/../../../../etc/passwd", "skill://database/rls-policy/rls-policy.ts",
          "skill://database/rls-policy/references/../SKILL.md"}) {
        EXPECT_FALSE(catalog.read(hostile)) << hostile;
    }
}

class ContextSkillsServer : public ::testing::Test {
protected:
    ContextSkillsServer() {
        write_library(dir);
        for (int i = 0; i < 120; ++i)
            dir.write(fmt::format("library/testing/case-{:03}.md", i), fmt::format("# Case {}\n\nCase.\n", i));
        dir.mkdir("Dev");
        server = std::make_unique<ContextServer>(Json{{"patterns_root", (dir.path() / "library").string()},
                                                      {"projects_root", (dir.path() / "Dev").string()},
                                                      {"categories", kCategories},
                                                      {"index_file", (dir.path() / "cache/index.sqlite").string()}});
    }
    ScratchDir dir;
    std::unique_ptr<ContextServer> server;
};

TEST_F(ContextSkillsServer, SkillsListPagesWithoutSplittingAndUnknownSkillsAreInvalidParams) {
    const Json caps = server->runtime->server().capabilities(protocol::Revision::v2025_11_25);
    EXPECT_EQ(caps["extensions"][kSkillsExtension], Json({{"directoryRead", true}}));

    std::vector<std::string> uris;
    Json params = Json::object();
    int pages = 0;
    for (;; ++pages) {
        Json page = server->request("skills/list", params);
        ASSERT_TRUE(page.contains("skills")) << page;
        EXPECT_LE(page["skills"].size(), 50u);
        for (const auto& s : page["skills"]) uris.push_back(s["uri"]);
        if (!page.contains("nextCursor")) break;
        params = {{"cursor", page["nextCursor"]}};
    }
    EXPECT_EQ(pages, 2);  // 123 skills: 50 + 50 + 23
    EXPECT_EQ(uris.size(), 123u);
    EXPECT_TRUE(std::is_sorted(uris.begin(), uris.end()));
    EXPECT_EQ(std::adjacent_find(uris.begin(), uris.end()), uris.end());

    EXPECT_EQ(server->request("skills/list", {{"cursor", "!!"}})["error"]["code"], -32602);
    EXPECT_EQ(server->request("skills/get",
                              {{"uri", "skill://database/rls-policy/SKILL.md"}})["skill"]["frontmatter"]["name"],
              "rls-policy");
    for (const Json& bad : {Json{{"uri", "skill://database/nope/SKILL.md"}},
                            Json{{"uri", "skill://database/rls-policy"}}, Json{{"uri", 7}}, Json::object()}) {
        EXPECT_EQ(server->request("skills/get", bad)["error"]["code"], -32602) << bad;
    }
    EXPECT_EQ(server->request("resources/directory/read",
                              {{"uri", "skill://database/rls-policy/SKILL.md"}})["error"]["code"],
              -32602);
    EXPECT_EQ(server->request("resources/directory/read", {{"uri", "skill://database"}})["resources"].size(), 1u);

    // The SKILL.md files are resources of the server, with the frontmatter's name.
    Json read = server->request("resources/read", {{"uri", "skill://database/rls-policy/SKILL.md"}});
    EXPECT_EQ(read["contents"][0]["mimeType"], "text/markdown");
    EXPECT_EQ(server->request("resources/read", {{"uri", "skill://database/rls-policy/scripts/x.ts"}})["error"]["code"],
              -32002);
    const auto& listed = server->runtime->server().registry().resources();
    ASSERT_TRUE(listed.count("skill://database/rls-policy/SKILL.md"));
    EXPECT_EQ(listed.at("skill://database/rls-policy/SKILL.md")->name, "rls-policy");
    EXPECT_FALSE(listed.count("skill://backend/Not_A_Skill_Name/SKILL.md"));
}

// The skills are the context pack's: a caller whose view or OAuth scopes leave the pack out
// is not offered the extension, its methods are as unknown as any, and the skill://
// resources are neither listed nor read (answered as resources that do not exist).
TEST_F(ContextSkillsServer, ACallerThatCannotSeeThePackIsServedNoSkill) {
    auto& mcp = server->runtime->server();
    const std::string skill = "skill://database/rls-policy/SKILL.md";
    ASSERT_TRUE(mcp.registry().resources().count(skill));
    const std::string source = mcp.registry().resources().at(skill)->source;
    ASSERT_FALSE(source.empty()) << "the skills are their pack's";
    auto policy = std::make_shared<auth::ScopePolicy>();
    policy->sources[source] = {"context:read"};
    mcp.set_scope_policy(policy);
    mcp.add_view("elsewhere", ViewSpec{[](const ToolSpec&) { return false; }, [](const std::string&) { return false; }});

    auto expect_hidden = [&](const std::string& what) {
        const Json caps = mcp.capabilities(protocol::Revision::v2025_11_25, &server->session->caller());
        EXPECT_FALSE(caps.value("extensions", Json::object()).contains(kSkillsExtension)) << what << caps;
        for (const char* method : {"skills/list", "skills/get", "resources/directory/read"}) {
            Json answer = server->request(method, {{"uri", skill}});
            EXPECT_EQ(answer["error"]["code"], -32601) << what << " " << method << " " << answer;
            EXPECT_EQ(answer["error"]["message"], std::string("Method not found: ") + method) << what;
        }
        Json listed = server->request("resources/list", Json::object());
        for (const auto& r : listed["resources"])
            EXPECT_NE(r["uri"].get<std::string>().rfind("skill://", 0), 0u) << what << r;
        EXPECT_TRUE(server->request("resources/templates/list", Json::object())["resourceTemplates"].empty()) << what;
        for (const std::string& uri : {skill, std::string("skill://database/rls-policy/scripts/rls-policy.ts")}) {
            Json read = server->request("resources/read", {{"uri", uri}});
            EXPECT_EQ(read["error"]["code"], -32002) << what << " " << read;
            EXPECT_EQ(read["error"]["message"], "Resource not found: " + uri) << what;
        }
    };
    server->session->caller().scopes = std::vector<std::string>{"openid"};
    expect_hidden("a token without context:read");
    server->session->caller().scopes.reset();
    server->session->caller().view = "elsewhere";
    expect_hidden("a view without the pack");

    // With the scope, outside a view: served again.
    server->session->caller().view.clear();
    server->session->caller().scopes = std::vector<std::string>{"context:read"};
    EXPECT_TRUE(mcp.capabilities(protocol::Revision::v2025_11_25, &server->session->caller())["extensions"].contains(
        kSkillsExtension));
    EXPECT_EQ(server->request("skills/get", {{"uri", skill}})["skill"]["frontmatter"]["name"], "rls-policy");
    EXPECT_EQ(server->request("resources/read", {{"uri", skill}})["contents"][0]["mimeType"], "text/markdown");
}

TEST_F(ContextSkillsServer, TheListedSkillsFollowTheLibraryOneChangeAtATime) {
    const auto& listed = server->runtime->server().registry().resources();
    auto announced = [&] {
        return std::count_if(server->out.begin(), server->out.end(), [](const Json& m) {
            return m.value("method", "") == "notifications/resources/list_changed";
        });
    };
    // Each change is applied by the next search (or the watcher, whichever comes first); the
    // registry follows on the event loop.
    auto settle = [&] { EXPECT_EQ(server->call("searchPatterns", {{"keyword", "zzz"}})["success"], true); };
    ASSERT_TRUE(listed.count("skill://testing/case-007/SKILL.md"));
    const auto before = announced();

    dir.write("library/database/new-one.md", "# New one\n\n## Overview\n\nArrived while serving.\n");
    settle();
    ASSERT_TRUE(listed.count("skill://database/new-one/SKILL.md"));
    EXPECT_EQ(listed.at("skill://database/new-one/SKILL.md")->description, "Arrived while serving.");
    EXPECT_GT(announced(), before);

    dir.write("library/database/rls-policy-SKILL.md", "# Skill: RLS\n\n## Overview\n\nRewritten.\n");
    settle();
    EXPECT_EQ(listed.at("skill://database/rls-policy/SKILL.md")->description, "Rewritten.");

    fs::remove(dir.path() / "library/database/new-one.md");
    settle();
    EXPECT_FALSE(listed.count("skill://database/new-one/SKILL.md"));
    EXPECT_TRUE(listed.count("skill://database/rls-policy/SKILL.md"));

    // A category folder going is a change of layout: the whole library is listed again.
    fs::remove_all(dir.path() / "library/testing");
    settle();
    EXPECT_FALSE(listed.count("skill://testing/case-007/SKILL.md"));
    EXPECT_FALSE(listed.count("skill://testing/golden-files/SKILL.md"));
    EXPECT_TRUE(listed.count("skill://database/rls-policy/SKILL.md"));
    EXPECT_TRUE(listed.count("skill://backend/plain-doc/SKILL.md"));
}

class ContextExtractPattern : public ::testing::Test {
protected:
    ContextExtractPattern() {
        write_library(dir);
        dir.mkdir("Dev");
        server = std::make_unique<ContextServer>(Json{{"patterns_root", (dir.path() / "library").string()},
                                                      {"projects_root", (dir.path() / "Dev").string()},
                                                      {"categories", kCategories},
                                                      {"index_file", (dir.path() / "cache/index.sqlite").string()}});
    }
    static Json args(double score) {
        return {{"name", "echo-input"},
                {"category", "backend"},
                {"description", "Echoes its input."},
                {"documentation", "Usage: send JSON, get it back."},
                {"code", "cat"},
                {"language", "bash"},
                {"inputSchema", {{"type", "object"}, {"required", {"x"}}}},
                {"dependencies", {"coreutils"}},
                {"quality",
                 {{"correctness", score},
                  {"reusability", {{"score", score}, {"notes", "a | b\nc"}}},
                  {"documentation", score},
                  {"testCoverage", score},
                  {"performance", score}}}};
    }
    ScratchDir dir;
    std::unique_ptr<ContextServer> server;
};

TEST_F(ContextExtractPattern, WritesTheThreeFilesThatEveryReaderUnderstands) {
    Json done = server->call("extractPattern", args(8));
    ASSERT_EQ(done["success"], true) << done;
    EXPECT_EQ(done["data"]["files"],
              Json({"backend/echo-input.sh", "backend/echo-input-SKILL.md", "backend/echo-input.md"}));
    EXPECT_EQ(done["data"]["quality"], 8);
    EXPECT_EQ(done["data"]["replaced"], false);

    const std::string skill = read_file(dir.path() / "library/backend/echo-input-SKILL.md");
    // The client's scores are declared, not a review: no "**Quality Score:**" the readers take.
    EXPECT_NE(skill.find("**Declared Quality Score:** 8/10"), std::string::npos) << skill;
    EXPECT_FALSE(parse_quality(skill).has_value()) << skill;
    EXPECT_NE(skill.find("| Reusability | 8/10 | a \\| b c |"), std::string::npos) << skill;
    EXPECT_NE(skill.find("- coreutils"), std::string::npos);
    EXPECT_EQ(read_file(dir.path() / "library/backend/echo-input.md"),
              "# Echo Input\n\nUsage: send JSON, get it back.\n");

    // Searchable and loadable at once; the description comes from the SKILL.md overview;
    // executeSkill checks the declared input schema.
    Json found = server->call("searchPatterns", {{"keyword", "echoes"}});
    ASSERT_EQ(found["data"][0]["id"], "backend/echo-input") << found;
    EXPECT_EQ(found["data"][0]["description"], "Echoes its input.");
    EXPECT_FALSE(found["data"][0].contains("quality")) << found;
    EXPECT_EQ(found["data"][0]["reviewed"], false);
    // Its code is unreviewed: executeSkill runs it once the operator approves it.
    EXPECT_EQ(server->call("executeSkill", {{"skillId", "backend/echo-input"}, {"input", {{"x", 1}}}})["error"]["code"],
              "SKILL_NOT_APPROVED");
    fs::remove(dir.path() / "library/backend" / unreviewed_marker("echo-input"));
    EXPECT_EQ(server->call("executeSkill",
                           {{"skillId", "backend/echo-input"}, {"input", Json::object()}})["error"]["code"],
              "VALIDATION_ERROR");
    if (sandbox_status("").available) {
        EXPECT_EQ(server->call("executeSkill", {{"skillId", "backend/echo-input"}, {"input", {{"x", 1}}}})["data"],
                  Json({{"x", 1}}));
    }
    // No staging file is left behind (the unreviewed marker, gone now, was the only hidden file).
    for (const auto& e : fs::directory_iterator(dir.path() / "library/backend")) {
        EXPECT_NE(e.path().filename().string()[0], '.') << e.path();
    }
}

TEST_F(ContextExtractPattern, RefusesLowQualityAndOverwritesOnlyWhenAsked) {
    Json low = server->call("extractPattern", args(6.9));
    EXPECT_EQ(low["error"]["code"], "VALIDATION_ERROR");
    EXPECT_FALSE(fs::exists(dir.path() / "library/backend/echo-input.md"));
    Json forced_args = args(6.9);
    forced_args["force"] = true;
    ASSERT_EQ(server->call("extractPattern", forced_args)["success"], true);

    Json again = server->call("extractPattern", args(9));
    EXPECT_EQ(again["error"]["code"], "VALIDATION_ERROR");
    EXPECT_NE(again["error"]["message"].get<std::string>().find("already exists"), std::string::npos);
    EXPECT_NE(read_file(dir.path() / "library/backend/echo-input-SKILL.md").find("6.9/10"), std::string::npos);

    // Replaced, in another language: the old code file goes with the old version.
    Json replacement = args(9);
    replacement["overwrite"] = true;
    replacement["language"] = "python";
    replacement["code"] = "import sys; print(sys.stdin.read())";
    Json replaced = server->call("extractPattern", replacement);
    ASSERT_EQ(replaced["success"], true) << replaced;
    EXPECT_EQ(replaced["data"]["replaced"], true);
    EXPECT_FALSE(fs::exists(dir.path() / "library/backend/echo-input.sh"));
    EXPECT_TRUE(fs::exists(dir.path() / "library/backend/echo-input.py"));
    EXPECT_NE(read_file(dir.path() / "library/backend/echo-input-SKILL.md").find("**Declared Quality Score:** 9/10"),
              std::string::npos);

    Json hostile = args(9);
    for (const char* name : {"../escape", "Upper", "a/b", ".hidden"}) {
        hostile["name"] = name;
        EXPECT_EQ(server->call("extractPattern", hostile)["error"]["code"], "VALIDATION_ERROR") << name;
    }
    hostile["name"] = "fine-name";
    hostile["category"] = "cooking";
    EXPECT_EQ(server->call("extractPattern", hostile)["error"]["code"], "CATEGORY_INVALID");
    Json code_without_language = args(9);
    code_without_language["name"] = "no-language";
    code_without_language.erase("language");
    EXPECT_EQ(server->call("extractPattern", code_without_language)["error"]["code"], "VALIDATION_ERROR");
}

}  // namespace
