// The spec loader: good specs of each kind, every bad field named with file, line and key,
// suites, YAML/JSON reading, and collecting spec files from folders.
#include "spec_test_support.hpp"
#include "util/json.hpp"

using namespace spec_test;
using namespace toolport::spec;
using toolport::Json;

namespace {

class SpecLoaderTest : public SpecFilesTest {};

TEST_F(SpecLoaderTest, ReadsAToolSpecWithEveryField) {
    Spec spec = load_one(R"(
name: "Search - basic"
description: finds things
type: tool
tool: search
arguments:
  query: cloud
  limit: 5
  exact: true
  ratio: 0.5
  quoted: "5"
timeout: 1500
skip: false
only: true
assertions:
  - type: success
  - type: contains_text
    text: found
    caseInsensitive: true
)");
    EXPECT_EQ(spec.name, "Search - basic");
    EXPECT_EQ(spec.description, "finds things");
    EXPECT_EQ(spec.kind, SpecKind::tool);
    EXPECT_EQ(spec.target, "search");
    EXPECT_EQ(spec.arguments,
              (Json{{"query", "cloud"}, {"limit", 5}, {"exact", true}, {"ratio", 0.5}, {"quoted", "5"}}));
    EXPECT_TRUE(spec.arguments["limit"].is_number_integer());
    ASSERT_TRUE(spec.timeout.has_value());
    EXPECT_EQ(spec.timeout->count(), 1500);
    EXPECT_FALSE(spec.skip);
    EXPECT_TRUE(spec.only);
    ASSERT_EQ(spec.assertions.size(), 2u);
    EXPECT_EQ(spec.assertions[0].type, "success");
    EXPECT_EQ(spec.assertions[1].type, "contains_text");
    EXPECT_EQ(spec.assertions[1].params, (Json{{"text", "found"}, {"caseInsensitive", true}}));
    EXPECT_EQ(spec.folder, dir_);
}

TEST_F(SpecLoaderTest, TypeMayBeLeftOutWhenToolIsGiven) {
    Spec spec = load_one("name: t\ntool: echo\narguments: {}\nassertions: [{type: success}]\n");
    EXPECT_EQ(spec.kind, SpecKind::tool);
    EXPECT_EQ(spec.target, "echo");
    EXPECT_FALSE(spec.timeout.has_value());
}

TEST_F(SpecLoaderTest, ReadsPromptAndResourceSpecs) {
    Spec prompt = load_one("name: p\ntype: prompt\nprompt: greet\nassertions: [{type: success}]\n");
    EXPECT_EQ(prompt.kind, SpecKind::prompt);
    EXPECT_EQ(prompt.target, "greet");
    EXPECT_EQ(prompt.arguments, Json::object());
    Spec with_args = load_one(
        "name: p\ntype: prompt\nprompt: greet\narguments: {who: Ada}\nassertions: [{type: success}]\n");
    EXPECT_EQ(with_args.arguments, (Json{{"who", "Ada"}}));
    Spec resource = load_one("name: r\ntype: resource\nuri: test://static-text\nassertions: [{type: success}]\n");
    EXPECT_EQ(resource.kind, SpecKind::resource);
    EXPECT_EQ(resource.target, "test://static-text");
}

TEST_F(SpecLoaderTest, ReadsJsonSpecs) {
    Spec spec = load_one(R"({"name": "j", "tool": "echo", "arguments": {"n": 1},
  "assertions": [{"type": "json_path", "path": "$.a", "expected": [1, "x", null]}]})",
                         "spec.json");
    EXPECT_EQ(spec.target, "echo");
    EXPECT_EQ(spec.assertions[0].params["expected"], Json::parse(R"([1, "x", null])"));
}

TEST_F(SpecLoaderTest, JsonPathExpectedNullIsKeptApartFromNoExpected) {
    Spec with_null = load_one(
        "name: t\ntool: x\narguments: {}\nassertions: [{type: json_path, path: $.a, expected: null}]\n");
    EXPECT_TRUE(with_null.assertions[0].params.contains("expected"));
    Spec without = load_one("name: t\ntool: x\narguments: {}\nassertions: [{type: json_path, path: $.a}]\n");
    EXPECT_FALSE(without.assertions[0].params.contains("expected"));
}

TEST_F(SpecLoaderTest, UnknownTopLevelKeyNamesFileLineAndKey) {
    std::string error = load_error("name: t\ntool: x\narguments: {}\nretries: 3\nassertions: [{type: success}]\n");
    EXPECT_CONTAINS(error, "spec.yaml:4: retries: unknown key for a tool spec");
    EXPECT_CONTAINS(error, "expected one of:");
}

TEST_F(SpecLoaderTest, UnknownKeyInJsonSpecHasItsLineToo) {
    std::string error = load_error(
        "{\n  \"name\": \"t\",\n  \"tool\": \"x\",\n  \"arguments\": {},\n  \"bogus\": 1,\n"
        "  \"assertions\": [{\"type\": \"success\"}]\n}\n",
        "spec.json");
    EXPECT_CONTAINS(error, "spec.json:5: bogus: unknown key");
}

TEST_F(SpecLoaderTest, NameIsRequiredNonEmptyString) {
    EXPECT_CONTAINS(load_error("tool: x\narguments: {}\nassertions: [{type: success}]\n"),
                    "spec.yaml:1: name: is required");
    EXPECT_CONTAINS(load_error("name: ''\ntool: x\narguments: {}\nassertions: [{type: success}]\n"),
                    "name: must not be empty");
    EXPECT_CONTAINS(load_error("name: [a]\ntool: x\narguments: {}\nassertions: [{type: success}]\n"),
                    "spec.yaml:1: name: must be a string, got a list");
}

TEST_F(SpecLoaderTest, DescriptionMustBeAString) {
    EXPECT_CONTAINS(load_error("name: t\ndescription: [a]\ntool: x\narguments: {}\nassertions: [{type: success}]\n"),
                    "spec.yaml:2: description: must be a string, got a list");
}

TEST_F(SpecLoaderTest, TypeMustBeKnownOrImpliedByTool) {
    EXPECT_CONTAINS(load_error("name: t\ntype: 5\ntool: x\narguments: {}\nassertions: [{type: success}]\n"),
                    "spec.yaml:2: type: must be a string, got a number");
    EXPECT_CONTAINS(load_error("name: t\ntype: workflow\ntool: x\narguments: {}\nassertions: [{type: success}]\n"),
                    "spec.yaml:2: type: must be tool, prompt or resource, got \"workflow\"");
    EXPECT_CONTAINS(load_error("name: t\nprompt: x\nassertions: [{type: success}]\n"),
                    "type: is required (tool, prompt or resource)");
}

TEST_F(SpecLoaderTest, TargetKeyFollowsTheKind) {
    EXPECT_CONTAINS(load_error("name: t\ntype: tool\narguments: {}\nassertions: [{type: success}]\n"),
                    "tool: is required");
    EXPECT_CONTAINS(load_error("name: t\ntype: tool\ntool: ''\narguments: {}\nassertions: [{type: success}]\n"),
                    "tool: must not be empty");
    EXPECT_CONTAINS(load_error("name: t\ntype: prompt\ntool: x\nassertions: [{type: success}]\n"),
                    "spec.yaml:3: tool: unknown key for a prompt spec");
    EXPECT_CONTAINS(load_error("name: t\ntype: resource\nuri: a://b\narguments: {}\nassertions: [{type: success}]\n"),
                    "spec.yaml:4: arguments: unknown key for a resource spec");
    EXPECT_CONTAINS(load_error("name: t\ntype: resource\nassertions: [{type: success}]\n"), "uri: is required");
}

TEST_F(SpecLoaderTest, ToolArgumentsAreRequiredAndAMapping) {
    EXPECT_CONTAINS(load_error("name: t\ntool: x\nassertions: [{type: success}]\n"),
                    "arguments: is required for a tool spec (use {} for none)");
    EXPECT_CONTAINS(load_error("name: t\ntool: x\narguments: [1, 2]\nassertions: [{type: success}]\n"),
                    "spec.yaml:3: arguments: must be a mapping of argument names to values, got a list");
}

TEST_F(SpecLoaderTest, TimeoutSkipAndOnlyHaveTheirTypes) {
    const std::string base = "name: t\ntool: x\narguments: {}\nassertions: [{type: success}]\n";
    EXPECT_CONTAINS(load_error(base + "timeout: -5\n"), "spec.yaml:5: timeout: must be a number of milliseconds");
    EXPECT_CONTAINS(load_error(base + "timeout: soon\n"), "got a string");
    EXPECT_CONTAINS(load_error(base + "timeout: 1e12\n"), "at most 86400000");
    EXPECT_CONTAINS(load_error(base + "skip: yes\n"), "spec.yaml:5: skip: must be true or false, got a string");
    EXPECT_CONTAINS(load_error(base + "only: 1\n"), "only: must be true or false, got a number");
}

TEST_F(SpecLoaderTest, AssertionsAreARequiredNonEmptyList) {
    EXPECT_CONTAINS(load_error("name: t\ntool: x\narguments: {}\n"), "assertions: is required");
    EXPECT_CONTAINS(load_error("name: t\ntool: x\narguments: {}\nassertions: []\n"),
                    "spec.yaml:4: assertions: must be a list of at least one assertion, got an empty list");
    EXPECT_CONTAINS(load_error("name: t\ntool: x\narguments: {}\nassertions: success\n"), "got a string");
}

TEST_F(SpecLoaderTest, EachBadAssertionFieldIsNamed) {
    auto error_for = [&](const std::string& assertion) {
        return load_error("name: t\ntool: x\narguments: {}\nassertions:\n  - type: success\n  - " + assertion + "\n");
    };
    EXPECT_CONTAINS(error_for("just text"), "spec.yaml:6: assertions[1]: an assertion must be a mapping");
    EXPECT_CONTAINS(error_for("{text: hi}"), "assertions[1].type: is required");
    EXPECT_CONTAINS(error_for("{type: contains}"),
                    "spec.yaml:6: assertions[1].type: unknown assertion type \"contains\"");
    EXPECT_CONTAINS(error_for("{type: contains}"), "known: success, error, contains_text");
    EXPECT_CONTAINS(
        error_for("{type: error, messageContain: x}"),
        "assertions[1].messageContain: unknown key for the error assertion (expected one of: type, messageContains)");
    EXPECT_CONTAINS(error_for("{type: error, messageContains: 5}"), "assertions[1].messageContains: must be a string");
    EXPECT_CONTAINS(error_for("{type: contains_text}"), "assertions[1].text: is required by contains_text");
    EXPECT_CONTAINS(error_for("{type: contains_text, text: a, caseInsensitive: maybe}"),
                    "caseInsensitive: must be true or false");
    EXPECT_CONTAINS(error_for("{type: response_time_ms, max: 0}"), "max: must be a number greater than 0, got 0");
    EXPECT_CONTAINS(error_for("{type: response_time_ms, max: fast}"), "max: must be a number greater than 0");
    EXPECT_CONTAINS(error_for("{type: json_path}"), "path: is required by json_path");
    EXPECT_CONTAINS(error_for("{type: json_path, path: '$.a..b'}"), "assertions[1].path: invalid JSON path");
    EXPECT_CONTAINS(error_for("{type: regex_match, pattern: 5}"), "pattern: must be a string");
    EXPECT_CONTAINS(error_for("{type: snapshot, file: ../escape.json}"),
                    "assertions[1].file: must stay inside __snapshots__");
    EXPECT_CONTAINS(error_for("{type: snapshot, file: /abs.json}"), "file: must be relative");
    EXPECT_CONTAINS(error_for("{type: snapshot, file: s.json, ignoreFields: [a, 1]}"),
                    "ignoreFields: must be a list of strings");
    EXPECT_CONTAINS(error_for("{type: json_schema}"), "schema: is required by json_schema");
    EXPECT_CONTAINS(error_for("{type: json_schema, schema: /etc/schema.json}"), "schema: must be a path relative");
}

TEST_F(SpecLoaderTest, AssertionProblemsPointAtTheirOwnLine) {
    std::string error = load_error(
        "name: t\ntool: x\narguments: {}\nassertions:\n  - type: success\n  - type: contains_text\n    text: 12\n");
    EXPECT_CONTAINS(error, "spec.yaml:7: assertions[1].text: must be a string, got 12");
}

TEST_F(SpecLoaderTest, EveryProblemOfASpecIsReported) {
    std::string error = load_error("name: t\ntool: x\nbogus: 1\nskip: 3\nassertions: [{type: nope}]\n");
    EXPECT_CONTAINS(error, "bogus: unknown key");
    EXPECT_CONTAINS(error, "skip: must be true or false");
    EXPECT_CONTAINS(error, "arguments: is required");
    EXPECT_CONTAINS(error, "unknown assertion type \"nope\"");
}

TEST_F(SpecLoaderTest, LoadErrorKeepsTheSpecNameWhenItHasOne) {
    auto loaded = load("spec.yaml", "name: Named spec\ntool: x\nassertions: [{type: success}]\n");
    ASSERT_EQ(loaded.entries.size(), 1u);
    EXPECT_EQ(std::get<LoadError>(loaded.entries[0]).name, "Named spec");
    auto unnamed = load("other.yaml", "tool: x\n");
    EXPECT_CONTAINS(std::get<LoadError>(unnamed.entries[0]).name, "other.yaml");
}

TEST_F(SpecLoaderTest, BadFilesAreLoadErrorsWithLines) {
    EXPECT_CONTAINS(load_error("name: t\ntool: [unclosed\n"), "spec.yaml:");
    EXPECT_CONTAINS(load_error("name: t\ntool: [unclosed\n"), "YAML syntax error");
    EXPECT_CONTAINS(load_error("{\"name\": \"t\",\n \"tool\": }", "spec.json"), "spec.json:2: JSON parse error");
    EXPECT_CONTAINS(load_error(""), "spec.yaml: the file is empty");
    EXPECT_CONTAINS(load_error("- a\n- b\n"), "a spec must be a mapping");
    EXPECT_CONTAINS(load_error("name: a\n---\nname: b\n"), "holds 2 YAML documents");
    EXPECT_CONTAINS(load_error("name: a\ntool: x\nname: b\n"), "spec.yaml:3: duplicate key \"name\"");
    EXPECT_CONTAINS(load_error("{\"name\": \"a\",\n\"name\": \"b\"}", "spec.json"),
                    "spec.json:2: duplicate key \"name\"");
    EXPECT_CONTAINS(load_error("name: t\n", "spec.txt"), "unsupported file type \".txt\"");
    EXPECT_CONTAINS(load_error("name: !custom t\n"), "unsupported YAML tag");
    EXPECT_CONTAINS(load_error("name: t\nx: .inf\n"), "cannot be represented in JSON");
    EXPECT_CONTAINS(load_error("name: t\nx: 1e999\n"), "spec.yaml:2: the number 1e999 is too large for JSON");
    EXPECT_CONTAINS(load_error("name: t\nx: 0x1FFFFFFFFFFFFFFFFF\n"),
                    "spec.yaml:2: the number 0x1FFFFFFFFFFFFFFFFF does not fit in 64 bits");
    EXPECT_CONTAINS(load_error("{\"name\": \"t\", \"x\": 1e999}", "spec.json"), "spec.json: JSON number overflow");
}

TEST_F(SpecLoaderTest, MissingFileIsALoadError) {
    auto loaded = load_spec_files(std::vector<fs::path>{dir_ / "absent.yaml"});
    ASSERT_EQ(loaded.entries.size(), 1u);
    EXPECT_CONTAINS(std::get<LoadError>(loaded.entries[0]).problems[0], "cannot be read");
}

TEST_F(SpecLoaderTest, YamlScalarsFollowTheCoreSchema) {
    Spec spec = load_one(R"(name: t
tool: x
arguments:
  int: 42
  negative: -7
  plus: +3
  hex: 0x1F
  octal: 0o17
  float: 2.5
  exp: 1e3
  yes_word: yes
  on_word: on
  true_word: True
  null_tilde: ~
  null_empty:
  quoted_true: "true"
  single_quoted: '12'
  str_tag: !!str 12
  big: 18446744073709551615
  huge: 123456789012345678901234567890
  date: 2024-01-01
  version: 1.2.3
  block: |
    line one
    line two
assertions: [{type: success}]
)");
    const Json& a = spec.arguments;
    EXPECT_EQ(a["int"], 42);
    EXPECT_TRUE(a["int"].is_number_integer());
    EXPECT_EQ(a["negative"], -7);
    EXPECT_EQ(a["plus"], 3);
    EXPECT_EQ(a["hex"], 31);
    EXPECT_EQ(a["octal"], 15);
    EXPECT_EQ(a["float"], 2.5);
    EXPECT_EQ(a["exp"], 1000.0);
    EXPECT_TRUE(a["exp"].is_number_float());
    EXPECT_EQ(a["yes_word"], "yes");
    EXPECT_EQ(a["on_word"], "on");
    EXPECT_EQ(a["true_word"], true);
    EXPECT_TRUE(a["null_tilde"].is_null());
    EXPECT_TRUE(a["null_empty"].is_null());
    EXPECT_EQ(a["quoted_true"], "true");
    EXPECT_EQ(a["single_quoted"], "12");
    EXPECT_EQ(a["str_tag"], "12");
    EXPECT_EQ(a["big"].get<std::uint64_t>(), 18446744073709551615ull);
    EXPECT_TRUE(a["huge"].is_number_float());
    EXPECT_EQ(a["date"], "2024-01-01");
    EXPECT_EQ(a["version"], "1.2.3");
    EXPECT_EQ(a["block"], "line one\nline two\n");
}

TEST_F(SpecLoaderTest, AliasesExpandButBombsAndCyclesAreRefused) {
    Spec spec = load_one("name: t\ntool: x\narguments:\n  a: &v [1, 2]\n  b: *v\nassertions: [{type: success}]\n");
    EXPECT_EQ(spec.arguments["b"], Json::array({1, 2}));

    std::string bomb = "name: t\ntool: x\narguments:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
    for (int i = 1; i < 9; ++i) {
        bomb += "  l" + std::to_string(i) + ": &l" + std::to_string(i) + " [";
        for (int k = 0; k < 10; ++k) bomb += (k ? ", *l" : "*l") + std::to_string(i - 1);
        bomb += "]\n";
    }
    bomb += "assertions: [{type: success}]\n";
    EXPECT_CONTAINS(load_error(bomb), "more than 100000 values");

    EXPECT_CONTAINS(load_error("name: t\ntool: x\narguments: &a {self: *a}\nassertions: [{type: success}]\n"),
                    "nested more than 256 deep");
}

TEST_F(SpecLoaderTest, DeepNestingIsRefusedNotACrash) {
    std::string deep_yaml = "name: t\ntool: x\narguments: {a: " + std::string(5000, '[') + std::string(5000, ']') +
                            "}\n";
    EXPECT_CONTAINS(load_error(deep_yaml), "spec.yaml");
    std::string deep_json = "{\"name\": \"t\", \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
    EXPECT_CONTAINS(load_error(deep_json, "spec.json"), "nested more than 256 deep");
}

TEST_F(SpecLoaderTest, BadSpecDoesNotStopTheOthers) {
    auto good = write("a_good.yaml", "name: good\ntool: x\narguments: {}\nassertions: [{type: success}]\n");
    auto bad = write("b_bad.yaml", "name: bad\ntool: x\narguments: {}\nassertions: [{type: nope}]\n");
    auto also_good = write("c_good.yaml", "name: good too\ntool: x\narguments: {}\nassertions: [{type: success}]\n");
    auto loaded = load_spec_files(std::vector<fs::path>{good, bad, also_good});
    ASSERT_EQ(loaded.entries.size(), 3u);
    EXPECT_TRUE(std::holds_alternative<Spec>(loaded.entries[0]));
    EXPECT_TRUE(std::holds_alternative<LoadError>(loaded.entries[1]));
    EXPECT_TRUE(std::holds_alternative<Spec>(loaded.entries[2]));
    EXPECT_EQ(loaded.spec_count(), 2u);
}

TEST_F(SpecLoaderTest, SuiteWithPathsAndInlineSpecs) {
    write("specs/echo.yaml", "name: echo\ntool: echo\narguments: {}\nassertions: [{type: success}]\n");
    auto suite = write("suite.yaml", R"(name: Smoke
description: the basics
setup:
  serverUrl: http://127.0.0.1:9999/mcp
tests:
  - specs/echo.yaml
  - name: inline
    type: resource
    uri: test://x
    assertions: [{type: success}]
)");
    auto loaded = load_spec_files(std::vector<fs::path>{suite});
    ASSERT_EQ(loaded.entries.size(), 2u);
    const Spec& from_file = std::get<Spec>(loaded.entries[0]);
    EXPECT_EQ(from_file.name, "echo");
    EXPECT_EQ(from_file.suite, "Smoke");
    EXPECT_EQ(from_file.server_url, "http://127.0.0.1:9999/mcp");
    EXPECT_EQ(from_file.folder, dir_ / "specs");
    const Spec& inline_spec = std::get<Spec>(loaded.entries[1]);
    EXPECT_EQ(inline_spec.name, "inline");
    EXPECT_EQ(inline_spec.kind, SpecKind::resource);
    EXPECT_EQ(inline_spec.folder, dir_);
    EXPECT_EQ(inline_spec.file, suite);
}

TEST_F(SpecLoaderTest, SuiteProblemsAreNamedAndGoodTestsStillLoad) {
    write("specs/echo.yaml", "name: echo\ntool: echo\narguments: {}\nassertions: [{type: success}]\n");
    write("nested.yaml", "name: inner\ntests: []\n");
    auto suite = write("suite.yaml", R"(name: S
setup:
  serverUrl: not-a-url
extra: 1
tests:
  - specs/echo.yaml
  - missing.yaml
  - nested.yaml
  - 42
  - name: bad inline
    tool: x
    arguments: {}
    assertions: [{type: contains_text}]
)");
    auto loaded = load_spec_files(std::vector<fs::path>{suite});
    ASSERT_EQ(loaded.entries.size(), 6u);
    const auto& suite_error = std::get<LoadError>(loaded.entries[0]);
    std::string all;
    for (const auto& p : suite_error.problems) all += p + "\n";
    EXPECT_CONTAINS(all, "suite.yaml:3: setup.serverUrl: must be an http:// or https:// URL");
    EXPECT_CONTAINS(all, "suite.yaml:4: extra: unknown key for a suite");
    EXPECT_EQ(std::get<Spec>(loaded.entries[1]).name, "echo");
    EXPECT_CONTAINS(std::get<LoadError>(loaded.entries[2]).problems[0], "suite.yaml:7: tests[1]:");
    EXPECT_CONTAINS(std::get<LoadError>(loaded.entries[2]).problems[0], "missing.yaml: cannot be read");
    EXPECT_CONTAINS(std::get<LoadError>(loaded.entries[3]).problems[0], "is a suite; a suite may list spec files only");
    EXPECT_CONTAINS(std::get<LoadError>(loaded.entries[4]).problems[0],
                    "suite.yaml:9: tests[3]: must be a spec file path");
    const auto& inline_error = std::get<LoadError>(loaded.entries[5]);
    EXPECT_EQ(inline_error.name, "bad inline");
    EXPECT_CONTAINS(inline_error.problems[0],
                    "suite.yaml:13: tests[4].assertions[0].text: is required by contains_text");
}

TEST_F(SpecLoaderTest, SuiteTestsMustBeAList) {
    EXPECT_CONTAINS(load_error("name: S\ntests: just-one.yaml\n"), "spec.yaml:2: tests: must be a list, got a string");
    EXPECT_CONTAINS(load_error("tests: []\n"), "spec.yaml:1: name: is required");
    EXPECT_CONTAINS(load_error("name: S\nsetup: http://x\ntests: []\n"), "spec.yaml:2: setup: must be a mapping");
}

TEST_F(SpecLoaderTest, SpecListedBySuiteRunsOnlyOnce) {
    auto spec = write("echo.yaml", "name: echo\ntool: echo\narguments: {}\nassertions: [{type: success}]\n");
    auto suite = write("suite.yaml", "name: S\ntests: [echo.yaml]\n");
    auto loaded = load_spec_files(std::vector<fs::path>{spec, suite});
    ASSERT_EQ(loaded.entries.size(), 1u);
    EXPECT_EQ(std::get<Spec>(loaded.entries[0]).suite, "S");
}

TEST_F(SpecLoaderTest, CollectsYamlFilesFromFoldersSorted) {
    write("b.yaml", "x");
    write("a.yml", "x");
    write("sub/c.yaml", "x");
    write("notes.txt", "x");
    write("schema.json", "{}");
    write("__snapshots__/s.yaml", "x");
    write(".hidden/h.yaml", "x");
    auto explicit_json = write("explicit.json", "{}");
    auto collected = collect_spec_files({dir_, explicit_json, dir_ / "nowhere"});
    std::vector<fs::path> expected{dir_ / "a.yml", dir_ / "b.yaml", dir_ / "sub/c.yaml", explicit_json};
    EXPECT_EQ(collected.files, expected);
    ASSERT_EQ(collected.errors.size(), 1u);
    EXPECT_CONTAINS(collected.errors[0].problems[0], "nowhere: no such file or folder");
}

}  // namespace

namespace {

// The specs the integration test runs load cleanly (and the deliberately broken one does not).
TEST(SpecRepositoryFilesTest, ConformanceSpecsLoad) {
    fs::path specs = fs::path(__FILE__).parent_path().parent_path() / "specs";
    auto collected = collect_spec_files({specs / "conformance", specs / "conformance" / "unknown_tool.json"});
    EXPECT_TRUE(collected.errors.empty());
    auto loaded = load_spec_files(collected);
    for (const auto& entry : loaded.entries) {
        if (const auto* error = std::get_if<LoadError>(&entry)) ADD_FAILURE() << error->problems.front();
    }
    EXPECT_EQ(loaded.spec_count(), 7u);

    auto failing = load_spec_files(collect_spec_files({specs / "failing"}));
    ASSERT_EQ(failing.entries.size(), 3u);
    EXPECT_CONTAINS(std::get<LoadError>(failing.entries[0]).problems.front(),
                    "bad_key.yaml:7: assertions[0].messageContain: unknown key");
}

}  // namespace
