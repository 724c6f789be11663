// Unknown argument names (issue 29, defect 2): the closest accepted name for the mistakes
// models really make, the names a schema accepts, and the validation stage's refusal for
// a tool of an own pack (always strict) and for a schema that says additionalProperties:
// false; plus the engine's guarantee that an error result never carries structuredContent
// that breaks the tool's outputSchema (defect 1).
#include <gtest/gtest.h>

#include "pipeline/stages/validation.hpp"
#include "schema/argument_names.hpp"
#include "server/error_result_guard.hpp"
#include "server/registry.hpp"
#include "server/tool_error.hpp"

using namespace toolport;
using toolport::schema::closest_names;

namespace {

// The argument names of search_tango_contracts and of the context pack's searchPatterns.
const std::vector<std::string> kContracts = {"api_key",       "award_date_end", "award_date_start", "awarding_agency",
                                             "cursor",        "fiscal_year",    "funding_agency",   "limit",
                                             "min_obligated", "naics_code",     "ordering",         "psc_code",
                                             "query",         "set_aside_type", "vendor_name",      "vendor_uei"};
const std::vector<std::string> kPatterns = {"category", "includeExecutable", "keyword", "limit"};

using Names = std::vector<std::string>;

TEST(ArgumentNames, TheMistakesModelsMakeFindTheIntendedName) {
    EXPECT_EQ(closest_names("start_date", kContracts), Names{"award_date_start"});
    EXPECT_EQ(closest_names("end_date", kContracts), Names{"award_date_end"});
    EXPECT_EQ(closest_names("keyword", kContracts), Names{"query"});
    EXPECT_EQ(closest_names("search", kContracts), Names{"query"});
    EXPECT_EQ(closest_names("query", kPatterns), Names{"keyword"});
    EXPECT_EQ(closest_names("awardDateStart", kContracts), Names{"award_date_start"});
    EXPECT_EQ(closest_names("AwardDateStart", kContracts), Names{"award_date_start"});
    EXPECT_EQ(closest_names("keywrod", kPatterns), Names{"keyword"});
    EXPECT_EQ(closest_names("include_executable", kPatterns), Names{"includeExecutable"});
    EXPECT_EQ(closest_names("includeExecutables", kPatterns), Names{"includeExecutable"});
    EXPECT_EQ(closest_names("vendor", kContracts), (Names{"vendor_name", "vendor_uei"}));
    EXPECT_EQ(closest_names("naics", kContracts), Names{"naics_code"});
    EXPECT_EQ(closest_names("order_by", kContracts), Names{"ordering"});
    EXPECT_EQ(closest_names("max_results", kContracts), Names{"limit"});
    EXPECT_EQ(closest_names("limt", kPatterns), Names{"limit"});
    EXPECT_EQ(closest_names("fy", kContracts), Names{"fiscal_year"});
    EXPECT_EQ(closest_names("categories", kPatterns), Names{"category"});
    EXPECT_EQ(closest_names("msg", Names{"message", "channel"}), Names{"message"});
    EXPECT_EQ(closest_names("item_id", Names{"itemId", "If-Match"}), Names{"itemId"});
}

TEST(ArgumentNames, AnAmbiguousNameSuggestsEachCandidateOfTheTie) {
    EXPECT_EQ(closest_names("agency", kContracts), (Names{"awarding_agency", "funding_agency"}));
}

TEST(ArgumentNames, NothingIsSuggestedForAnUnrelatedName) {
    EXPECT_TRUE(closest_names("zzz", kContracts).empty());
    EXPECT_TRUE(closest_names("temperature", kPatterns).empty());
    EXPECT_TRUE(closest_names("id", kContracts).empty()) << "not api_key";
    EXPECT_TRUE(closest_names("x", kPatterns).empty());
}

TEST(ArgumentNames, ClosenessIsOneForTheSameWordsAndZeroForNoneShared) {
    EXPECT_DOUBLE_EQ(schema::name_closeness("award_date_start", "awardDateStart"), 1.0);
    EXPECT_DOUBLE_EQ(schema::name_closeness("banana", "award_date_start"), 0.0);
    EXPECT_GT(schema::name_closeness("start_date", "award_date_start"),
              schema::name_closeness("start_date", "award_date_end"));
}

TEST(ArgumentNames, AcceptedNamesComeFromPropertiesAndTheirBranches) {
    Json schema = {{"type", "object"},
                   {"properties", {{"a", Json::object()}, {"b", Json::object()}}},
                   {"anyOf", Json::array({{{"properties", {{"c", Json::object()}}}},
                                          {{"properties", {{"a", Json::object()}}}}})}};
    EXPECT_EQ(schema::accepted_argument_names(schema), (Names{"a", "b", "c"}));
    EXPECT_EQ(schema::accepted_argument_names(Json{{"type", "object"}}), Names{});
    EXPECT_FALSE(schema::accepted_argument_names(Json{{"type", "object"}, {"patternProperties", {{"^x", true}}}}));
    EXPECT_FALSE(
        schema::accepted_argument_names(Json{{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}));
    EXPECT_FALSE(schema::accepted_argument_names(Json{{"$ref", "#/$defs/x"}}));
}

std::shared_ptr<const ToolSpec> tool_with(Json input_schema, bool strict) {
    auto spec = std::make_shared<ToolSpec>();
    spec->name = "search_tango_contracts";
    spec->input_schema = std::move(input_schema);
    spec->strict_arguments = strict;
    return spec;
}

Json contracts_schema(bool closed = false) {
    Json props = Json::object();
    for (const auto& n : kContracts) props[n] = {{"type", "string"}};
    Json s = {{"type", "object"}, {"properties", props}};
    if (closed) s["additionalProperties"] = false;
    return s;
}

TEST(UnknownArguments, AStrictToolRefusesThemNamingEachWithItsClosestName) {
    pipeline::ValidationStage stage;
    auto tool = tool_with(contracts_schema(), true);
    auto error = stage.check(tool, {{"query", "cloud"}, {"agency", "GSA"}, {"start_date", "2025-01-01"}});
    ASSERT_TRUE(error);
    EXPECT_EQ(error->code(), ToolErrorCode::invalid_argument);
    Json j = error->to_json();
    EXPECT_EQ(j["unknown_arguments"], (Json{"agency", "start_date"}));
    EXPECT_EQ(j["did_you_mean"]["start_date"], "award_date_start");
    EXPECT_EQ(j["did_you_mean"]["agency"], (Json{"awarding_agency", "funding_agency"}));
    EXPECT_EQ(j["accepted_arguments"].size(), kContracts.size());
    EXPECT_EQ(j["parameter"], "agency");
    const std::string text = error->to_result().content[0]["text"];
    EXPECT_NE(text.find("INVALID_ARGUMENT"), std::string::npos) << text;
    EXPECT_NE(text.find("Unknown arguments \"agency\", \"start_date\""), std::string::npos) << text;
    EXPECT_NE(text.find("\"award_date_start\""), std::string::npos) << text;
    EXPECT_NE(text.find("Accepted: api_key, award_date_end"), std::string::npos) << text;
    EXPECT_NE(text.find("Suggestion: Rename \"agency\" to \"awarding_agency\" or \"funding_agency\"; rename "
                        "\"start_date\" to \"award_date_start\""),
              std::string::npos)
        << text;
}

TEST(UnknownArguments, WithoutSuggestionTheAcceptedNamesAreTheAdvice) {
    pipeline::ValidationStage stage;
    auto error = stage.check(tool_with(contracts_schema(), true), {{"zzz", 1}});
    ASSERT_TRUE(error);
    Json j = error->to_json();
    EXPECT_FALSE(j.contains("did_you_mean"));
    EXPECT_NE(j["suggestion"].get<std::string>().find("Use only the accepted argument names"), std::string::npos);
    auto none = stage.check(tool_with(Json{{"type", "object"}}, true), {{"x", 1}});
    ASSERT_TRUE(none);
    EXPECT_NE(std::string(none->what()).find("It accepts no arguments"), std::string::npos) << none->what();
}

TEST(UnknownArguments, AnOpenSchemaOfANonStrictToolLetsThemThrough) {
    pipeline::ValidationStage stage;
    EXPECT_FALSE(stage.check(tool_with(contracts_schema(), false), {{"start_date", "2025-01-01"}}));
    EXPECT_FALSE(stage.check(tool_with(contracts_schema(), true), {{"award_date_start", "2025-01-01"}}));
}

TEST(UnknownArguments, AClosedSchemaRefusesThemWithTheSameError) {
    pipeline::ValidationStage stage;
    auto error = stage.check(tool_with(contracts_schema(true), false), {{"start_date", "2025-01-01"}});
    ASSERT_TRUE(error);
    Json j = error->to_json();
    EXPECT_EQ(j["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(j["unknown_arguments"], Json{"start_date"});
    EXPECT_EQ(j["did_you_mean"]["start_date"], "award_date_start");

    // Nested: the object's own names.
    Json nested = {{"type", "object"},
                   {"properties",
                    {{"filters",
                      {{"type", "object"},
                       {"properties", {{"date_from", {{"type", "string"}}}, {"date_to", {{"type", "string"}}}}},
                       {"additionalProperties", false}}}}}};
    auto inner = stage.check(tool_with(nested, false), {{"filters", {{"until", "2025-01-01"}}}});
    ASSERT_TRUE(inner);
    Json k = inner->to_json();
    EXPECT_EQ(k["unknown_arguments"], Json{"filters.until"});
    EXPECT_EQ(k["did_you_mean"]["until"], "date_to");
}

TEST(UnknownArguments, AreReportedBeforeAMissingRequiredOne) {
    pipeline::ValidationStage stage;
    Json schema = contracts_schema(true);
    schema["required"] = {"award_date_start"};
    auto error = stage.check(tool_with(schema, false), {{"start_date", "2025-01-01"}});
    ASSERT_TRUE(error);
    EXPECT_EQ(error->code(), ToolErrorCode::invalid_argument);
    EXPECT_EQ(error->to_json()["did_you_mean"]["start_date"], "award_date_start");
}

ToolSpec tool_with_output(Json output_schema) {
    ToolSpec spec;
    spec.name = "t";
    spec.output_schema = std::move(output_schema);
    return spec;
}

const Json kDataSchema = {{"type", "object"}, {"required", {"data"}}, {"properties", {{"data", {{"type", "array"}}}}}};

TEST(ErrorResultGuard, DropsStructuredContentThatBreaksTheOutputSchemaKeepingTheText) {
    ToolSpec spec = tool_with_output(kDataSchema);
    ToolError error(ToolErrorCode::not_found, "no such record");
    error.suggest("Search first");
    ToolResult direct = error.to_result();
    EXPECT_TRUE(guard_error_result(spec, direct));
    EXPECT_TRUE(direct.structured_content.is_null());
    EXPECT_EQ(direct.meta["toolport/error"]["error_code"], "NOT_FOUND");
    const std::string text = direct.content[0]["text"];
    EXPECT_NE(text.find("NOT_FOUND: no such record"), std::string::npos);
    EXPECT_NE(text.find("Suggestion: Search first"), std::string::npos);

    // error_result applies it too.
    ToolResult rendered = spec.error_result(error);
    EXPECT_TRUE(rendered.structured_content.is_null());
    EXPECT_TRUE(rendered.is_error);
}

TEST(ErrorResultGuard, KeepsWhatMatchesAndWhatIsNoError) {
    ToolSpec spec = tool_with_output(kDataSchema);
    ToolResult matching = ToolResult::error("failed");
    matching.structured_content = {{"data", Json::array()}};
    EXPECT_FALSE(guard_error_result(spec, matching));
    EXPECT_FALSE(matching.structured_content.is_null());

    ToolResult success = ToolResult::structured({{"other", 1}});
    EXPECT_FALSE(guard_error_result(spec, success));  // not the guard's business

    ToolSpec no_schema = tool_with_output(nullptr);
    ToolResult error = ToolError(ToolErrorCode::not_found, "x").to_result();
    EXPECT_FALSE(guard_error_result(no_schema, error));
    EXPECT_FALSE(error.structured_content.is_null());
}

TEST(ErrorResultGuard, AnErrorThatWasOnlyStructuredBecomesText) {
    ToolSpec spec = tool_with_output(kDataSchema);
    ToolResult result;
    result.is_error = true;
    result.structured_content = {{"error", "upstream said no"}};
    EXPECT_TRUE(guard_error_result(spec, result));
    ASSERT_EQ(result.content.size(), 1u);
    EXPECT_NE(result.content[0]["text"].get<std::string>().find("upstream said no"), std::string::npos);
}

}  // namespace
