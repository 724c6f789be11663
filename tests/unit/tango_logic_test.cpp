// The tango pack's pure parts: argument checks, records parsed from the API's real shapes,
// the envelope and its cursors, the API's errors, the spending aggregate.
#include <gtest/gtest.h>

#include "providers/tango/envelope.hpp"
#include "providers/tango/records.hpp"
#include "providers/tango/spending.hpp"
#include "providers/tango/tango_api.hpp"
#include "providers/tango/validation.hpp"
#include "server/tool_error.hpp"
#include "util/percent.hpp"
#include "tango_test_support.hpp"

using namespace toolport;
using namespace toolport::tango;
using toolport::tango::test::error_of;

namespace {

// The fuller contract record of the reference (tango-api.md §1.5).
const Json kContract = Json::parse(R"({
  "key": "CONT_AWD_47QTCA24F0012_4732_47QTCK18D0005_4732", "piid": "47QTCA24F0012",
  "award_date": "2024-03-15", "fiscal_year": 2024,
  "description": "APPLICATION DEVELOPMENT AND SUSTAINMENT SUPPORT",
  "obligated": 1250000.0, "total_contract_value": 4800000.0, "naics_code": 541512, "psc_code": "DA01",
  "set_aside": {"code": "SBA", "description": "Small Business Set Aside - Total"},
  "recipient": {"uei": "N553JH75Z8K1", "display_name": "00ALPHA, LLC"},
  "awarding_office": {"office_code": "47QTCA", "office_name": "GSA/FAS ADMIN SVCS ACQUISITION BR(2",
                      "agency_code": "4732", "agency_name": "Federal Acquisition Service",
                      "department_code": 47, "department_name": "General Services Administration"},
  "place_of_performance": {"city_name": "ARLINGTON", "state_code": "VA", "state_name": "VIRGINIA",
                           "country_code": "USA", "country_name": "UNITED STATES", "zip_code": "22202"},
  "period_of_performance": {"start_date": "2024-04-01", "current_end_date": "2025-03-31",
                            "ultimate_completion_date": "2029-03-31"}})");

}  // namespace

// ---- validation ------------------------------------------------------------------------

TEST(TangoValidation, DatesAreRealCalendarDatesInOrder) {
    EXPECT_EQ(date_arg({{"d", "2024-02-29"}}, "d"), "2024-02-29");
    auto bad = error_of([] { date_arg({{"d", "2023-02-29"}}, "d"); });
    EXPECT_EQ(bad["error_code"], "INVALID_FORMAT");
    EXPECT_EQ(bad["parameter"], "d");
    EXPECT_EQ(bad["expected_format"], "YYYY-MM-DD (a real calendar date)");
    EXPECT_EQ(bad["example"], "2024-01-01");
    EXPECT_EQ(error_of([] { date_arg({{"d", "01/01/2024"}}, "d"); })["provided"], "01/01/2024");
    EXPECT_FALSE(error_of([] { date_arg({{"d", "2024-13-01"}}, "d"); }).is_null());
    EXPECT_FALSE(error_of([] { date_arg({{"d", "1900-02-29"}}, "d"); }).is_null());
    EXPECT_EQ(date_arg({{"d", "2000-02-29"}}, "d"), "2000-02-29");
    auto order = error_of([] { check_date_range("2024-12-31", "start", "2024-01-01", "end"); });
    EXPECT_EQ(order["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(order["parameter"], "start");
    EXPECT_TRUE(error_of([] { check_date_range("2024-01-01", "start", "2024-01-01", "end"); }).is_null());
}

TEST(TangoValidation, UeiFollowsGsaRules) {
    EXPECT_EQ(uei_arg({{"u", "n553jh75z8k1"}}, "u"), "N553JH75Z8K1");
    for (const char* bad : {"N553JH75Z8K", "0553JH75Z8K1", "O553JH75Z8K1", "N553JH75Z8KI", "N553JH75Z8K!"}) {
        auto e = error_of([&] { uei_arg({{"u", bad}}, "u"); });
        EXPECT_EQ(e["error_code"], "INVALID_FORMAT") << bad;
        EXPECT_NE(e["suggestion"].get<std::string>().find("search_tango_contracts"), std::string::npos);
    }
    EXPECT_TRUE(is_cage("1ABC2"));
    EXPECT_FALSE(is_cage("1ABC"));
}

TEST(TangoValidation, NaicsPscAndLimits) {
    EXPECT_EQ(naics_arg({{"n", "54"}}, "n"), "54");
    EXPECT_EQ(naics_arg({{"n", 541512}}, "n"), "541512");  // a number is taken as its digits
    EXPECT_FALSE(error_of([] { naics_arg({{"n", "5"}}, "n"); }).is_null());
    EXPECT_FALSE(error_of([] { naics_arg({{"n", "5415123"}}, "n"); }).is_null());
    EXPECT_FALSE(error_of([] { naics_arg({{"n", "54A5"}}, "n"); }).is_null());
    EXPECT_EQ(psc_arg({{"p", "d302"}}, "p"), "D302");
    EXPECT_EQ(psc_arg({{"p", "7030"}}, "p"), "7030");
    EXPECT_FALSE(error_of([] { psc_arg({{"p", "D30"}}, "p"); }).is_null());
    EXPECT_EQ(int_arg(Json::object(), "limit", 10, 1, 100), 10);
    EXPECT_EQ(int_arg({{"limit", 100}}, "limit", 10, 1, 100), 100);
    auto over = error_of([] { int_arg({{"limit", 101}}, "limit", 10, 1, 100); });
    EXPECT_EQ(over["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(over["parameter"], "limit");
    EXPECT_FALSE(error_of([] { int_arg({{"limit", 0}}, "limit", 10, 1, 100); }).is_null());
    EXPECT_FALSE(error_of([] { int_arg({{"limit", 2.5}}, "limit", 10, 1, 100); }).is_null());
}

TEST(TangoValidation, SetAsidesTakeCodesAndProgramNames) {
    EXPECT_EQ(set_aside_arg({{"s", "SBA"}}, "s"), "SBA");
    EXPECT_EQ(set_aside_arg({{"s", "8(a)"}}, "s"), "8A");
    EXPECT_EQ(set_aside_arg({{"s", "SDVOSB"}}, "s"), "SDVOSBC|SDVOSBS");
    EXPECT_EQ(set_aside_arg({{"s", "HUBZone"}}, "s"), "HZC|HZS");
    EXPECT_EQ(set_aside_arg({{"s", "wosb, edwosb"}}, "s"), "WOSB|EDWOSB");
    EXPECT_EQ(set_aside_arg({{"s", "Small Business"}}, "s"), "SBA|SBP");
    auto bad = error_of([] { set_aside_arg({{"s", "BOGUS"}}, "s"); });
    EXPECT_EQ(bad["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(bad["example"], "SDVOSB");
    EXPECT_EQ(set_aside_description("8AN"), "8(a) Sole Source");
}

TEST(TangoValidation, TextIsCleanedAndCapped) {
    EXPECT_EQ(text_arg({{"q", "  cloud\u0001 services\t "}}, "q"), "cloud services");
    EXPECT_FALSE(text_arg({{"q", "   "}}, "q"));
    EXPECT_EQ(text_arg({{"q", std::string(500, 'a')}}, "q", 200)->size(), 200u);
    EXPECT_EQ(text_arg({{"q", "ééé"}}, "q", 2), "éé");  // not cut inside a character
    EXPECT_EQ(error_of([] { text_arg({{"q", Json::array()}}, "q"); })["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(choice_arg({{"o", "-obligated"}}, "o", {"obligated", "award_date"}, true), "-obligated");
    EXPECT_EQ(error_of([] {
                  choice_arg({{"o", "recipient_name"}}, "o", {"obligated"}, true);
              })["error_code"],
              "INVALID_ARGUMENT");
}

TEST(TangoQuery, EveryValueIsPercentEncoded) {
    Query q;
    q.add("search", std::string("R&D = 100% #1 café"))
        .add("limit", std::optional<int>(5))
        .add("skip", std::optional<std::string>());
    EXPECT_EQ(q.encoded(), "search=R%26D%20%3D%20100%25%20%231%20caf%C3%A9&limit=5");
    EXPECT_EQ(util::percent_encode("SDVOSBC|SDVOSBS"), "SDVOSBC%7CSDVOSBS");
}

// ---- records ---------------------------------------------------------------------------

TEST(TangoRecords, AContractIsNormalizedFromTheApisShape) {
    Json c = to_json(parse_contract(kContract));
    EXPECT_EQ(c["contract_id"], "CONT_AWD_47QTCA24F0012_4732_47QTCK18D0005_4732");
    EXPECT_EQ(c["vendor"], (Json{{"name", "00ALPHA, LLC"}, {"uei", "N553JH75Z8K1"}}));
    EXPECT_EQ(c["awarding_agency"]["code"], "4732");
    EXPECT_EQ(c["awarding_agency"]["department"], "General Services Administration");
    EXPECT_EQ(c["naics"]["code"], "541512");  // an integer in the API
    EXPECT_EQ(c["psc"]["code"], "DA01");
    EXPECT_EQ(c["set_aside"]["description"], "Small Business Set Aside - Total");
    EXPECT_EQ(c["obligated"], 1250000.0);
    EXPECT_EQ(c["fiscal_year"], 2024);
    EXPECT_EQ(c["place_of_performance"]["state"], "VA");
    EXPECT_EQ(c["period_of_performance"]["ultimate_completion_date"], "2029-03-31");
}

TEST(TangoRecords, MissingAndOddFieldsBecomeNullNeverAnError) {
    Json c = to_json(
        parse_contract(Json{{"key", 42}, {"recipient", nullptr}, {"set_aside", "8AN"}, {"obligated", "12.5"}}));
    EXPECT_EQ(c["contract_id"], "42");
    EXPECT_TRUE(c["vendor"]["name"].is_null());
    EXPECT_EQ(c["set_aside"]["code"], "8AN");
    EXPECT_EQ(c["set_aside"]["description"], "8(a) Sole Source");  // from the FPDS table
    EXPECT_EQ(c["obligated"], 12.5);
    EXPECT_TRUE(c["awarding_agency"].is_null());
    EXPECT_NO_THROW(to_json(parse_contract(Json::array())));
    EXPECT_NO_THROW(to_json(parse_vendor_profile("not an object")));
}

TEST(TangoRecords, GrantsOpportunitiesForecastsAndEntities) {
    Json g = to_json(parse_grant(Json::parse(R"({"agency_code": "HHS-NIH11", "grant_id": 363557,
        "opportunity_number": "RFA-AG-28-009", "status": {"code": "F", "description": "Forecasted"},
        "title": "Alzheimer&#39;s Drug-Development Program &ndash; U01"})")));
    EXPECT_EQ(g["grant_id"], 363557);
    EXPECT_EQ(g["status"]["code"], "F");
    EXPECT_EQ(g["title"], "Alzheimer's Drug-Development Program – U01");
    Json o = to_json(
        parse_opportunity(Json::parse(R"({"active": true, "opportunity_id": "ba9961ee-0b29-4dbc-b9a7-2c6d2952c54b",
        "response_deadline": "2026-08-24T14:00:00+00:00", "solicitation_number": "N0018926QL330",
        "title": "NCTAMS LANT HVAC Support Services", "naics_code": 238220,
        "office": {"office_code": "HQ0034", "agency_code": "97F5", "agency_name": "Washington Headquarters Services"}})")));
    EXPECT_EQ(o["active"], true);
    EXPECT_EQ(o["response_deadline"], "2026-08-24T14:00:00+00:00");
    EXPECT_EQ(o["naics"]["code"], "238220");
    EXPECT_EQ(o["agency"]["code"], "97F5");
    Json f = to_json(parse_forecast(Json::parse(R"({"anticipated_award_date": null, "fiscal_year": 2026, "id": 19690,
        "naics_code": "561720", "status": "Awarded", "title": "RNC Janitorial Services"})")));
    EXPECT_EQ(f["forecast_id"], 19690);
    EXPECT_EQ(f["naics_code"], "561720");
    Json v = to_json(parse_vendor_profile(Json::parse(R"({"uei": "N553JH75Z8K1", "legal_business_name": "00ALPHA, LLC",
        "cage_code": "8ABC1", "business_types": [{"code": "A2", "description": "Woman Owned Business"}, {"code": "2X"}],
        "federal_obligations": {"total": {"awards_obligated": 1500000.5, "awards_count": 12, "idv_count": 2},
                                "active": {"awards_obligated": 250000, "awards_count": 3}}})")));
    EXPECT_EQ(v["federal_obligations"]["total"]["awards_count"], 12);
    EXPECT_EQ(v["federal_obligations"]["active"]["awards_obligated"], 250000.0);
    EXPECT_EQ(v["business_types"].size(), 2u);
}

// ---- envelope and pages ----------------------------------------------------------------

TEST(TangoEnvelope, CursorAndPageNumberPagination) {
    auto cursor_page = read_cursor_page(Json::parse(R"({"count": 86157384,
        "next": "https://tango.makegov.com/api/contracts/?limit=3&cursor=WyIyMDI2LTA4LTEzIl0%3D",
        "previous": null, "cursor": "WyIyMDI2LTA4LTEzIl0=", "previous_cursor": null, "results": [{}, {}, {}]})"));
    EXPECT_EQ(cursor_page.total, 86157384);
    EXPECT_EQ(cursor_page.rows.size(), 3u);
    EXPECT_EQ(cursor_page.next_cursor, "WyIyMDI2LTA4LTEzIl0=");
    auto from_next = read_cursor_page(
        Json::parse(R"({"count": 5, "next": "https://x/api/contracts/?cursor=abc%3D&limit=1", "results": []})"));
    EXPECT_EQ(from_next.next_cursor, "abc=");
    auto last = read_cursor_page(Json::parse(R"({"count": 1, "next": null, "cursor": "zzz", "results": [{}]})"));
    EXPECT_FALSE(last.next_cursor);
    auto numbered = read_numbered_page(
        Json::parse(R"({"count": 4852, "next": "https://x/api/grants/?limit=3&page=2", "results": []})"), 1);
    EXPECT_EQ(numbered.next_cursor, "page:2");
    EXPECT_EQ(page_cursor_arg(Json::object()), 1);
    EXPECT_EQ(page_cursor_arg({{"cursor", "page:7"}}), 7);
    EXPECT_EQ(error_of([] { page_cursor_arg({{"cursor", "page:0"}}); })["error_code"], "INVALID_FORMAT");
    EXPECT_EQ(error_of([] { page_cursor_arg({{"cursor", "WyIy"}}); })["example"], "page:2");

    Json env = envelope(Json::array({1, 2}), 40, Json{{"search", "x"}}, 2, std::string("page:2"),
                        std::chrono::milliseconds(12), 1);
    EXPECT_EQ(env["returned"], 2);
    EXPECT_EQ(env["total"], 40);
    EXPECT_EQ(env["pagination"], (Json{{"limit", 2}, {"has_more", true}, {"next_cursor", "page:2"}}));
    EXPECT_EQ(env["execution"], (Json{{"duration_ms", 12}, {"cached", false}, {"api_calls", 1}}));
    mark_cached(env, std::chrono::milliseconds(0));
    EXPECT_EQ(env["execution"]["cached"], true);
    EXPECT_EQ(env["execution"]["api_calls"], 0);
}

// ---- the API's errors --------------------------------------------------------------------

TEST(TangoApiErrors, EachStatusMapsToItsToolError) {
    auto unauthorized = error_for_status(401, std::nullopt, R"({"detail": "Invalid API key."})").to_json();
    EXPECT_EQ(unauthorized["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(unauthorized["parameter"], "api_key");
    EXPECT_NE(unauthorized["error"].get<std::string>().find("Invalid API key."), std::string::npos);
    auto missing = error_for_status(404, std::nullopt, R"({"detail": "No Contract matches the given query."})").to_json();
    EXPECT_EQ(missing["error_code"], "NOT_FOUND");
    auto bad =
        error_for_status(400, std::nullopt,
                         R"({"error": "Invalid ordering value(s): not_a_real_field. Allowed values are: award_date."})")
            .to_json();
    EXPECT_EQ(bad["error_code"], "INVALID_ARGUMENT");
    EXPECT_NE(bad["error"].get<std::string>().find("Invalid ordering value(s)"), std::string::npos);
    auto field = error_for_status(400, std::nullopt, R"({"award_date_gte": ["Enter a valid date."]})").to_json();
    EXPECT_NE(field["error"].get<std::string>().find("award_date_gte: Enter a valid date."), std::string::npos);
    auto limited =
        error_for_status(
            429, std::nullopt,
            R"({"detail": "Rate limit exceeded for burst. Please try again in 45 seconds.", "wait_in_seconds": 45})")
            .to_json();
    EXPECT_EQ(limited["error_code"], "RATE_LIMITED");
    EXPECT_EQ(limited["retry_after_ms"], 45000);
    EXPECT_EQ(limited["transient"], true);
    EXPECT_EQ(error_for_status(429, std::string("3"), "{}").to_json()["retry_after_ms"], 3000);
    auto down = error_for_status(503, std::nullopt, "<html>Service Unavailable</html>").to_json();
    EXPECT_EQ(down["error_code"], "UPSTREAM_ERROR");
    EXPECT_EQ(down["transient"], true);
    auto in_body = error_in_body(Json{{"error", "upstream database unavailable"}});
    ASSERT_TRUE(in_body);
    EXPECT_EQ(in_body->to_json()["error_code"], "UPSTREAM_ERROR");
    EXPECT_FALSE(error_in_body(Json{{"count", 0}, {"results", Json::array()}}));
}

// ---- spending ----------------------------------------------------------------------------

TEST(TangoSpending, GroupsAddUpLargestFirstWithUnknownsKept) {
    SpendingAggregate by_agency(SpendingAggregate::GroupBy::agency);
    by_agency.add(kContract);
    Json second = kContract;
    second["obligated"] = 750000.0;
    by_agency.add(second);
    Json other = kContract;
    other["awarding_office"] = {{"agency_code", "9700"}, {"agency_name", "Department of Defense"}};
    other["obligated"] = 5000000.0;
    by_agency.add(other);
    by_agency.add(Json{{"obligated", 10}});
    Json groups = by_agency.groups(10);
    ASSERT_EQ(groups.size(), 3u);
    EXPECT_EQ(groups[0]["key"], "9700");
    EXPECT_EQ(groups[0]["label"], "Department of Defense (9700)");
    EXPECT_EQ(groups[1]["key"], "4732");
    EXPECT_EQ(groups[1]["total_obligated"], 2000000.0);
    EXPECT_EQ(groups[1]["contract_count"], 2);
    EXPECT_EQ(groups[2]["key"], "UNKNOWN");
    EXPECT_EQ(by_agency.rows(), 4);
    EXPECT_EQ(by_agency.groups(1).size(), 1u);

    SpendingAggregate by_month(SpendingAggregate::GroupBy::month);
    by_month.add(other);
    Json earlier = kContract;
    earlier["award_date"] = "2024-01-05";
    by_month.add(earlier);
    EXPECT_EQ(by_month.groups(10)[0]["key"], "2024-01");  // months in time order
    EXPECT_FALSE(SpendingAggregate::group_by_named("county"));
}
