// The spending aggregate (providers/tango/spending.hpp): contract rows in, page after page,
// totals per agency, vendor, NAICS, PSC or month out. Rows without the grouping field are
// kept under UNKNOWN so the groups always add up to what was read.
#include <cmath>

#include <gtest/gtest.h>

#include "providers/tango/envelope.hpp"
#include "providers/tango/spending.hpp"
#include "providers/tango/spending_metrics.hpp"
#include "util/json.hpp"

using namespace toolport::tango;
using toolport::Json;
using GroupBy = SpendingAggregate::GroupBy;

namespace {

// A contract row as the summary's shape returns it.
Json row(const char* uei, const char* vendor, const char* agency_code, const char* agency_name, Json obligated,
         const char* award_date, Json naics = nullptr, Json psc = nullptr) {
    Json r = {{"obligated", std::move(obligated)}, {"award_date", award_date}};
    Json recipient = Json::object();
    if (uei) recipient["uei"] = uei;
    if (vendor) recipient["display_name"] = vendor;
    r["recipient"] = recipient;
    Json office = Json::object();
    if (agency_code) office["agency_code"] = agency_code;
    if (agency_name) office["agency_name"] = agency_name;
    r["awarding_office"] = office;
    r["naics"] = std::move(naics);
    r["psc"] = std::move(psc);
    return r;
}

double sum_of(const Json& groups) {
    double total = 0;
    for (const auto& g : groups) total += g["total_obligated"].get<double>();
    return total;
}

}  // namespace

TEST(TangoSpending, GroupNamesAreTheToolsEnum) {
    EXPECT_EQ(SpendingAggregate::group_by_named("agency"), GroupBy::agency);
    EXPECT_EQ(SpendingAggregate::group_by_named("vendor"), GroupBy::vendor);
    EXPECT_EQ(SpendingAggregate::group_by_named("naics"), GroupBy::naics);
    EXPECT_EQ(SpendingAggregate::group_by_named("psc"), GroupBy::psc);
    EXPECT_EQ(SpendingAggregate::group_by_named("month"), GroupBy::month);
    for (const char* bad : {"Agency", "department", "", "fiscal_year"}) {
        EXPECT_FALSE(SpendingAggregate::group_by_named(bad)) << bad;
    }
}

TEST(TangoSpending, VendorsAreKeyedByUeiAndLabelledByName) {
    SpendingAggregate a(GroupBy::vendor);
    a.add(row("N553JH75Z8K1", "00ALPHA, LLC", "4732", "FAS", 100.0, "2024-01-02"));
    a.add(row("N553JH75Z8K1", "00ALPHA LLC", "9700", "DOD", 50.0, "2024-02-02"));  // same UEI, name spelled otherwise
    a.add(row(nullptr, "NO UEI CORP", "9700", "DOD", 30.0, "2024-02-02"));
    a.add(row(nullptr, nullptr, "9700", "DOD", 5.0, "2024-02-02"));
    Json g = a.groups(10);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[0]["key"], "N553JH75Z8K1");
    EXPECT_EQ(g[0]["label"], "00ALPHA, LLC (N553JH75Z8K1)");
    EXPECT_EQ(g[0]["total_obligated"], 150.0);
    EXPECT_EQ(g[0]["contract_count"], 2);
    EXPECT_EQ(g[1]["key"], "NO UEI CORP");
    EXPECT_EQ(g[1]["label"], "NO UEI CORP");
    EXPECT_EQ(g[2]["key"], "UNKNOWN");
    EXPECT_EQ(g[2]["label"], "UNKNOWN");
}

TEST(TangoSpending, ALaterRowCanNameAGroupTheFirstRowLeftBare) {
    SpendingAggregate a(GroupBy::vendor);
    a.add(row("C47BNA8GM833", nullptr, "9700", "DOD", 10.0, "2024-01-02"));
    a.add(row("C47BNA8GM833", "ACCENTURE FEDERAL SERVICES LLC", "9700", "DOD", 10.0, "2024-01-03"));
    EXPECT_EQ(a.groups(1)[0]["label"], "ACCENTURE FEDERAL SERVICES LLC (C47BNA8GM833)");
}

TEST(TangoSpending, AgenciesNaicsAndPscGetReadableLabels) {
    SpendingAggregate agency(GroupBy::agency);
    agency.add(row("N553JH75Z8K1", "A", "97F5", "Washington Headquarters Services", 10.0, "2024-01-02"));
    agency.add(row("N553JH75Z8K1", "A", "1540", nullptr, 5.0, "2024-01-02"));
    Json a = agency.groups(10);
    EXPECT_EQ(a[0]["label"], "Washington Headquarters Services (97F5)");
    EXPECT_EQ(a[1]["label"], "1540");

    SpendingAggregate naics(GroupBy::naics);
    naics.add(row("N553JH75Z8K1", "A", "4732", "FAS", 10.0, "2024-01-02",
                  {{"code", 541512}, {"description", "Computer Systems Design Services"}}));
    Json bare_code = row("N553JH75Z8K1", "A", "4732", "FAS", 4.0, "2024-01-02");
    bare_code.erase("naics");
    bare_code["naics_code"] = 541511;
    naics.add(bare_code);
    Json n = naics.groups(10);
    EXPECT_EQ(n[0]["key"], "541512");
    EXPECT_EQ(n[0]["label"], "541512 Computer Systems Design Services");
    EXPECT_EQ(n[1]["key"], "541511");
    EXPECT_EQ(n[1]["label"], "541511");

    SpendingAggregate psc(GroupBy::psc);
    psc.add(row("N553JH75Z8K1", "A", "4732", "FAS", 10.0, "2024-01-02", nullptr,
                {{"code", "DA01"}, {"description", "IT AND TELECOM - BUSINESS APPLICATION/APPLICATION DEVELOPMENT"}}));
    psc.add(row("N553JH75Z8K1", "A", "4732", "FAS", 1.0, "2024-01-02"));
    Json p = psc.groups(10);
    EXPECT_EQ(p[0]["label"], "DA01 IT AND TELECOM - BUSINESS APPLICATION/APPLICATION DEVELOPMENT");
    EXPECT_EQ(p[1]["key"], "UNKNOWN");
}

TEST(TangoSpending, MonthsRunInTimeOrderWithUnknownLast) {
    SpendingAggregate a(GroupBy::month);
    a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 1.0, "2024-03-15"));
    a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 900.0, "2023-10-01"));
    a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 2.0, "2024-03-01T12:00:00Z"));
    Json undated = row("N553JH75Z8K1", "A", "4732", "FAS", 3.0, "2024-01-01");
    undated.erase("award_date");
    a.add(undated);
    Json g = a.groups(10);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[0]["key"], "2023-10");
    EXPECT_EQ(g[1]["key"], "2024-03");
    EXPECT_EQ(g[1]["total_obligated"], 3.0);
    EXPECT_EQ(g[1]["contract_count"], 2);
    EXPECT_EQ(g[2]["key"], "UNKNOWN");
}

TEST(TangoSpending, TopMonthsAreTheLatestOnesInTimeOrder) {
    SpendingAggregate a(GroupBy::month);
    for (const char* date : {"2024-01-05", "2024-02-05", "2024-03-05", "2024-04-05", "2023-12-05"}) {
        a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 1.0, date));
    }
    Json g = a.groups(3);
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[0]["key"], "2024-02");
    EXPECT_EQ(g[1]["key"], "2024-03");
    EXPECT_EQ(g[2]["key"], "2024-04");
}

TEST(TangoSpending, TotalsAddUpDeobligationsAndMissingAmounts) {
    SpendingAggregate a(GroupBy::agency);
    a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 0.1, "2024-01-02"));
    a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 0.2, "2024-01-02"));
    a.add(row("N553JH75Z8K1", "A", "9700", "DOD", 1000.0, "2024-01-02"));
    a.add(row("N553JH75Z8K1", "A", "9700", "DOD", -250.0, "2024-01-02"));   // a deobligation
    a.add(row("N553JH75Z8K1", "A", "9700", "DOD", nullptr, "2024-01-02"));  // counted, adds nothing
    a.add(row("N553JH75Z8K1", "A", "9700", "DOD", "12.5", "2024-01-02"));   // money as text
    EXPECT_EQ(a.rows(), 6);
    EXPECT_DOUBLE_EQ(a.total_obligated(), 0.1 + 0.2 + 1000.0 - 250.0 + 12.5);
    Json g = a.groups(10);
    EXPECT_EQ(g[0]["key"], "9700");
    EXPECT_EQ(g[0]["total_obligated"], 762.5);
    EXPECT_EQ(g[0]["contract_count"], 4);
    EXPECT_EQ(g[1]["total_obligated"], 0.3);  // to the cent, not 0.30000000000000004
    EXPECT_NEAR(sum_of(g), a.total_obligated(), 0.01);
}

TEST(TangoSpending, SharesArePercentagesOfWhatWasRead) {
    SpendingAggregate a(GroupBy::agency);
    a.add(row("N553JH75Z8K1", "A", "9700", "DOD", 750.0, "2024-01-02"));
    a.add(row("N553JH75Z8K1", "A", "4732", "FAS", 200.0, "2024-01-02"));
    a.add(row("N553JH75Z8K1", "A", "1540", "BOP", 50.0, "2024-01-02"));
    Json g = a.groups(10);
    EXPECT_EQ(g[0]["share_percent"], 75.0);
    EXPECT_EQ(g[1]["share_percent"], 20.0);
    EXPECT_EQ(g[2]["share_percent"], 5.0);

    SpendingAggregate zero(GroupBy::agency);
    zero.add(row("N553JH75Z8K1", "A", "9700", "DOD", 0.0, "2024-01-02"));
    EXPECT_EQ(zero.groups(10)[0]["share_percent"], 0.0);  // no division by zero
}

TEST(TangoSpending, TopKeepsTheLargestAndRanksThem) {
    SpendingAggregate a(GroupBy::agency);
    const char* codes[] = {"A1", "B2", "C3", "D4", "E5"};
    for (int i = 0; i < 5; ++i) a.add(row("N553JH75Z8K1", "A", codes[i], nullptr, 10.0 * (i + 1), "2024-01-02"));
    Json top = a.groups(2);
    ASSERT_EQ(top.size(), 2u);
    EXPECT_EQ(top[0]["key"], "E5");
    EXPECT_EQ(top[0]["rank"], 1);
    EXPECT_EQ(top[1]["key"], "D4");
    EXPECT_EQ(top[1]["rank"], 2);
    EXPECT_EQ(a.group_count(), 5u);  // the envelope's total: every group, not only the top
    EXPECT_EQ(a.groups(100).size(), 5u);
}

TEST(TangoSpending, EqualTotalsKeepAStableOrder) {
    SpendingAggregate a(GroupBy::agency);
    for (const char* code : {"C", "A", "B"}) a.add(row("N553JH75Z8K1", "A", code, nullptr, 10.0, "2024-01-02"));
    Json g = a.groups(10);
    EXPECT_EQ(g[0]["key"], "A");
    EXPECT_EQ(g[1]["key"], "B");
    EXPECT_EQ(g[2]["key"], "C");
}

TEST(TangoSpending, OddRowsAreCountedNeverThrown) {
    SpendingAggregate a(GroupBy::vendor);
    for (const Json& odd :
         {Json(), Json("row"), Json::array(), Json{{"recipient", "x"}, {"obligated", Json::object()}}}) {
        EXPECT_NO_THROW(a.add(odd)) << odd;
    }
    EXPECT_EQ(a.rows(), 4);
    Json g = a.groups(10);
    ASSERT_EQ(g.size(), 1u);
    EXPECT_EQ(g[0]["key"], "UNKNOWN");
    EXPECT_EQ(g[0]["contract_count"], 4);
    EXPECT_TRUE(SpendingAggregate(GroupBy::psc).groups(10).empty());
}

TEST(TangoSpending, PagesFeedTheAggregateAndTheCountSaysHowCompleteItIs) {
    // Two pages of a three-row result, then a stop at a one-page cap: the handler's loop in
    // miniature, with the completeness it reports.
    Json first = {{"count", 3},
                  {"next", "https://tango.makegov.com/api/contracts/?cursor=cGFnZTI%3D"},
                  {"cursor", "cGFnZTI="},
                  {"results", Json::array({row("N553JH75Z8K1", "A", "4732", "FAS", 100.0, "2024-01-02"),
                                           row("C47BNA8GM833", "B", "9700", "DOD", 300.0, "2024-01-03")})}};
    Json second = {{"count", 3},
                   {"next", nullptr},
                   {"cursor", nullptr},
                   {"results", Json::array({row("N553JH75Z8K1", "A", "4732", "FAS", 50.0, "2024-02-02")})}};

    SpendingAggregate capped(GroupBy::vendor);
    Page page = read_cursor_page(first);
    for (const auto& r : page.rows) capped.add(r);
    EXPECT_EQ(capped.rows(), 2);
    EXPECT_LT(capped.rows(), page.total);
    EXPECT_TRUE(page.next_cursor);  // incomplete: a cursor was left unread

    SpendingAggregate all(GroupBy::vendor);
    long long matching = 0;
    for (const Json* body : {&first, &second}) {
        Page p = read_cursor_page(*body);
        matching = p.total;
        for (const auto& r : p.rows) all.add(r);
    }
    EXPECT_EQ(all.rows(), matching);
    EXPECT_EQ(all.total_obligated(), 450.0);
    Json g = all.groups(10);
    EXPECT_EQ(g[0]["key"], "C47BNA8GM833");
    EXPECT_EQ(g[1]["total_obligated"], 150.0);
    EXPECT_EQ(g[1]["contract_count"], 2);
}

// ---- Tango's metrics (spending_metrics.hpp) ------------------------------------------------

TEST(TangoSpendingMetrics, OnlyQuestionsTheMetricsAnswerExactlyGoThere) {
    SummaryFilters f;
    f.group_by = GroupBy::month;
    f.vendor_uei = "N553JH75Z8K1";
    EXPECT_FALSE(metrics_question(f)) << "no look-back in months";
    f.last_months = 24;
    auto q = metrics_question(f);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->path(), "/api/entities/N553JH75Z8K1/metrics/24/month/");
    f.group_by = GroupBy::agency;
    EXPECT_EQ(metrics_question(f)->path(), "/api/entities/N553JH75Z8K1/metrics/24/year/");
    EXPECT_TRUE(metrics_question(f)->by_agency());
    f.group_by = GroupBy::vendor;
    EXPECT_FALSE(metrics_question(f)) << "metrics have no vendor breakdown";
    f.group_by = GroupBy::month;
    f.set_aside = "SBA";
    EXPECT_FALSE(metrics_question(f)) << "metrics take no other filter";
    f.set_aside.reset();
    f.naics = "541512";
    EXPECT_FALSE(metrics_question(f)) << "one subject only";
    f.vendor_uei.reset();
    EXPECT_EQ(metrics_question(f)->path(), "/api/naics/541512/metrics/24/month/");
    f.naics = "5415";
    EXPECT_FALSE(metrics_question(f)) << "metrics are per 6-digit code, not per prefix";
    f.naics.reset();
    f.psc = "DA01";
    EXPECT_EQ(metrics_question(f)->path(), "/api/psc/DA01/metrics/24/month/");
}

TEST(TangoSpendingMetrics, RowsAreReadAsNumbersOrAsObligationAndCountObjects) {
    MetricsQuestion by_month{.resource = "entities", .id = "N553JH75Z8K1", .months = 12, .group_by = GroupBy::month};
    SpendingAggregate objects(GroupBy::month);
    ASSERT_TRUE(read_metrics(Json::parse(R"({"count": 2, "results": [
        {"year": 2024, "month": 3, "awards": {"obligations": 1000.5, "count": 2}, "subawards": {"obligations": 0, "count": 0}},
        {"year": 2023, "month": 12, "awards": {"obligated": 500, "count": 1}}]})"),
                             by_month, objects));
    Json g = objects.groups(10);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[0]["key"], "2023-12");
    EXPECT_EQ(g[1]["total_obligated"], 1000.5);
    EXPECT_EQ(g[1]["contract_count"], 2);

    SpendingAggregate numbers(GroupBy::month);
    ASSERT_TRUE(
        read_metrics(Json::parse(R"({"results": [{"year": 2024, "month": 1, "awards": 42.0}]})"), by_month, numbers));
    EXPECT_EQ(numbers.groups(10)[0]["total_obligated"], 42.0);
    EXPECT_TRUE(numbers.groups(10)[0]["contract_count"].is_null()) << "a count Tango did not give is not invented";

    MetricsQuestion by_agency = by_month;
    by_agency.group_by = GroupBy::agency;
    SpendingAggregate agencies(GroupBy::agency);
    ASSERT_TRUE(read_metrics(Json::parse(R"({"results": [
        {"year": 2023, "agency": {"code": "4732", "name": "Federal Acquisition Service"}, "awards": {"obligations": 10, "count": 1}},
        {"year": 2024, "agency": {"code": "4732", "name": "Federal Acquisition Service"}, "awards": {"obligations": 30, "count": 2}},
        {"year": 2024, "agency": "Washington Headquarters Services", "awards": {"obligations": 5, "count": 1}}]})"),
                             by_agency, agencies));
    Json a = agencies.groups(10);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_EQ(a[0]["key"], "4732");
    EXPECT_EQ(a[0]["label"], "Federal Acquisition Service (4732)");
    EXPECT_EQ(a[0]["total_obligated"], 40.0);
    EXPECT_EQ(a[0]["contract_count"], 3);
}

TEST(TangoSpendingMetrics, AnAnswerItCannotReadAddsNothing) {
    MetricsQuestion q{.resource = "psc", .id = "DA01", .months = 12, .group_by = GroupBy::month};
    for (const char* body : {R"({"results": [{"year": 2024, "month": 1, "awards": "lots"}]})",
                             R"({"results": [{"year": 2024, "month": 1, "awards": 1}, {"year": 2024, "awards": 2}]})",
                             R"({"results": [{"year": 2024, "month": 13, "awards": 1}]})", R"({"results": {}})",
                             R"([])", R"({"error": "backend down"})"}) {
        SpendingAggregate a(GroupBy::month);
        EXPECT_FALSE(read_metrics(Json::parse(body), q, a)) << body;
        EXPECT_EQ(a.rows(), 0) << body;
    }
}
