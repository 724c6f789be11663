// What the tango tools put in a URL (providers/tango/tango_api.hpp Query, and the shapes
// in records.hpp): every value percent-encoded so no argument can add, end or replace a
// query parameter, and a `shape` that asks the API for every field the normalizers read.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "providers/tango/records.hpp"
#include "providers/tango/tango_api.hpp"
#include "providers/tango/validation.hpp"
#include "util/percent.hpp"

using namespace toolport;
using namespace toolport::tango;

namespace {

// The top-level fields of a shape: "a,b(c,d),e" → {a, b, e}. Fails the test on unbalanced
// parentheses.
std::vector<std::string> top_level_fields(std::string_view shape) {
    std::vector<std::string> fields;
    std::string current;
    int depth = 0;
    for (char c : shape) {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        EXPECT_GE(depth, 0) << shape;
        if (c == ',' && depth == 0) {
            fields.push_back(current);
            current.clear();
        } else if (depth == 0 && c != ')') {
            current += c;
        }
    }
    EXPECT_EQ(depth, 0) << shape;
    fields.push_back(current);
    return fields;
}

}  // namespace

TEST(TangoQuery, ReservedCharactersCannotForgeParameters) {
    Query q;
    q.add("search", std::string("a&uei=ZZZ")).add("recipient", std::string("x#fragment")).add("psc", std::string("1?2"));
    EXPECT_EQ(q.encoded(), "search=a%26uei%3DZZZ&recipient=x%23fragment&psc=1%3F2");
    // Exactly three parameters reach the API, whatever the values held.
    const std::string encoded = q.encoded();
    EXPECT_EQ(std::count(encoded.begin(), encoded.end(), '&'), 2);
    EXPECT_EQ(std::count(encoded.begin(), encoded.end(), '='), 3);
    EXPECT_EQ(encoded.find('#'), std::string::npos);
    EXPECT_EQ(encoded.find('?'), std::string::npos);
}

TEST(TangoQuery, SpacesPlusSignsAndPercentSignsSurviveTheTrip) {
    EXPECT_EQ(util::percent_encode("IT services"), "IT%20services");
    EXPECT_EQ(util::percent_encode("C++ / C#"), "C%2B%2B%20%2F%20C%23");  // '+' is not a space here
    EXPECT_EQ(util::percent_encode("100%"), "100%25");
    EXPECT_EQ(util::percent_encode("%41"), "%2541");          // already-encoded text is encoded again, not trusted
    EXPECT_EQ(util::percent_encode("A-z_0.9~"), "A-z_0.9~");  // RFC 3986 unreserved characters stay
    EXPECT_EQ(util::percent_encode(""), "");
}

TEST(TangoQuery, UnicodeIsEncodedAsUtf8Bytes) {
    EXPECT_EQ(util::percent_encode("café"), "caf%C3%A9");
    EXPECT_EQ(util::percent_encode("日本"), "%E6%97%A5%E6%9C%AC");
    EXPECT_EQ(util::percent_encode("😀"), "%F0%9F%98%80");
}

TEST(TangoQuery, ControlCharactersAreEncodedAndTextArgumentsHaveNoneLeft) {
    EXPECT_EQ(util::percent_encode(std::string("a\0b\r\nc", 6)), "a%00b%0D%0Ac");
    // A header-splitting attempt through a tool argument: cleaned, then encoded.
    Query q;
    q.add("search", text_arg(Json{{"query", "cloud\r\nX-API-KEY: stolen"}}, "query"));
    EXPECT_EQ(q.encoded(), "search=cloud%20%20X-API-KEY%3A%20stolen");  // CR and LF became spaces
}

TEST(TangoQuery, EveryEncodedValueDecodesToWhatWasAdded) {
    const std::vector<std::string> hostile = {
        "R&D = 100% #1",           "a+b c", "é日😀", "x=1&y=2", "%zz", "SDVOSBC|SDVOSBS", "recipient(uei,display_name)",
        std::string("\x01\x7f", 2)};
    for (const auto& value : hostile) {
        EXPECT_EQ(util::percent_decode(util::percent_encode(value)), value) << value;
    }
}

TEST(TangoQuery, ParametersKeepTheirOrderAndAbsentValuesAreLeftOut) {
    Query q;
    q.add("search", std::string("cloud"))
        .add("recipient", std::optional<std::string>())
        .add("limit", std::optional<int>(25))
        .add("cursor", std::optional<std::string>())
        .add("page", std::optional<int>())
        .add("ordering", std::string("-award_date"));
    EXPECT_EQ(q.encoded(), "search=cloud&limit=25&ordering=-award_date");
    ASSERT_EQ(q.params().size(), 3u);
    EXPECT_EQ(q.params()[1], (std::pair<std::string, std::string>{"limit", "25"}));
    EXPECT_EQ(Query().encoded(), "");
}

TEST(TangoQuery, FiltersAreReportedAsAppliedUnderTheArgumentsNames) {
    Query q;
    q.add("search", std::string("R&D"), "query")
        .add("set_aside", set_aside_arg(Json{{"s", "SDVOSB"}}, "s"), "set_aside_type")
        .add("fiscal_year", std::optional<int>(2025), "fiscal_year")
        .add("limit", std::optional<int>(5))
        .add("uei", std::optional<std::string>(), "vendor_uei");
    EXPECT_EQ(q.filters(), (Json{{"query", "R&D"}, {"set_aside_type", "SDVOSBC|SDVOSBS"}, {"fiscal_year", 2025}}));
    EXPECT_EQ(q.encoded(), "search=R%26D&set_aside=SDVOSBC%7CSDVOSBS&fiscal_year=2025&limit=5");
    EXPECT_EQ(Query().filters(), Json::object());
}

TEST(TangoQuery, TheContractShapeAsksForEveryFieldTheNormalizerReads) {
    const auto fields = top_level_fields(kContractShape);
    const std::set<std::string> have(fields.begin(), fields.end());
    EXPECT_EQ(have.size(), fields.size()) << "a field is listed twice: " << kContractShape;
    for (const char* read :
         {"key", "piid", "award_date", "fiscal_year", "description", "obligated", "total_contract_value", "recipient",
          "awarding_office", "naics", "psc", "set_aside", "place_of_performance", "period_of_performance"}) {
        EXPECT_TRUE(have.count(read)) << read << " is read but not asked for: " << kContractShape;
    }
    const std::string shape = kContractShape;
    EXPECT_NE(shape.find("recipient(uei,display_name)"), std::string::npos);
    EXPECT_NE(shape.find("naics(code,description)"), std::string::npos);
    EXPECT_NE(shape.find("psc(code,description)"), std::string::npos);
    EXPECT_NE(shape.find("set_aside(code,description)"), std::string::npos);
    // Fields the earlier servers read and the API never returns.
    for (const char* absent :
         {"award_amount", "recipient_name", "naics_description", "psc_description", "contract_status"}) {
        EXPECT_EQ(shape.find(absent), std::string::npos) << absent;
    }
    EXPECT_EQ(shape.find(' '), std::string::npos);
}

TEST(TangoQuery, TheOtherShapesAreWellFormedAndCoverTheirRecords) {
    const auto grant = top_level_fields(kGrantShape);
    const std::set<std::string> g(grant.begin(), grant.end());
    for (const char* read :
         {"grant_id", "opportunity_number", "title", "agency_code", "status", "cfda_numbers", "funding_instruments",
          "funding_categories", "applicant_types", "funding_details", "important_dates"}) {
        EXPECT_TRUE(g.count(read)) << read << ": " << kGrantShape;
    }
    const auto forecast = top_level_fields(kForecastShape);
    const std::set<std::string> f(forecast.begin(), forecast.end());
    for (const char* read : {"id", "title", "agency", "source_system", "anticipated_award_date", "fiscal_year",
                             "naics_code", "set_aside", "status"}) {
        EXPECT_TRUE(f.count(read)) << read << ": " << kForecastShape;
    }
    for (const char* shape : {kOpportunityShape, kEntityShape}) {
        const auto fields = top_level_fields(shape);
        EXPECT_EQ(std::set<std::string>(fields.begin(), fields.end()).size(), fields.size()) << shape;
        EXPECT_EQ(std::string(shape).find(' '), std::string::npos) << shape;
    }
}

TEST(TangoQuery, ShapesAreEncodedLikeAnyOtherValue) {
    Query q;
    q.add("shape", std::string("key,recipient(uei,display_name),awarding_office(*)"));
    EXPECT_EQ(q.encoded(), "shape=key%2Crecipient%28uei%2Cdisplay_name%29%2Cawarding_office%28%2A%29");
}
