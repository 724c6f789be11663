// The context pack's artifacts and metrics modules: both session layouts and every
// finalization-pack format read; searchArtifacts, loadSession and getSessionCode over a
// generated projects tree; saveSession written atomically and read back by the readers;
// getCompressionRatio over all four metrics shapes.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "context_test_support.hpp"
#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/metrics/compression.hpp"

using namespace toolport;
using namespace toolport::context;
using namespace toolport::test_support;

namespace {

const char* kSessionMarkdown = R"(# Authentication flow

Intro paragraph that is not the summary.

## Summary

Moved login to OAuth with PKCE.

## Decisions

- Use PKCE for public clients
* Store refresh tokens server-side

## Implementations

- Added /callback route

## Challenges

- Safari drops third-party cookies

## Next Steps

- Rotate signing keys

## Code

```typescript src/auth/pkce.ts
export const verifier = () => crypto.randomUUID();
```

```
untagged fences are prose
```

```sql
CREATE POLICY tenant ON rows USING (tenant_id = current_setting('app.tenant'));
```
)";

TEST(ContextSessions, MarkdownSectionsListsAndTaggedCodeBlocksAreRead) {
    SessionRecord s = parse_session_markdown("2025-10-15-authentication-flow", kSessionMarkdown);
    EXPECT_EQ(s.title, "Authentication flow");
    EXPECT_EQ(s.date, "2025-10-15");
    EXPECT_EQ(s.summary, "Moved login to OAuth with PKCE.");
    EXPECT_EQ(s.decisions,
              (std::vector<std::string>{"Use PKCE for public clients", "Store refresh tokens server-side"}));
    EXPECT_EQ(s.implementations, (std::vector<std::string>{"Added /callback route"}));
    EXPECT_EQ(s.challenges, (std::vector<std::string>{"Safari drops third-party cookies"}));
    EXPECT_EQ(s.next_steps, (std::vector<std::string>{"Rotate signing keys"}));
    ASSERT_EQ(s.code_blocks.size(), 2u);
    EXPECT_EQ(s.code_blocks[0].language, "typescript");
    EXPECT_EQ(s.code_blocks[0].file, "src/auth/pkce.ts");
    EXPECT_EQ(s.code_blocks[0].code, "export const verifier = () => crypto.randomUUID();");
    EXPECT_EQ(s.code_blocks[1].language, "sql");
    EXPECT_TRUE(s.code_blocks[1].file.empty());
    EXPECT_TRUE(s.has_code);
}

TEST(ContextSessions, WithoutASummarySectionTheFirstParagraphIsTheSummaryCutAt300) {
    SessionRecord s = parse_session_markdown("notes", "# T\n\n" + std::string(400, 'x') + "\nmore\n\n## Decisions\n");
    EXPECT_EQ(s.summary.size(), 300u);
    EXPECT_EQ(s.date, "unknown");
    EXPECT_EQ(parse_session_markdown("x", "no heading at all").title, "Untitled Session");
    EXPECT_EQ(parse_session_markdown("x", "").summary, "No summary available");
}

TEST(ContextSessions, FinalizationPacksOfBothNamingStylesAreRead) {
    SessionRecord a = parse_finalization_pack(
        "2025-11-01-x", R"J({"summary":"S","decisions":["d1",{"decision":"d2","rationale":"r"}],"next_steps":["n"],
                            "code_blocks":[{"language":"py","code":"print(1)","file":"a.py"},{"nocode":true}],
                            "metadata":{"date":"2025-11-02"}})J");
    EXPECT_EQ(a.summary, "S");
    EXPECT_EQ(a.decisions, (std::vector<std::string>{"d1", "d2"}));
    EXPECT_EQ(a.next_steps, (std::vector<std::string>{"n"}));
    ASSERT_EQ(a.code_blocks.size(), 1u);
    EXPECT_EQ(a.code_blocks[0].file, "a.py");
    EXPECT_EQ(a.date, "2025-11-02");
    SessionRecord b = parse_finalization_pack(
        "2025-11-03", R"({"summary":{"one_line":"Shipped search","areas":["api"]},"nextSteps":["m"],"codeBlocks":[]})");
    EXPECT_EQ(b.summary, "Shipped search");
    EXPECT_EQ(b.title, "Shipped search");
    EXPECT_EQ(b.next_steps, (std::vector<std::string>{"m"}));
    EXPECT_FALSE(b.has_code);
    EXPECT_THROW(parse_finalization_pack("x", "[1,2]"), ContextError);
}

TEST(ContextMetrics, EveryMetricsShapeGivesTheTokenCounts) {
    using nlohmann::json;
    EXPECT_EQ(read_token_counts(json::parse(
                  R"({"compressionMetrics":{"inputTokens":{"total":1000},"outputArtifacts":{"total":250}}})")),
              std::make_pair(1000LL, 250LL));
    EXPECT_EQ(read_token_counts(json::parse(R"({"compression":{"raw_context_tokens":800,"compressed_tokens":200}})")),
              std::make_pair(800LL, 200LL));
    EXPECT_EQ(read_token_counts(json::parse(
                  R"({"metrics":{"original_context_size_tokens":500,"finalization_pack_size_tokens":100}})")),
              std::make_pair(500LL, 100LL));
    EXPECT_EQ(read_token_counts(json::parse(R"({"tokens":{"original":400,"compressed":100}})")),
              std::make_pair(400LL, 100LL));
    EXPECT_FALSE(read_token_counts(json::parse(R"({"tokens":{"original":0,"compressed":0}})")));
    EXPECT_FALSE(read_token_counts(json::parse(R"({"compression":{"ratio":0.74}})")));
}

class ContextArtifactTools : public ::testing::Test {
protected:
    ContextArtifactTools() {
        // Project "alpha": every layout; project "beta": one JSON pack; "gamma" has none.
        dir.write("Dev/alpha/.agent-artifacts/2025-10-15-authentication-flow.md", kSessionMarkdown);
        dir.write("Dev/alpha/.agent-artifacts/2025-10-15-authentication-flow.metrics.json",
                  R"({"tokens":{"original":10000,"compressed":2000}})");
        dir.write("Dev/alpha/.agent-artifacts/2025-11-01-search/session-summary.md",
                  "# Search ranking\n\n## Summary\n\nBM25 over patterns.\n\n## Decisions\n\n- FTS5 in SQLite\n");
        dir.write("Dev/alpha/.agent-artifacts/2025-11-01-search/compression-metrics.json",
                  R"({"compression":{"raw_context_tokens":5000,"compressed_tokens":2000}})");
        dir.write("Dev/alpha/.agent-artifacts/index.json", "{}");
        dir.write(
            "Dev/beta/.agent-artifacts/2025-09-01-billing/finalization-pack.json",
            R"({"summary":"Stripe webhooks","decisions":["Idempotency keys"],"codeBlocks":[{"language":"sql","code":"SELECT 1"}]})");
        dir.mkdir("Dev/gamma");
        dir.write("outside/.agent-artifacts/2025-01-01-secret.md", "# Secret\n");
        std::filesystem::create_directory_symlink(dir.path() / "outside", dir.path() / "Dev/linked");
        server = std::make_unique<ContextServer>(Json{{"patterns_root", (dir.path() / "library").string()},
                                                      {"projects_root", (dir.path() / "Dev").string()},
                                                      {"index_file", (dir.path() / "cache/index.sqlite").string()}});
    }

    ScratchDir dir;
    std::unique_ptr<ContextServer> server;
};

TEST_F(ContextArtifactTools, SearchFindsEveryLayoutNewestFirstAndFollowsNoSymlinkedProject) {
    Json all = server->call("searchArtifacts");
    ASSERT_EQ(all["success"], true) << all;
    std::vector<std::string> ids;
    for (const auto& s : all["data"]) ids.push_back(s["sessionId"]);
    EXPECT_EQ(ids,
              (std::vector<std::string>{"2025-11-01-search", "2025-10-15-authentication-flow", "2025-09-01-billing"}));
    EXPECT_EQ(all["metadata"]["resultsCount"], 3);
    EXPECT_EQ(all["data"][1]["path"], ".agent-artifacts/2025-10-15-authentication-flow.md");
    EXPECT_EQ(all["data"][2]["project"], "beta");
    EXPECT_EQ(all["data"][2]["hasCode"], true);

    Json hits = server->call("searchArtifacts", {{"keyword", "SAFARI cookies"}});
    ASSERT_EQ(hits["data"].size(), 1u);
    EXPECT_EQ(hits["data"][0]["title"], "Authentication flow");
    EXPECT_EQ(server->call("searchArtifacts", {{"project", "beta"}})["data"].size(), 1u);
    EXPECT_EQ(server->call("searchArtifacts", {{"limit", 1}})["data"].size(), 1u);
    EXPECT_EQ(server->call("searchArtifacts", {{"project", "linked"}})["error"]["code"], "VALIDATION_ERROR");
    EXPECT_EQ(server->call("searchArtifacts", {{"project", "../outside"}})["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextArtifactTools, LoadSessionReadsEachLayoutAndSaysWhichSessionIsMissing) {
    Json flat = server->call("loadSession", {{"project", "alpha"}, {"sessionId", "2025-10-15-authentication-flow"}});
    ASSERT_EQ(flat["success"], true) << flat;
    EXPECT_EQ(flat["data"]["content"]["decisions"].size(), 2u);
    EXPECT_FALSE(flat["data"].contains("codeBlocks"));
    Json with_code = server->call("loadSession", {{"project", "alpha"},
                                                  {"sessionId", "2025-10-15-authentication-flow"},
                                                  {"includeCode", true}});
    EXPECT_EQ(with_code["data"]["codeBlocks"].size(), 2u);
    Json pack = server->call("loadSession", {{"project", "beta"}, {"sessionId", "2025-09-01-billing"}});
    EXPECT_EQ(pack["data"]["content"]["summary"], "Stripe webhooks");

    Json missing = server->call("loadSession", {{"project", "alpha"}, {"sessionId", "2030-01-01-nope"}});
    EXPECT_EQ(missing["error"]["code"], "SESSION_NOT_FOUND");
    EXPECT_EQ(missing["error"]["message"], "Session not found: alpha/2030-01-01-nope");
    // A project that is not there is a bad argument, refused with the projects there are.
    Json no_project = server->call("loadSession", {{"project", "nope"}, {"sessionId", "x"}});
    EXPECT_EQ(no_project["error"]["code"], "VALIDATION_ERROR");
    EXPECT_NE(no_project["error"]["suggestion"].get<std::string>().find("alpha"), std::string::npos) << no_project;
    EXPECT_EQ(server->call("loadSession", {{"project", "alpha"}, {"sessionId", "../../outside"}})["error"]["code"],
              "VALIDATION_ERROR");
    EXPECT_EQ(server->call("loadSession", {{"project", "alpha"}})["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextArtifactTools, ASessionFileThatIsAFifoIsAClearErrorNeverABlockedRead) {
    dir.write("Dev/alpha/.agent-artifacts/2025-11-20-piped/finalization-pack.json", R"({"summary":"behind a FIFO"})");
    const auto fifo = dir.path() / "Dev/alpha/.agent-artifacts/2025-11-20-piped/session-summary.md";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
    Json refused = server->call("loadSession", {{"project", "alpha"}, {"sessionId", "2025-11-20-piped"}});
    ASSERT_EQ(refused["success"], false) << refused;
    EXPECT_EQ(refused["error"]["code"], "FILESYSTEM_ERROR");
    EXPECT_EQ(refused["error"]["message"],
              ".agent-artifacts/2025-11-20-piped/session-summary.md is a FIFO (named pipe), not a regular file; it is "
              "not read or written");
    EXPECT_TRUE(refused["error"].contains("suggestion"));
    // A search passes over it and finds the rest.
    Json all = server->call("searchArtifacts");
    ASSERT_EQ(all["success"], true) << all;
    EXPECT_EQ(all["metadata"]["resultsCount"], 3);
}

TEST_F(ContextArtifactTools, GetSessionCodeFiltersByLanguageAndAMissingSessionIsAnError) {
    Json sql = server->call("getSessionCode", {{"project", "alpha"},
                                               {"sessionId", "2025-10-15-authentication-flow"},
                                               {"language", "SQL"}});
    ASSERT_EQ(sql["data"].size(), 1u);
    EXPECT_EQ(sql["metadata"]["codeBlocksCount"], 1);
    EXPECT_EQ(sql["data"][0]["language"], "sql");
    EXPECT_EQ(server->call("getSessionCode", {{"project", "alpha"}, {"sessionId", "nope"}})["error"]["code"],
              "SESSION_NOT_FOUND");
}

TEST_F(ContextArtifactTools, ASavedSessionIsReadBackByTheReadersAndNeverSilentlyOverwritten) {
    Json args = {{"project", "gamma"},
                 {"sessionId", "2025-11-05-rollout"},
                 {"title", "Rollout"},
                 {"summary", "Rolled out v2 to 10%."},
                 {"decisions", {"Canary first", "Two-line\ndecision"}},
                 {"nextSteps", {"Watch error rates"}},
                 {"codeBlocks",
                  {{{"language", "bash"}, {"code", "kubectl rollout status deploy/api"}, {"file", "ops.sh"}}}},
                 {"originalTokens", 9000},
                 {"compressedTokens", 1800}};
    Json saved = server->call("saveSession", args);
    ASSERT_EQ(saved["success"], true) << saved;
    EXPECT_EQ(saved["data"]["files"].size(), 3u);
    const auto session_dir = dir.path() / "Dev/gamma/.agent-artifacts/2025-11-05-rollout";
    EXPECT_TRUE(std::filesystem::exists(session_dir / "finalization-pack.json"));
    // No staging directory is left behind.
    int entries = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path() / "Dev/gamma/.agent-artifacts")) {
        ++entries;
        EXPECT_EQ(e.path().filename(), "2025-11-05-rollout");
    }
    EXPECT_EQ(entries, 1);

    Json loaded = server->call("loadSession",
                               {{"project", "gamma"}, {"sessionId", "2025-11-05-rollout"}, {"includeCode", true}});
    ASSERT_EQ(loaded["success"], true) << loaded;
    EXPECT_EQ(loaded["data"]["title"], "Rollout");
    EXPECT_EQ(loaded["data"]["content"]["summary"], "Rolled out v2 to 10%.");
    EXPECT_EQ(loaded["data"]["content"]["decisions"], Json({"Canary first", "Two-line decision"}));
    EXPECT_EQ(loaded["data"]["codeBlocks"][0]["file"], "ops.sh");
    Json metrics = server->call("getCompressionRatio", {{"projectPath", (dir.path() / "Dev/gamma").string()},
                                                        {"sessionId", "2025-11-05-rollout"}});
    EXPECT_EQ(metrics["data"]["compressionRatio"], 80.0);

    Json again = server->call("saveSession", args);
    EXPECT_EQ(again["error"]["code"], "VALIDATION_ERROR");
    args["summary"] = "Rolled out v2 to 50%.";
    args["overwrite"] = true;
    EXPECT_EQ(server->call("saveSession", args)["success"], true);
    EXPECT_EQ(server->call("loadSession",
                           {{"project", "gamma"}, {"sessionId", "2025-11-05-rollout"}})["data"]["content"]["summary"],
              "Rolled out v2 to 50%.");

    Json fence = args;
    fence["codeBlocks"] = {{{"language", "md"}, {"code", "a\n```\nb"}}};
    EXPECT_EQ(server->call("saveSession", fence)["error"]["code"], "VALIDATION_ERROR");
    Json both = args;
    both["projectPath"] = (dir.path() / "Dev/gamma").string();
    EXPECT_EQ(server->call("saveSession", both)["error"]["code"], "VALIDATION_ERROR");
    Json hostile = args;
    hostile["sessionId"] = "../escape";
    EXPECT_EQ(server->call("saveSession", hostile)["error"]["code"], "VALIDATION_ERROR");
}

TEST_F(ContextArtifactTools, CompressionRatiosPerSessionListedAndAggregated) {
    const std::string alpha = (dir.path() / "Dev/alpha").string();
    Json list = server->call("getCompressionRatio", {{"projectPath", alpha}});
    ASSERT_EQ(list["success"], true) << list;
    ASSERT_EQ(list["data"].size(), 2u);
    EXPECT_EQ(list["data"][0]["sessionId"], "2025-11-01-search");
    EXPECT_EQ(list["data"][0]["compressionRatio"], 60.0);
    EXPECT_EQ(list["data"][1]["compressionRatio"], 80.0);
    EXPECT_EQ(list["data"][1]["savings"], 8000);
    EXPECT_EQ(list["data"][1]["project"], "alpha");

    Json total = server->call("getCompressionRatio", {{"projectPath", alpha}, {"aggregate", true}});
    EXPECT_EQ(total["data"]["totalSessions"], 2);
    EXPECT_EQ(total["data"]["avgCompressionRatio"], 70.0);
    EXPECT_EQ(total["data"]["totalTokensSaved"], 11000);
    EXPECT_EQ(total["data"]["bestCompression"], 80.0);
    EXPECT_EQ(total["data"]["worstSession"], "2025-11-01-search");

    Json none = server->call("getCompressionRatio", {{"projectPath", alpha}, {"sessionId", "2030-01-01-x"}});
    EXPECT_EQ(none["error"]["code"], "SESSION_NOT_FOUND");
    Json empty = server->call("getCompressionRatio",
                              {{"projectPath", (dir.path() / "Dev/gamma").string()}, {"aggregate", true}});
    EXPECT_EQ(empty["data"]["totalSessions"], 0);
    EXPECT_TRUE(empty["data"]["bestCompression"].is_null());
}

}  // namespace
