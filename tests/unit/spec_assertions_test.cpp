// Each assertion type passing and failing, through the loader and the runner against a
// scripted Target.
#include "spec_test_support.hpp"
#include "util/json.hpp"

using namespace spec_test;
using namespace toolport::spec;
using toolport::Json;

namespace {

class SpecAssertionTest : public SpecFilesTest {
protected:
    // A tool spec calling `tool` with the given assertions (YAML list items).
    static std::string tool_spec(const std::string& assertions, const std::string& tool = "t") {
        return "name: case\ntool: " + tool + "\narguments: {}\nassertions:\n" + assertions;
    }

    SpecResult run_tool(const std::string& text_reply, const std::string& assertions, bool is_error = false) {
        target_.tool_text("t", text_reply, is_error);
        return run_one(tool_spec(assertions), target_);
    }

    FakeTarget target_;
};

// ---- success / error -----------------------------------------------------------------------

TEST_F(SpecAssertionTest, SuccessPassesOnAResult) {
    auto r = run_tool("fine", "  - type: success\n");
    EXPECT_EQ(r.status, SpecResult::Status::passed) << failures(r);
}

TEST_F(SpecAssertionTest, SuccessFailsOnIsError) {
    auto r = run_tool("bad input", "  - type: success\n", true);
    EXPECT_EQ(r.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(r), "success: expected success, but the tool returned isError: true: \"bad input\"");
}

TEST_F(SpecAssertionTest, SuccessFailsWhenTheCallThrows) {
    auto r = run_one(tool_spec("  - type: success\n", "absent"), target_);
    EXPECT_EQ(r.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(r),
                    "success: expected success, but the call failed: JSON-RPC error -32602: Unknown tool: absent");
}

TEST_F(SpecAssertionTest, SuccessFailsOnATransportError) {
    target_.tools["t"] = [](const Json&) -> Json { throw std::runtime_error("connection refused"); };
    auto r = run_one(tool_spec("  - type: success\n"), target_);
    EXPECT_CONTAINS(failures(r), "the call failed: connection refused");
}

TEST_F(SpecAssertionTest, ErrorPassesOnIsErrorAndOnAFailedCall) {
    EXPECT_EQ(run_tool("UEI must be 12 characters", "  - type: error\n", true).status, SpecResult::Status::passed);
    auto r = run_one(tool_spec("  - type: error\n    messageContains: unknown TOOL\n", "absent"), target_);
    EXPECT_EQ(r.status, SpecResult::Status::passed) << failures(r);
    auto by_code = run_one(tool_spec("  - type: error\n    messageContains: '-32602'\n", "absent"), target_);
    EXPECT_EQ(by_code.status, SpecResult::Status::passed) << failures(by_code);
}

TEST_F(SpecAssertionTest, ErrorFailsOnSuccess) {
    auto r = run_tool("all good", "  - type: error\n");
    EXPECT_EQ(r.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(r), "error: expected an error, but the call succeeded; response text: \"all good\"");
}

TEST_F(SpecAssertionTest, ErrorMessageContainsIsCaseInsensitive) {
    auto pass = run_tool("Invalid UEI: too short", "  - type: error\n    messageContains: uei\n", true);
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);
    auto fail = run_tool("Invalid UEI: too short", "  - type: error\n    messageContains: api key\n", true);
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(
        failures(fail),
        "the error message does not contain \"api key\" (case-insensitive); it is \"Invalid UEI: too short\"");
}

// ---- contains_text / not_contains_text -------------------------------------------------------

TEST_F(SpecAssertionTest, ContainsText) {
    EXPECT_EQ(run_tool("status: healthy", "  - type: contains_text\n    text: healthy\n").status,
              SpecResult::Status::passed);
    auto fail = run_tool("status: healthy", "  - type: contains_text\n    text: HEALTHY\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(fail),
                    "contains_text: the response does not contain \"HEALTHY\"; response text: \"status: healthy\"");
    auto folded = run_tool("status: healthy",
                           "  - type: contains_text\n    text: HEALTHY\n    caseInsensitive: true\n");
    EXPECT_EQ(folded.status, SpecResult::Status::passed) << failures(folded);
}

TEST_F(SpecAssertionTest, ContainsTextJoinsTextBlocksWithNewlines) {
    target_.tools["t"] = [](const Json&) {
        return Json{{"content", Json::array({{{"type", "text"}, {"text", "one"}},
                                             {{"type", "image"}, {"data", "AAAA"}, {"mimeType", "image/png"}},
                                             {{"type", "text"}, {"text", "two"}}})}};
    };
    auto r = run_one(tool_spec("  - type: contains_text\n    text: \"one\\ntwo\"\n"), target_);
    EXPECT_EQ(r.status, SpecResult::Status::passed) << failures(r);
}

TEST_F(SpecAssertionTest, NotContainsText) {
    EXPECT_EQ(run_tool("all fine", "  - type: not_contains_text\n    text: error\n").status, SpecResult::Status::passed);
    auto fail = run_tool("an Error happened",
                         "  - type: not_contains_text\n    text: error\n    caseInsensitive: true\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(fail),
                    "not_contains_text: the response contains \"error\" (case-insensitive), which it should not");
}

// ---- response_time_ms ------------------------------------------------------------------------

TEST_F(SpecAssertionTest, ResponseTimeUsesTheMeasuredDuration) {
    target_.call_duration = std::chrono::milliseconds(40);
    auto pass = run_tool("x", "  - type: response_time_ms\n    max: 40\n");
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);
    EXPECT_EQ(pass.elapsed.count(), 40);
    auto fail = run_tool("x", "  - type: response_time_ms\n    max: 39.5\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(fail), "response_time_ms: the response took 40 ms, more than the maximum of 39.5 ms");
}

// ---- json_path -------------------------------------------------------------------------------

const char* kContracts = R"({"data": [{"vendor": {"uei": "N553JH75Z8K1", "name": "Acme"}, "amount": 10},
                                      {"vendor": {"uei": "J3RW5C5KVLZ1", "name": "Beta"}, "amount": 2.5}],
                             "total": 2, "flags": {"cached": false}, "empty": [], "nothing": null,
                             "dotted.key": "yes"})";

TEST_F(SpecAssertionTest, JsonPathExpectedValue) {
    auto pass = run_tool(kContracts,
                         "  - type: json_path\n    path: $.data[0].vendor.uei\n    expected: N553JH75Z8K1\n");
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);
    auto fail = run_tool(kContracts,
                         "  - type: json_path\n    path: $.data[1].vendor.uei\n    expected: N553JH75Z8K1\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(fail),
                    "json_path: path \"$.data[1].vendor.uei\" is \"J3RW5C5KVLZ1\", expected \"N553JH75Z8K1\"");
}

TEST_F(SpecAssertionTest, JsonPathExistenceWhenExpectedIsLeftOut) {
    EXPECT_EQ(run_tool(kContracts, "  - type: json_path\n    path: $.flags.cached\n").status,
              SpecResult::Status::passed);
    EXPECT_EQ(run_tool(kContracts, "  - type: json_path\n    path: $.nothing\n").status, SpecResult::Status::passed);
    auto fail = run_tool(kContracts, "  - type: json_path\n    path: $.data[5].vendor\n");
    EXPECT_CONTAINS(failures(fail), "json_path: path \"$.data[5].vendor\" does not exist in the response");
}

TEST_F(SpecAssertionTest, JsonPathTypeMismatchIsExplained) {
    auto fail = run_tool(kContracts, "  - type: json_path\n    path: $.total\n    expected: \"2\"\n");
    EXPECT_CONTAINS(failures(fail), "path \"$.total\" is 2 (a number, not a string), expected \"2\"");
}

TEST_F(SpecAssertionTest, JsonPathComparesDeeplyAndNumbersByValue) {
    auto pass = run_tool(kContracts, R"(  - type: json_path
    path: $.data[0]
    expected: {amount: 10.0, vendor: {name: Acme, uei: N553JH75Z8K1}}
  - type: json_path
    path: $.empty
    expected: []
  - type: json_path
    path: $.nothing
    expected: null
)");
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);
    auto fail = run_tool(kContracts, "  - type: json_path\n    path: $.data[0].vendor\n    expected: {name: Acme}\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
}

TEST_F(SpecAssertionTest, JsonPathWildcardsCollectMatches) {
    auto pass = run_tool(kContracts, R"(  - type: json_path
    path: $.data[*].vendor.name
    expected: [Acme, Beta]
  - type: json_path
    path: $.data[-1].amount
    expected: 2.5
  - type: json_path
    path: $.data.1.vendor.name
    expected: Beta
  - type: json_path
    path: "$['dotted.key']"
    expected: "yes"
  - type: json_path
    path: $.empty[*]
    expected: []
  - type: json_path
    path: data[0].amount
    expected: 10
)");
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);
}

TEST_F(SpecAssertionTest, JsonPathNeedsJsonText) {
    auto fail = run_tool("plain words", "  - type: json_path\n    path: $.a\n");
    EXPECT_CONTAINS(failures(fail), "json_path: the response text is not valid JSON");
    auto failed_call = run_one(tool_spec("  - type: json_path\n    path: $.a\n", "absent"), target_);
    EXPECT_CONTAINS(failures(failed_call), "there is no response to check: the call failed (JSON-RPC error -32602");
}

TEST_F(SpecAssertionTest, JsonPathOnPromptsAndResourcesUsesTheResultObject) {
    target_.resources["test://doc"] = {{"contents", Json::array({{{"uri", "test://doc"}, {"text", "hello"}}})}};
    auto r = run_one(
        "name: r\ntype: resource\nuri: test://doc\nassertions:\n"
        "  - type: json_path\n    path: $.contents[0].uri\n    expected: test://doc\n"
        "  - type: contains_text\n    text: hello\n",
        target_);
    EXPECT_EQ(r.status, SpecResult::Status::passed) << failures(r);
    target_.prompts["greet"] = [](const Json& args) {
        return Json{
            {"messages", Json::array({{{"role", "user"},
                                       {"content", {{"type", "text"}, {"text", "Hi " + args.value("who", "?")}}}}})}};
    };
    auto p = run_one(
        "name: p\ntype: prompt\nprompt: greet\narguments: {who: Ada}\nassertions:\n"
        "  - type: json_path\n    path: $.messages[0].role\n    expected: user\n"
        "  - type: contains_text\n    text: Hi Ada\n",
        target_);
    EXPECT_EQ(p.status, SpecResult::Status::passed) << failures(p);
}

// ---- regex_match -----------------------------------------------------------------------------

TEST_F(SpecAssertionTest, RegexMatch) {
    auto pass = run_tool("award CONT_AWD_ABC123 found", "  - type: regex_match\n    pattern: CONT_AWD_[A-Z0-9]+\n");
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);
    auto fail = run_tool("award cont_awd_abc123 found", "  - type: regex_match\n    pattern: CONT_AWD_[A-Z0-9]+\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(fail), "regex_match: the response does not match /CONT_AWD_[A-Z0-9]+/");
    auto folded = run_tool("award cont_awd_abc123 found",
                           "  - type: regex_match\n    pattern: CONT_AWD_[A-Z0-9]+\n    flags: gi\n");
    EXPECT_EQ(folded.status, SpecResult::Status::passed) << failures(folded);
}

TEST_F(SpecAssertionTest, RegexFlagsMultilineDotAllAndSticky) {
    const std::string text = "first line\nsecond line";
    EXPECT_EQ(run_tool(text, "  - type: regex_match\n    pattern: ^second\n").status, SpecResult::Status::failed);
    EXPECT_EQ(run_tool(text, "  - type: regex_match\n    pattern: ^second\n    flags: m\n").status,
              SpecResult::Status::passed);
    EXPECT_EQ(run_tool(text, "  - type: regex_match\n    pattern: line.second\n").status, SpecResult::Status::failed);
    EXPECT_EQ(run_tool(text, "  - type: regex_match\n    pattern: line.second\n    flags: s\n").status,
              SpecResult::Status::passed);
    EXPECT_EQ(run_tool(text, "  - type: regex_match\n    pattern: line\n    flags: y\n").status,
              SpecResult::Status::failed);
    EXPECT_EQ(run_tool(text, "  - type: regex_match\n    pattern: first\n    flags: y\n").status,
              SpecResult::Status::passed);
}

TEST_F(SpecAssertionTest, RegexDotIsOneCodePoint) {
    EXPECT_EQ(run_tool("dragon 🐲!", "  - type: regex_match\n    pattern: \"dragon .!\"\n").status,
              SpecResult::Status::passed);
}

TEST_F(SpecAssertionTest, RegexBackReferences) {
    EXPECT_EQ(run_tool("say hello hello", "  - type: regex_match\n    pattern: (\\w+) \\1\n").status,
              SpecResult::Status::passed);
    auto too_long = run_tool(std::string(3000, 'a'), "  - type: regex_match\n    pattern: (a)\\1\n");
    EXPECT_CONTAINS(failures(too_long), "has back-references");
}

TEST_F(SpecAssertionTest, BadPatternOrFlagFailsTheAssertionWithTheReason) {
    auto bad = run_tool("x", "  - type: regex_match\n    pattern: \"([a-z\"\n");
    EXPECT_EQ(bad.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(bad), "regex_match: invalid regular expression /([a-z/:");
    auto costly = run_tool("x", "  - type: regex_match\n    pattern: a{1000000}\n");
    EXPECT_CONTAINS(failures(costly), "invalid regular expression /a{1000000}/:");
    auto flag = run_tool("x", "  - type: regex_match\n    pattern: x\n    flags: q\n");
    EXPECT_CONTAINS(failures(flag), "unknown flag 'q'");
    auto twice = run_tool("x", "  - type: regex_match\n    pattern: x\n    flags: ii\n");
    EXPECT_CONTAINS(failures(twice), "flag 'i' is given twice");
    auto lookbehind = run_tool("x", "  - type: regex_match\n    pattern: (?<=a)b\n");
    EXPECT_CONTAINS(failures(lookbehind), "invalid regular expression");
}

TEST_F(SpecAssertionTest, RegexOnLongTextDoesNotBlowTheStack) {
    auto r = run_tool(std::string(200000, 'a') + "b", "  - type: regex_match\n    pattern: (a|aa)*b$\n");
    EXPECT_EQ(r.status, SpecResult::Status::passed) << failures(r);
}

// ---- snapshot --------------------------------------------------------------------------------

TEST_F(SpecAssertionTest, SnapshotIsWrittenOnFirstRunThenCompared) {
    target_.tool_text("t", R"({"rows": [1, 2], "execution": {"duration_ms": 12}})");
    const std::string spec = tool_spec("  - type: snapshot\n    file: rows.json\n");
    auto first = run_one(spec, target_);
    EXPECT_EQ(first.status, SpecResult::Status::passed) << failures(first);
    ASSERT_EQ(first.notes.size(), 1u);
    EXPECT_EQ(first.notes[0], "wrote snapshot __snapshots__/rows.json");
    EXPECT_EQ(read("__snapshots__/rows.json"),
              "{\n  \"execution\": {\n    \"duration_ms\": 12\n  },\n  \"rows\": [\n    1,\n    2\n  ]\n}\n");

    auto same = run_one(spec, target_);
    EXPECT_EQ(same.status, SpecResult::Status::passed) << failures(same);
    EXPECT_TRUE(same.notes.empty());

    target_.tool_text("t", R"({"rows": [1, 3], "execution": {"duration_ms": 12}, "extra": true})");
    auto changed = run_one(spec, target_);
    EXPECT_EQ(changed.status, SpecResult::Status::failed);
    std::string why = failures(changed);
    EXPECT_CONTAINS(why, "snapshot: the response differs from snapshot __snapshots__/rows.json");
    EXPECT_CONTAINS(why, "at /rows/1: snapshot has 2, response has 3");
    EXPECT_CONTAINS(why, "at /extra: not in the snapshot (response has true)");
}

TEST_F(SpecAssertionTest, SnapshotIgnoresFieldsAtAnyDepth) {
    target_.tool_text("t",
                      R"({"id": 1, "requestId": "a", "items": [{"v": 1, "timestamp": 100}], "meta": {"timestamp": 5}})");
    const std::string spec = tool_spec(
        "  - type: snapshot\n    file: nested/ignore.json\n    ignoreFields: [timestamp, requestId]\n");
    ASSERT_EQ(run_one(spec, target_).status, SpecResult::Status::passed);
    EXPECT_EQ(Json::parse(read("__snapshots__/nested/ignore.json")),
              Json::parse(R"({"id": 1, "items": [{"v": 1}], "meta": {}})"));

    target_.tool_text("t",
                      R"({"id": 1, "requestId": "b", "items": [{"v": 1, "timestamp": 999}], "meta": {"timestamp": 6}})");
    auto r = run_one(spec, target_);
    EXPECT_EQ(r.status, SpecResult::Status::passed) << failures(r);

    target_.tool_text("t", R"({"id": 2, "requestId": "b", "items": [{"v": 1, "timestamp": 999}], "meta": {}})");
    auto changed = run_one(spec, target_);
    EXPECT_CONTAINS(failures(changed), "at /id: snapshot has 1, response has 2");
}

TEST_F(SpecAssertionTest, UpdateSnapshotsRewritesTheFile) {
    target_.tool_text("t", R"({"v": 1})");
    const std::string spec = tool_spec("  - type: snapshot\n    file: v.json\n");
    ASSERT_EQ(run_one(spec, target_).status, SpecResult::Status::passed);
    target_.tool_text("t", R"({"v": 2})");
    EXPECT_EQ(run_one(spec, target_).status, SpecResult::Status::failed);

    auto options = target_.options();
    options.update_snapshots = true;
    auto updated = run_one(spec, target_, options);
    EXPECT_EQ(updated.status, SpecResult::Status::passed) << failures(updated);
    ASSERT_EQ(updated.notes.size(), 1u);
    EXPECT_EQ(updated.notes[0], "updated snapshot __snapshots__/v.json");
    EXPECT_EQ(Json::parse(read("__snapshots__/v.json")), Json::parse(R"({"v": 2})"));
    EXPECT_EQ(run_one(spec, target_).status, SpecResult::Status::passed);
}

TEST_F(SpecAssertionTest, SnapshotOfPlainTextAndOfACorruptFile) {
    target_.tool_text("t", "just words");
    const std::string spec = tool_spec("  - type: snapshot\n    file: words.json\n");
    ASSERT_EQ(run_one(spec, target_).status, SpecResult::Status::passed);
    EXPECT_EQ(read("__snapshots__/words.json"), "\"just words\"\n");

    write("__snapshots__/words.json", "{ not json");
    auto corrupt = run_one(spec, target_);
    EXPECT_EQ(corrupt.status, SpecResult::Status::failed);
    EXPECT_CONTAINS(failures(corrupt), "snapshot __snapshots__/words.json cannot be used: JSON parse error");
    EXPECT_CONTAINS(failures(corrupt), "--update-snapshots");
}

TEST_F(SpecAssertionTest, SnapshotOfAFailedCallFailsWithoutWriting) {
    auto r = run_one(tool_spec("  - type: snapshot\n    file: never.json\n", "absent"), target_);
    EXPECT_CONTAINS(failures(r), "there is no response to compare: the call failed");
    EXPECT_FALSE(fs::exists(dir_ / "__snapshots__/never.json"));
}

// ---- json_schema -----------------------------------------------------------------------------

TEST_F(SpecAssertionTest, JsonSchemaPassAndFail) {
    write("schemas/contracts.schema.json", R"({
        "type": "object",
        "required": ["data", "total"],
        "properties": {
            "total": {"type": "integer", "minimum": 0},
            "data": {"type": "array", "items": {"type": "object", "required": ["vendor"]}}
        }})");
    auto pass = run_tool(kContracts, "  - type: json_schema\n    schema: schemas/contracts.schema.json\n");
    EXPECT_EQ(pass.status, SpecResult::Status::passed) << failures(pass);

    auto fail = run_tool(R"({"data": [{"amount": 1}], "total": -1})",
                         "  - type: json_schema\n    schema: schemas/contracts.schema.json\n");
    EXPECT_EQ(fail.status, SpecResult::Status::failed);
    std::string why = failures(fail);
    EXPECT_CONTAINS(why, "json_schema: the response does not match schema \"schemas/contracts.schema.json\":");
    EXPECT_CONTAINS(why, "at /total:");
    EXPECT_CONTAINS(why, "at /data/0:");
}

TEST_F(SpecAssertionTest, JsonSchemaInYamlAndDraft7) {
    write("s.yaml", "$schema: http://json-schema.org/draft-07/schema#\ntype: object\nrequired: [total]\n");
    EXPECT_EQ(run_tool(kContracts, "  - type: json_schema\n    schema: s.yaml\n").status, SpecResult::Status::passed);
    EXPECT_EQ(run_tool("{}", "  - type: json_schema\n    schema: s.yaml\n").status, SpecResult::Status::failed);
}

TEST_F(SpecAssertionTest, JsonSchemaProblemsAreClearFailures) {
    auto missing = run_tool(kContracts, "  - type: json_schema\n    schema: nowhere.json\n");
    EXPECT_CONTAINS(failures(missing), "json_schema: schema file \"nowhere.json\" cannot be read");
    write("broken.json", R"({"type": "object", "minimum": "ten"})");
    auto broken = run_tool(kContracts, "  - type: json_schema\n    schema: broken.json\n");
    EXPECT_CONTAINS(failures(broken), "schema file \"broken.json\" is not a usable JSON Schema");
    write("ok.json", R"({"type": "object"})");
    auto not_json = run_tool("words", "  - type: json_schema\n    schema: ok.json\n");
    EXPECT_CONTAINS(failures(not_json), "json_schema: the response text is not valid JSON");
}

}  // namespace
