// The five tango tools as a client lists them: names, descriptions, input schemas (all
// optional, with the runtime checks' limits) and output schemas, compiled with Toolport's
// validator; and the records the normalizers produce, in the envelope, validated against
// the output schema of their tool.
#include <algorithm>
#include <functional>
#include <map>

#include <gtest/gtest.h>

#include "providers/tango/envelope.hpp"
#include "providers/tango/records.hpp"
#include "providers/tango/spending.hpp"
#include "providers/tango/tango_pack.hpp"
#include "providers/tool_declaration.hpp"
#include "schema/json_schema.hpp"

using namespace toolport;
using namespace toolport::tango;
using std::chrono::milliseconds;

namespace {

// The declarations the pack registers, by name (no HTTP client is needed to declare).
const std::map<std::string, providers::ToolDeclaration>& declarations() {
    static TangoPack pack;
    static const auto all = [] {
        std::map<std::string, providers::ToolDeclaration> out;
        for (auto make : {search_contracts_tool, search_grants_tool, vendor_profile_tool, search_opportunities_tool,
                          spending_summary_tool}) {
            auto d = make(pack);
            out.emplace(d.name, std::move(d));
        }
        return out;
    }();
    return all;
}

const providers::ToolDeclaration& tool(const std::string& name) { return declarations().at(name); }

// "" when `instance` is valid against `schema`, else the validator's first complaint.
std::string complaint(const Json& schema, const Json& instance) {
    auto result = schema::compile(schema).validate(instance);
    if (result.valid) return "";
    return result.errors.empty() ? "invalid" : result.errors[0].instance_location + ": " + result.errors[0].message;
}

// The same for an answer as the pack sends it: without the members that had no value.
std::string answer_complaint(const Json& schema, Json answer) {
    drop_nulls(answer);
    auto result = schema::compile(schema).validate(answer);
    if (result.valid) return "";
    return result.errors.empty() ? "invalid" : result.errors[0].instance_location + ": " + result.errors[0].message;
}

const Json kContractRow = Json::parse(R"({
  "key": "CONT_AWD_47QTCA24F0012_4732_47QTCK18D0005_4732", "piid": "47QTCA24F0012",
  "award_date": "2024-03-15", "fiscal_year": 2024, "description": "APPLICATION DEVELOPMENT AND SUSTAINMENT SUPPORT",
  "obligated": 1250000.0, "total_contract_value": 4800000.0,
  "naics": {"code": 541512, "description": "Computer Systems Design Services"}, "psc": {"code": "DA01"},
  "set_aside": {"code": "SBA", "description": "Small Business Set Aside - Total"},
  "recipient": {"uei": "N553JH75Z8K1", "display_name": "00ALPHA, LLC"},
  "awarding_office": {"office_code": "HQ0034", "office_name": "WASHINGTON HEADQUARTERS SERVICES", "agency_code": "97F5",
                      "agency_name": "Washington Headquarters Services", "department_code": 97,
                      "department_name": "Department of Defense"},
  "place_of_performance": {"city_name": "ARLINGTON", "state_code": "VA", "country_code": "USA", "zip_code": "22202"},
  "period_of_performance": {"start_date": "2024-04-01", "current_end_date": "2025-03-31",
                            "ultimate_completion_date": "2029-03-31"}})");

Json sample_envelope(Json data, std::optional<std::string> next = std::nullopt) {
    const auto total = static_cast<long long>(data.size());
    return envelope(std::move(data), total, Json{{"search", "cloud"}}, 10, next, milliseconds(120), 1);
}

}  // namespace

TEST(TangoSchemas, TheFiveToolsHaveTheIssuesNames) {
    std::vector<std::string> names;
    for (const auto& [name, d] : declarations()) names.push_back(name);
    EXPECT_EQ(names,
              (std::vector<std::string>{"get_tango_spending_summary", "get_tango_vendor_profile",
                                        "search_tango_contracts", "search_tango_grants", "search_tango_opportunities"}));
}

TEST(TangoSchemas, EveryToolRegistersAsTheServerWouldAtStart) {
    for (const auto& [name, d] : declarations()) {
        EXPECT_NO_THROW((void)providers::make_tool_spec(d, "tango")) << name;
        EXPECT_EQ(d.service, "tango") << name;
        EXPECT_EQ(d.annotations.read_only, true) << name;
        EXPECT_EQ(d.annotations.open_world, true) << name;
        EXPECT_TRUE(d.paces_downstream) << name;
        EXPECT_FALSE(d.title.empty()) << name;
    }
}

TEST(TangoSchemas, InputSchemasCompileAndEveryPropertyIsOptionalAndDescribed) {
    for (const auto& [name, d] : declarations()) {
        ASSERT_NO_THROW(schema::compile(d.input_schema)) << name;
        EXPECT_EQ(d.input_schema["type"], "object") << name;
        EXPECT_TRUE(!d.input_schema.contains("required") || d.input_schema["required"].empty()) << name;
        EXPECT_EQ(complaint(d.input_schema, Json::object()), "")
            << name << ": a call with no arguments must pass the schema";
        ASSERT_TRUE(d.input_schema["properties"].is_object()) << name;
        for (const auto& [property, spec] : d.input_schema["properties"].items()) {
            ASSERT_TRUE(spec.contains("description")) << name << "." << property;
            EXPECT_GE(spec["description"].get<std::string>().size(), 20u) << name << "." << property;
        }
        EXPECT_TRUE(d.input_schema["properties"].contains("api_key")) << name;
    }
}

TEST(TangoSchemas, TheSeedsArgumentNamesAreThere) {
    for (const char* p : {"query", "vendor_name", "vendor_uei", "awarding_agency", "naics_code", "psc_code",
                          "award_date_start", "award_date_end", "set_aside_type", "limit", "cursor", "ordering"}) {
        EXPECT_TRUE(tool("search_tango_contracts").input_schema["properties"].contains(p)) << p;
    }
    for (const char* p : {"query", "agency", "cfda_number", "status", "posted_date_start", "posted_date_end",
                          "response_date_start", "response_date_end", "funding_instruments", "funding_categories",
                          "applicant_types", "ordering", "limit", "cursor"}) {
        EXPECT_TRUE(tool("search_tango_grants").input_schema["properties"].contains(p)) << p;
    }
    EXPECT_TRUE(tool("get_tango_vendor_profile").input_schema["properties"].contains("uei"));
    for (const char* p : {"source", "query", "agency", "naics_code", "set_aside_type", "active", "limit", "cursor"}) {
        EXPECT_TRUE(tool("search_tango_opportunities").input_schema["properties"].contains(p)) << p;
    }
    for (const char* p : {"group_by", "awarding_agency", "vendor_uei", "naics_code", "fiscal_year", "top"}) {
        EXPECT_TRUE(tool("get_tango_spending_summary").input_schema["properties"].contains(p)) << p;
    }
}

TEST(TangoSchemas, ClosedSetsAreEnumsAndOrderingsAreOnlyWhatTheApiAccepts) {
    EXPECT_EQ(tool("search_tango_contracts").input_schema["properties"]["ordering"]["enum"],
              Json::parse(R"(["award_date", "-award_date", "obligated", "-obligated", "total_contract_value",
                              "-total_contract_value"])"));
    EXPECT_EQ(tool("search_tango_grants").input_schema["properties"]["ordering"]["enum"],
              Json::parse(R"(["posted_date", "-posted_date", "deadline_current", "-deadline_current", "rank", "-rank",
                              "last_updated", "-last_updated"])"));
    EXPECT_EQ(tool("get_tango_spending_summary").input_schema["properties"]["group_by"]["enum"],
              Json::parse(R"(["agency", "vendor", "naics", "psc", "month"])"));
    EXPECT_EQ(tool("search_tango_opportunities").input_schema["properties"]["source"]["enum"],
              Json::parse(R"(["opportunities", "forecasts"])"));
    EXPECT_EQ(tool("search_tango_grants").input_schema["properties"]["status"]["enum"],
              Json::parse(R"(["posted", "forecasted"])"));
}

TEST(TangoSchemas, TheSchemasLimitsMatchTheRuntimeChecks) {
    const Json& contracts = tool("search_tango_contracts").input_schema;
    EXPECT_EQ(complaint(contracts, Json{{"limit", 100}, {"ordering", "-obligated"}, {"query", "cloud"}}), "");
    EXPECT_NE(complaint(contracts, Json{{"limit", 101}}), "");
    EXPECT_NE(complaint(contracts, Json{{"limit", 0}}), "");
    EXPECT_NE(complaint(contracts, Json{{"ordering", "recipient_name"}}), "");
    EXPECT_NE(complaint(contracts, Json{{"query", 5}}), "");
    EXPECT_NE(complaint(tool("get_tango_spending_summary").input_schema, Json{{"group_by", "county"}}), "");
    EXPECT_NE(complaint(tool("get_tango_spending_summary").input_schema, Json{{"top", 101}}), "");
    EXPECT_NE(complaint(tool("get_tango_vendor_profile").input_schema, Json{{"recent_contracts_limit", 26}}), "");
    EXPECT_NE(complaint(tool("search_tango_opportunities").input_schema, Json{{"active", "yes"}}), "");
    for (const auto& [name, d] : declarations()) {
        const Json& limit = d.input_schema["properties"].contains("limit") ? d.input_schema["properties"]["limit"]
                                                                           : Json();
        if (limit.is_null()) continue;
        EXPECT_EQ(limit["minimum"], 1) << name;
        EXPECT_EQ(limit["maximum"], 100) << name;
        EXPECT_EQ(limit["default"], 10) << name;
    }
}

TEST(TangoSchemas, DescriptionsSayWhatWhereLimitsAndWhatElseToUse) {
    for (const auto& [name, d] : declarations()) {
        EXPECT_GE(d.description.size(), 300u) << name;
        EXPECT_NE(d.description.find("Tango"), std::string::npos) << name;
    }
    const auto says = [](const std::string& name, const char* text) {
        return tool(name).description.find(text) != std::string::npos;
    };
    EXPECT_TRUE(says("search_tango_contracts", "FPDS"));
    EXPECT_TRUE(says("search_tango_contracts", "100"));
    EXPECT_TRUE(says("search_tango_contracts", "get_tango_vendor_profile"));
    EXPECT_TRUE(says("search_tango_contracts", "YYYY-MM-DD"));
    EXPECT_TRUE(says("search_tango_grants", "Grants.gov"));
    EXPECT_TRUE(says("search_tango_grants", "NOT awarded assistance"));
    EXPECT_TRUE(says("get_tango_vendor_profile", "search_tango_contracts"));
    EXPECT_TRUE(says("get_tango_vendor_profile", "CAGE"));
    EXPECT_TRUE(says("search_tango_opportunities", "forecasts"));
    EXPECT_TRUE(says("search_tango_opportunities", "search_tango_contracts"));
    EXPECT_TRUE(says("get_tango_spending_summary", "rows_aggregated"));
    EXPECT_TRUE(says("get_tango_spending_summary", "search_tango_contracts"));
}

TEST(TangoSchemas, OutputSchemasCompileAndDescribeTheEnvelope) {
    for (const auto& [name, d] : declarations()) {
        ASSERT_NO_THROW(schema::compile(d.output_schema)) << name;
        for (const char* field : {"data", "total", "returned", "filters", "pagination", "execution"}) {
            EXPECT_TRUE(d.output_schema["properties"].contains(field)) << name << " " << field;
        }
    }
}

TEST(TangoSchemas, EachToolsSampleOutputValidates) {
    Json contracts = sample_envelope(Json::array({to_json(parse_contract(kContractRow)),
                                                  to_json(parse_contract(Json::object()))}),
                                     std::string("WyIyMDI0LTAzLTE1Il0="));
    EXPECT_EQ(answer_complaint(tool("search_tango_contracts").output_schema, contracts), "");

    Json grants = sample_envelope(Json::array({to_json(parse_grant(Json::parse(R"({"agency_code": "HHS-NIH11",
        "grant_id": 363557, "opportunity_number": "RFA-AG-28-009", "status": {"code": "F", "description": "Forecasted"},
        "title": "Alzheimer&#39;s Drug-Development Program"})")))}),
                                  std::string("page:2"));
    EXPECT_EQ(answer_complaint(tool("search_tango_grants").output_schema, grants), "");

    Json profile = to_json(
        parse_vendor_profile(Json::parse(R"({"uei": "N553JH75Z8K1", "legal_business_name": "00ALPHA, LLC",
        "cage_code": null, "business_types": [{"code": "A2"}],
        "federal_obligations": {"total": {"awards_obligated": 1500000.5, "awards_count": 12}}})")));
    profile["recent_contracts"] = Json::array({to_json(parse_contract(kContractRow))});
    profile["contracts_total"] = 12;
    profile["complete"] = true;
    Json vendor = envelope(Json::array({profile}), 1, Json{{"uei", "N553JH75Z8K1"}}, 1, std::nullopt, milliseconds(80),
                           2);
    EXPECT_EQ(answer_complaint(tool("get_tango_vendor_profile").output_schema, vendor), "");
    // Without its recent contracts: not asked for, or refused by Tango (and labelled).
    profile.erase("recent_contracts");
    profile.erase("contracts_total");
    vendor["data"][0] = profile;
    EXPECT_EQ(answer_complaint(tool("get_tango_vendor_profile").output_schema, vendor), "");
    profile["complete"] = false;
    profile["recent_contracts_error"] = {{"error_code", "INVALID_ARGUMENT"},
                                         {"error", "Tango refused this request for the API key (HTTP 403): plan"},
                                         {"suggestion", "Check the plan"},
                                         {"transient", false}};
    vendor["data"][0] = profile;
    EXPECT_EQ(answer_complaint(tool("get_tango_vendor_profile").output_schema, vendor), "");

    Json opportunities = sample_envelope(Json::array({to_json(parse_opportunity(Json::parse(R"({"active": true,
        "opportunity_id": "ba9961ee-0b29-4dbc-b9a7-2c6d2952c54b", "response_deadline": "2026-08-24T14:00:00+00:00",
        "solicitation_number": "N0018926QL330", "title": "NCTAMS LANT HVAC Support Services"})")))}));
    EXPECT_EQ(answer_complaint(tool("search_tango_opportunities").output_schema, opportunities), "");
    Json forecasts = sample_envelope(Json::array({to_json(parse_forecast(Json::parse(R"({"anticipated_award_date": null,
        "fiscal_year": 2026, "id": 19690, "naics_code": "561720", "status": "Awarded", "title": "RNC Janitorial Services"})")))}));
    EXPECT_EQ(answer_complaint(tool("search_tango_opportunities").output_schema, forecasts), "");

    SpendingAggregate aggregate(SpendingAggregate::GroupBy::agency);
    aggregate.add(kContractRow);
    aggregate.add(Json::object());
    Json spending = envelope(aggregate.groups(20), static_cast<long long>(aggregate.group_count()),
                             Json{{"group_by", "agency"}}, 20, std::nullopt, milliseconds(900), 3);
    spending["summary"] = {{"group_by", "agency"},
                           {"source", "contracts"},
                           {"rows_aggregated", 2},
                           {"total_matching_contracts", 2},
                           {"complete", true},
                           {"pages_read", 1},
                           {"total_obligated_aggregated", 1250000.0},
                           {"note", "Every matching contract was added up."}};
    EXPECT_EQ(answer_complaint(tool("get_tango_spending_summary").output_schema, spending), "");

    // From Tango's metrics: no count of matching contracts, none per group when Tango gave none.
    SpendingAggregate by_month(SpendingAggregate::GroupBy::month);
    by_month.add_total("2024-03", "2024-03", 42.0, std::nullopt);
    Json from_metrics = envelope(by_month.groups(20), 1, Json{{"group_by", "month"}}, 20, std::nullopt,
                                 milliseconds(90), 1);
    from_metrics["summary"] = {{"group_by", "month"},
                               {"source", "metrics"},
                               {"rows_aggregated", 1},
                               {"total_matching_contracts", nullptr},
                               {"complete", true},
                               {"pages_read", 1},
                               {"total_obligated_aggregated", 42.0},
                               {"note", "Tango's own totals."}};
    EXPECT_EQ(answer_complaint(tool("get_tango_spending_summary").output_schema, from_metrics), "");

    mark_cached(contracts, milliseconds(0));
    EXPECT_EQ(answer_complaint(tool("search_tango_contracts").output_schema, contracts), "");
}

TEST(TangoSchemas, OutputSchemasRefuseWhatIsNotTheEnvelope) {
    const Json& schema = tool("search_tango_contracts").output_schema;
    Json good = sample_envelope(Json::array({to_json(parse_contract(kContractRow))}));
    drop_nulls(good);
    ASSERT_EQ(complaint(schema, good), "");
    Json bad = good;
    bad["total"] = "many";
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["data"] = Json::object();
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["pagination"]["next_cursor"] = 2;
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["execution"]["cached"] = "no";
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["data"][0]["contract_id"] = 42;
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["data"][0]["obligated"] = "1,250,000";
    EXPECT_NE(complaint(schema, bad), "");
    // A field Tango had no value for is left out, never null (one type per field, no
    // [X, "null"] unions), nested ones too.
    Json without = good;
    without["data"][0].erase("award_date");
    EXPECT_EQ(complaint(schema, without), "");
    bad = good;
    bad["data"][0]["award_date"] = nullptr;
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["data"][0]["naics"] = Json{{"code", 541512}, {"description", nullptr}};
    EXPECT_NE(complaint(schema, bad), "");
    bad = good;
    bad["data"][0]["naics"] = Json{{"code", 541512}};
    EXPECT_NE(complaint(schema, bad), "");  // codes are strings
    bad = good;
    bad["data"][0].erase("vendor");
    EXPECT_NE(complaint(schema, bad), "");  // the objects that are always there stay required
    bad = good;
    bad.erase("pagination");
    EXPECT_NE(complaint(schema, bad), "");
    // An opportunities answer holds opportunities or forecasts, nothing else.
    Json other = sample_envelope(Json::array({Json{{"forecast_id", "F-1"}}}));
    EXPECT_NE(complaint(tool("search_tango_opportunities").output_schema, other), "");
    EXPECT_NE(complaint(tool("get_tango_spending_summary").output_schema,
                        envelope(Json::array({Json{{"rank", 1}, {"key", "9700"}, {"total_obligated", "lots"}}}), 1,
                                 Json::object(), 20, std::nullopt, milliseconds(1), 1)),
              "");
}

// One type per field (issue 29): a field without a value is left out of the answer, so no
// output schema needs a [X, "null"] union, which several validators, SDKs and model
// providers handle badly.
TEST(TangoSchemas, OutputSchemasGiveEachFieldOneType) {
    std::vector<std::string> unions;
    std::function<void(const Json&, const std::string&)> walk = [&](const Json& node, const std::string& at) {
        if (node.is_object()) {
            if (auto type = node.find("type"); type != node.end() && type->is_array()) unions.push_back(at);
            for (const auto& [key, child] : node.items()) walk(child, at + "/" + key);
        } else if (node.is_array()) {
            for (std::size_t i = 0; i < node.size(); ++i) walk(node[i], at + "/" + std::to_string(i));
        }
    };
    for (const auto& [name, d] : declarations()) walk(d.output_schema, name);
    EXPECT_TRUE(unions.empty()) << unions.front();
    // What may be absent is not required; what is always there stays required.
    const Json& contract = tool("search_tango_contracts").output_schema["properties"]["data"]["items"];
    const Json& required = contract["required"];
    EXPECT_EQ(std::find(required.begin(), required.end(), "award_date"), required.end());
    EXPECT_NE(std::find(required.begin(), required.end(), "vendor"), required.end());
    EXPECT_EQ(contract["properties"]["award_date"]["type"], "string");
    EXPECT_EQ(contract["properties"]["naics"]["type"], "object");
}
