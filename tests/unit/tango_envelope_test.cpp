// The seed's envelope and the API's two pagination styles (providers/tango/envelope.hpp):
// keyset pages hand back the API's own cursor, numbered pages an opaque "page:<n>" that the
// tools accept back in `cursor`; has_more is true exactly when there is a next cursor.
#include <set>

#include <gtest/gtest.h>

#include "providers/tango/envelope.hpp"
#include "providers/tango/validation.hpp"
#include "util/json.hpp"

using namespace toolport::tango;
using std::chrono::milliseconds;
using toolport::Json;

namespace {

// contracts-list.json (rows cut to keys).
const Json kContractsPage = Json::parse(R"({
  "count": 86157384,
  "next": "https://tango.makegov.com/api/contracts/?limit=3&shape=key%2Cpiid&cursor=WyIyMDI2LTA4LTEzIiwgImZmMWIwY2JmLWVmZTItNTI0MC1iZmVlLWFkMWI2MmNlMjVkYyJd",
  "previous": null,
  "cursor": "WyIyMDI2LTA4LTEzIiwgImZmMWIwY2JmLWVmZTItNTI0MC1iZmVlLWFkMWI2MmNlMjVkYyJd",
  "previous_cursor": null,
  "results": [{"key": "CONT_AWD_15B0AT26F41000011_1540_36W79720D0001_3600"},
              {"key": "CONT_AWD_15B31026F00000090_1540_GS03F045DA_4732"},
              {"key": "CONT_AWD_FA667024C0005_9700_-NONE-_-NONE-"}]})");

// grants-list.json.
const Json kGrantsPage = Json::parse(R"({
  "count": 4852,
  "next": "https://tango.makegov.com/api/grants/?limit=3&page=2&shape=grant_id%2Copportunity_number%2Ctitle%2Cstatus%28%2A%29%2Cagency_code",
  "previous": null,
  "results": [{"grant_id": 363557}]})");

}  // namespace

TEST(TangoEnvelopeCursor, TheRealContractsPage) {
    Page page = read_cursor_page(kContractsPage);
    EXPECT_EQ(page.total, 86157384);
    ASSERT_EQ(page.rows.size(), 3u);
    EXPECT_EQ(page.rows[2]["key"], "CONT_AWD_FA667024C0005_9700_-NONE-_-NONE-");
    EXPECT_EQ(page.next_cursor, "WyIyMDI2LTA4LTEzIiwgImZmMWIwY2JmLWVmZTItNTI0MC1iZmVlLWFkMWI2MmNlMjVkYyJd");
}

TEST(TangoEnvelopeCursor, WithoutTheCursorKeyTheNextUrlsCursorIsUsedDecoded) {
    Json body = kContractsPage;
    body.erase("cursor");
    body["next"] = "https://tango.makegov.com/api/contracts/?cursor=WyIy%2BMDI%3D&limit=3";
    EXPECT_EQ(read_cursor_page(body).next_cursor, "WyIy+MDI=");
    body["cursor"] = "";  // an empty cursor is no cursor
    EXPECT_EQ(read_cursor_page(body).next_cursor, "WyIy+MDI=");
    body["cursor"] = nullptr;
    EXPECT_EQ(read_cursor_page(body).next_cursor, "WyIy+MDI=");
}

TEST(TangoEnvelopeCursor, NoNextMeansTheLastPageWhateverCursorSays) {
    Json body = kContractsPage;
    body["next"] = nullptr;
    EXPECT_FALSE(read_cursor_page(body).next_cursor);
    body.erase("next");
    EXPECT_FALSE(read_cursor_page(body).next_cursor);
}

TEST(TangoEnvelopeCursor, EmptyAndMalformedBodiesGiveAnEmptyPage) {
    Page empty = read_cursor_page(Json::parse(R"({"count": 0, "next": null, "previous": null, "results": []})"));
    EXPECT_EQ(empty.total, 0);
    EXPECT_TRUE(empty.rows.empty());
    EXPECT_FALSE(empty.next_cursor);
    for (const Json& odd :
         {Json::parse(R"({"count": "12", "results": {"a": 1}})"), Json::array({1, 2}), Json("x"), Json()}) {
        Page p;
        ASSERT_NO_THROW(p = read_cursor_page(odd)) << odd;
        EXPECT_EQ(p.total, 0) << odd;
        EXPECT_TRUE(p.rows.is_array() && p.rows.empty()) << odd;
        EXPECT_FALSE(p.next_cursor) << odd;
    }
}

TEST(TangoEnvelopeNumbered, TheRealGrantsPageOffersPageTwo) {
    Page page = read_numbered_page(kGrantsPage, 1);
    EXPECT_EQ(page.total, 4852);
    EXPECT_EQ(page.rows.size(), 1u);
    EXPECT_EQ(page.next_cursor, "page:2");
}

TEST(TangoEnvelopeNumbered, TheNextPageComesFromTheUrlOrCountsOn) {
    Json body = kGrantsPage;
    body["next"] = "https://tango.makegov.com/api/opportunities/?limit=10&page=8";
    EXPECT_EQ(read_numbered_page(body, 7).next_cursor, "page:8");
    body["next"] = "https://tango.makegov.com/api/opportunities/?limit=10";  // no page in the URL
    EXPECT_EQ(read_numbered_page(body, 7).next_cursor, "page:8");
    body["next"] = "https://tango.makegov.com/api/opportunities/?page=abc";
    EXPECT_EQ(read_numbered_page(body, 3).next_cursor, "page:4");
    body["next"] = "https://tango.makegov.com/api/opportunities/?page=99999999999999";
    EXPECT_EQ(read_numbered_page(body, 3).next_cursor, "page:4");
    body["next"] = nullptr;
    EXPECT_FALSE(read_numbered_page(body, 3).next_cursor);
}

TEST(TangoEnvelopeNumbered, TheOfferedCursorIsAcceptedBack) {
    Json body = kGrantsPage;
    body["next"] = "https://tango.makegov.com/api/grants/?page=42&limit=3";
    const auto cursor = read_numbered_page(body, 41).next_cursor;
    ASSERT_TRUE(cursor);
    EXPECT_EQ(page_cursor_arg(Json{{"cursor", *cursor}}), 42);
}

TEST(TangoEnvelope, HasExactlyTheSeedsFields) {
    Json env = envelope(Json::array({Json{{"contract_id", "A"}}}), 86157384, Json{{"search", "cloud"}}, 10,
                        std::string("WyIy"), milliseconds(412), 1);
    std::set<std::string> keys;
    for (const auto& [key, value] : env.items()) keys.insert(key);
    EXPECT_EQ(keys, (std::set<std::string>{"data", "total", "returned", "filters", "pagination", "execution"}));
    EXPECT_EQ(env["total"], 86157384);
    EXPECT_EQ(env["returned"], 1);
    EXPECT_EQ(env["filters"], (Json{{"search", "cloud"}}));
    EXPECT_EQ(env["pagination"], Json::parse(R"({"limit": 10, "has_more": true, "next_cursor": "WyIy"})"));
    EXPECT_EQ(env["execution"], Json::parse(R"({"duration_ms": 412, "cached": false, "api_calls": 1})"));
}

TEST(TangoEnvelope, TheLastPageHasNoMoreAndANullCursor) {
    Json env = envelope(Json::array(), 0, Json::object(), 25, std::nullopt, milliseconds(3), 2);
    EXPECT_EQ(env["returned"], 0);
    EXPECT_EQ(env["data"], Json::array());
    EXPECT_EQ(env["pagination"]["has_more"], false);
    ASSERT_TRUE(env["pagination"].contains("next_cursor"));  // present and null, so the schema's field is always there
    EXPECT_TRUE(env["pagination"]["next_cursor"].is_null());
    EXPECT_EQ(env["pagination"]["limit"], 25);
    EXPECT_EQ(env["execution"]["api_calls"], 2);
}

TEST(TangoEnvelope, ReturnedCountsWhatIsThereNotTheLimit) {
    Json data = Json::array();
    for (int i = 0; i < 7; ++i) data.push_back(i);
    Json env = envelope(data, 7, Json::object(), 10, std::nullopt, milliseconds(0), 1);
    EXPECT_EQ(env["returned"], 7);
    EXPECT_EQ(env["total"], 7);
}

TEST(TangoEnvelope, ACachedCopySaysSo) {
    Json env = envelope(Json::array({1}), 1, Json::object(), 10, std::nullopt, milliseconds(350), 3);
    mark_cached(env, milliseconds(2));
    EXPECT_EQ(env["execution"], Json::parse(R"({"duration_ms": 2, "cached": true, "api_calls": 0})"));
    EXPECT_EQ(env["data"], Json::array({1}));  // nothing else changes

    Json not_an_envelope = {{"error", "x"}};
    mark_cached(not_an_envelope, milliseconds(2));
    EXPECT_EQ(not_an_envelope, (Json{{"error", "x"}}));
    Json array = Json::array();
    mark_cached(array, milliseconds(2));
    EXPECT_EQ(array, Json::array());
}
