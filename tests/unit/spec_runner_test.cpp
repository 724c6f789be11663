// The runner (only, skip, timeouts, targets per suite, load errors) and the reporter.
#include "spec_test_support.hpp"

#include "spec/json_path.hpp"
#include "util/json.hpp"

using namespace spec_test;
using namespace toolport::spec;
using toolport::Json;

namespace {

class SpecRunnerTest : public SpecFilesTest {
protected:
    RunSummary run_files(const std::vector<fs::path>& files) {
        auto loaded = load_spec_files(files);
        return run_specs(
            loaded,
            [&](const std::string& url) -> Target& {
                urls_.push_back(url);
                return target_;
            },
            target_.options());
    }
    static std::string spec(const std::string& name, const std::string& tool, const std::string& extra = "") {
        return "name: " + name + "\ntool: " + tool + "\narguments: {}\nassertions: [{type: success}]\n" + extra;
    }
    static std::string report(const RunSummary& summary) {
        std::ostringstream out;
        print_report(summary, out);
        return out.str();
    }

    FakeTarget target_;
    std::vector<std::string> urls_;
};

TEST_F(SpecRunnerTest, RunsEverySpecInOrderAndCounts) {
    target_.tool_text("ok", "fine");
    auto summary = run_files({write("1.yaml", spec("first", "ok")), write("2.yaml", spec("second", "missing")),
                              write("3.yaml", spec("third", "ok"))});
    ASSERT_EQ(summary.results.size(), 3u);
    EXPECT_EQ(summary.results[0].name, "first");
    EXPECT_EQ(summary.results[1].name, "second");
    EXPECT_EQ(summary.passed, 2u);
    EXPECT_EQ(summary.failed, 1u);
    EXPECT_EQ(summary.skipped, 0u);
    EXPECT_EQ(target_.calls, (std::vector<std::string>{"tool:ok", "tool:missing", "list_tools", "tool:ok"}));
    EXPECT_EQ(exit_status(summary), 1);
}

TEST_F(SpecRunnerTest, SkippedSpecsAreReportedNotRun) {
    target_.tool_text("ok", "fine");
    auto summary = run_files(
        {write("1.yaml", spec("runs", "ok")), write("2.yaml", spec("skipped", "ok", "skip: true\n"))});
    ASSERT_EQ(summary.results.size(), 2u);
    EXPECT_EQ(summary.results[1].status, SpecResult::Status::skipped);
    EXPECT_EQ(summary.passed, 1u);
    EXPECT_EQ(summary.skipped, 1u);
    EXPECT_EQ(target_.calls, (std::vector<std::string>{"tool:ok"}));
    EXPECT_EQ(exit_status(summary), 0);
}

TEST_F(SpecRunnerTest, OnlyRunsTheMarkedSpecs) {
    target_.tool_text("ok", "fine");
    target_.tool_text("focus", "fine");
    auto summary = run_files({write("1.yaml", spec("other", "ok")),
                              write("2.yaml", spec("focused", "focus", "only: true\n")),
                              write("3.yaml", spec("focused but skipped", "focus", "only: true\nskip: true\n")),
                              write("4.yaml", spec("broken", "ok", "bogus: 1\n"))});
    ASSERT_EQ(summary.results.size(), 3u);
    EXPECT_EQ(summary.results[0].name, "focused");
    EXPECT_EQ(summary.results[1].status, SpecResult::Status::skipped);
    EXPECT_EQ(summary.results[2].name, "broken");  // load errors are always reported
    EXPECT_EQ(summary.results[2].status, SpecResult::Status::failed);
    EXPECT_EQ(target_.calls, (std::vector<std::string>{"tool:focus"}));
}

TEST_F(SpecRunnerTest, LoadErrorsAreFailedResultsWithTheirProblems) {
    auto summary = run_files({write("bad.yaml", "name: broken\ntool: x\narguments: {}\nassertions: [{type: nope}]\n")});
    ASSERT_EQ(summary.results.size(), 1u);
    EXPECT_EQ(summary.failed, 1u);
    EXPECT_CONTAINS(summary.results[0].problems[0], "bad.yaml:4: assertions[0].type: unknown assertion type");
    EXPECT_TRUE(target_.calls.empty());
}

TEST_F(SpecRunnerTest, TimeoutsComeFromTheSpecOrTheDefault) {
    target_.tool_text("ok", "fine");
    run_files({write("1.yaml", spec("a", "ok", "timeout: 250\n")), write("2.yaml", spec("b", "ok"))});
    ASSERT_EQ(target_.timeouts.size(), 2u);
    EXPECT_EQ(target_.timeouts[0].count(), 250);
    EXPECT_EQ(target_.timeouts[1].count(), 30000);
}

TEST_F(SpecRunnerTest, SuiteServerUrlReachesTheResolver) {
    target_.tool_text("ok", "fine");
    write("a.yaml", spec("a", "ok"));
    auto suite = write("suite.yaml", "name: S\nsetup: {serverUrl: 'http://127.0.0.1:1/mcp'}\ntests: [a.yaml]\n");
    auto plain = write("b.yaml", spec("b", "ok"));
    run_files({suite, plain});
    EXPECT_EQ(urls_, (std::vector<std::string>{"http://127.0.0.1:1/mcp", ""}));
}

TEST_F(SpecRunnerTest, AResolverThatThrowsFailsOnlyThatSpec) {
    target_.tool_text("ok", "fine");
    auto loaded = load_spec_files(
        std::vector<fs::path>{write("1.yaml", spec("a", "ok")), write("2.yaml", spec("b", "ok"))});
    int calls = 0;
    auto summary = run_specs(
        loaded,
        [&](const std::string&) -> Target& {
            if (calls++ == 0) throw std::runtime_error("connection refused");
            return target_;
        },
        target_.options());
    ASSERT_EQ(summary.results.size(), 2u);
    EXPECT_EQ(summary.results[0].status, SpecResult::Status::failed);
    EXPECT_EQ(summary.results[0].problems[0], "cannot reach the server: connection refused");
    EXPECT_EQ(summary.results[1].status, SpecResult::Status::passed);
}

TEST_F(SpecRunnerTest, MissingToolGetsAHint) {
    target_.tool_text("echo", "x");
    target_.tool_text("add", "x");
    auto summary = run_files({write("1.yaml", spec("a", "ech0"))});
    ASSERT_EQ(summary.results[0].notes.size(), 1u);
    EXPECT_EQ(summary.results[0].notes[0], "hint: the server has no tool named \"ech0\" (it has: add, echo)");
}

TEST_F(SpecRunnerTest, OnResultSeesEachResultAsItIsKnown) {
    target_.tool_text("ok", "fine");
    auto loaded = load_spec_files(
        std::vector<fs::path>{write("1.yaml", spec("a", "ok")), write("2.yaml", spec("b", "ok"))});
    std::vector<std::string> seen;
    auto options = target_.options();
    options.on_result = [&](const SpecResult& r) {
        seen.push_back(r.name + "@" + std::to_string(target_.calls.size()));
    };
    run_specs(
        loaded, [&](const std::string&) -> Target& { return target_; }, options);
    EXPECT_EQ(seen, (std::vector<std::string>{"a@1", "b@2"}));
}

TEST_F(SpecRunnerTest, NoSpecsIsAFailure) {
    RunSummary empty;
    EXPECT_EQ(exit_status(empty), 1);
    auto summary = run_files({write("suite.yaml", "name: empty\ntests: []\n")});
    EXPECT_TRUE(summary.results.empty());
    EXPECT_EQ(exit_status(summary), 1);
}

TEST_F(SpecRunnerTest, ReportShowsEachResultAndEndsWithTheTotals) {
    target_.tool_text("ok", "fine");
    target_.call_duration = std::chrono::milliseconds(12);
    auto summary = run_files({write("1.yaml", spec("passes", "ok")),
                              write("2.yaml",
                                    "name: fails\ntool: ok\narguments: {}\nassertions:\n"
                                    "  - type: contains_text\n    text: nope\n  - type: success\n"),
                              write("3.yaml", spec("skipped one", "ok", "skip: true\n")),
                              write("4.yaml", "name: broken\ntool: ok\nassertions: [{type: success}]\n")});
    std::string text = report(summary);
    EXPECT_EQ(text,
              "✓ passes (12 ms)\n"
              "✗ fails (12 ms)\n"
              "    contains_text: the response does not contain \"nope\"; response text: \"fine\"\n"
              "- skipped one (skipped)\n"
              "✗ broken\n"
              "    " +
                  (dir_ / "4.yaml").string() +
                  ":1: arguments: is required for a tool spec (use {} for none)\n"
                  "\n"
                  "1 skipped\n"
                  "1 passed, 2 failed\n");
}

TEST_F(SpecRunnerTest, ReportLastLineWithoutSkips) {
    target_.tool_text("ok", "fine");
    auto summary = run_files({write("1.yaml", spec("a", "ok")), write("2.yaml", spec("b", "ok"))});
    std::string text = report(summary);
    EXPECT_NOT_CONTAINS(text, "skipped");
    EXPECT_TRUE(text.ends_with("\n2 passed, 0 failed\n")) << text;
}

TEST_F(SpecRunnerTest, MultiLineMessagesAreIndented) {
    SpecResult r;
    r.name = "x";
    r.status = SpecResult::Status::failed;
    r.assertions.push_back({"snapshot", false, "differs:\n  at /a: 1 vs 2"});
    r.notes.push_back("a note");
    std::ostringstream out;
    print_result(r, out);
    EXPECT_EQ(out.str(), "✗ x (0 ms)\n    snapshot: differs:\n      at /a: 1 vs 2\n    a note\n");
}

TEST_F(SpecRunnerTest, JsonReport) {
    target_.tool_text("ok", "fine");
    auto summary = run_files({write("1.yaml", spec("a", "ok")), write("2.yaml", spec("b", "ok", "skip: true\n"))});
    Json report = report_json(summary);
    EXPECT_EQ(report["passed"], 1);
    EXPECT_EQ(report["failed"], 0);
    EXPECT_EQ(report["skipped"], 1);
    ASSERT_EQ(report["results"].size(), 2u);
    EXPECT_EQ(report["results"][0]["name"], "a");
    EXPECT_EQ(report["results"][0]["status"], "passed");
    EXPECT_EQ(report["results"][0]["assertions"][0]["type"], "success");
    EXPECT_EQ(report["results"][1]["status"], "skipped");
}

// ---- JSON paths on their own -----------------------------------------------------------------

using toolport::spec::detail::JsonPath;

TEST(SpecJsonPathTest, Syntax) {
    for (const char* good : {"$", "$.a", "a.b", "$.a[0]", "$[0]", "[1]", "$.a[-1]", "$.a[*]", "$.a.*", "$['a.b']",
                             "$[\"x y\"].z", "$.a[*].b[*]", "$.a.0"}) {
        EXPECT_NO_THROW(JsonPath{good}) << good;
    }
    auto error_of = [](const char* path) {
        try {
            JsonPath p{path};
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_CONTAINS(error_of(""), "it is empty");
    EXPECT_CONTAINS(error_of("$..a"), "recursive descent (..) is not supported");
    EXPECT_CONTAINS(error_of("$.a."), "a member name is missing");
    EXPECT_CONTAINS(error_of("$.a[x]"), "expected an index, '*' or a quoted name");
    EXPECT_CONTAINS(error_of("$.a[1"), "expected an index");
    EXPECT_CONTAINS(error_of("$.a['b"), "unclosed quoted name");
    EXPECT_CONTAINS(error_of("$.a[*"), "expected ']' after '*'");
    EXPECT_CONTAINS(error_of("$a"), "character 2: unexpected 'a'");
    EXPECT_CONTAINS(error_of("$.a]"), "unexpected ']'");
    EXPECT_CONTAINS(error_of("$.a[99999999999999999999]"), "index too large");
}

TEST(SpecJsonPathTest, Evaluation) {
    Json doc = Json::parse(R"({"a": {"b": [10, 20, {"c": "x"}]}, "list": [{"n": 1}, {"m": 2}, {"n": 3}],
                               "obj": {"p": 1, "q": 2}, "0": "zero", "s": "str", "grid": [[1, 2], [3]]})");
    auto at = [&](const char* path) { return JsonPath(path).evaluate(doc); };
    EXPECT_EQ(at("$"), doc);
    EXPECT_EQ(at("$.a.b[1]"), Json(20));
    EXPECT_EQ(at("$.a.b[-1].c"), Json("x"));
    EXPECT_EQ(at("$.a.b.2.c"), Json("x"));
    EXPECT_EQ(at("$[0]"), Json("zero"));                // an index on an object looks up that member, as the kit does
    EXPECT_EQ(at("$.list[*].n"), Json::array({1, 3}));  // elements without the member are left out
    EXPECT_EQ(at("$.obj.*"), Json::array({1, 2}));
    EXPECT_EQ(at("$.grid[*][*]"), Json::array({1, 2, 3}));
    EXPECT_EQ(at("$.grid[*][1]"), Json::array({2}));
    EXPECT_FALSE(at("$.a.b[3]").has_value());
    EXPECT_FALSE(at("$.a.b[-4]").has_value());
    EXPECT_FALSE(at("$.missing").has_value());
    EXPECT_FALSE(at("$.s.length").has_value());
    EXPECT_FALSE(at("$.s[*]").has_value());
    EXPECT_FALSE(at("$.missing[*]").has_value());
    EXPECT_EQ(at("$.list[*].absent"), Json::array());
}

}  // namespace
