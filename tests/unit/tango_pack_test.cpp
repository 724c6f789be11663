// The tango pack end to end in one process: a Runtime configured with `packs: {tango:
// {base_url: <fixture>}}`, its tools called over an MCP session through the whole
// pipeline, and a scripted server on loopback answering in the Tango API's wire format
// (trailing-slash paths, X-API-KEY, cursor and page pagination, its error bodies). What
// the fixture saw is checked as much as what the client got.
#include <cstdlib>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "app/runtime.hpp"
#include "async/asio_executor.hpp"
#include "http_test_servers.hpp"
#include "observability/metrics.hpp"
#include "server/session.hpp"

using namespace toolport;
using namespace toolport::test_support;
using namespace std::chrono_literals;

namespace {

const char* kKey = "tango-test-key";

Json contract_row(int n, const char* uei, const char* agency_code, const char* agency_name, double obligated,
                  const char* date) {
    return {{"key", "CONT_AWD_47QTCA24F00" + std::to_string(10 + n) + "_4732_47QTCK18D0005_4732"},
            {"piid", "47QTCA24F00" + std::to_string(10 + n)},
            {"award_date", date},
            {"fiscal_year", 2024},
            {"description", "IT SUPPORT SERVICES " + std::to_string(n)},
            {"obligated", obligated},
            {"total_contract_value", obligated * 3},
            {"naics", {{"code", 541512}, {"description", "Computer Systems Design Services"}}},
            {"psc",
             {{"code", "DA01"}, {"description", "IT AND TELECOM - BUSINESS APPLICATION/APPLICATION DEVELOPMENT"}}},
            {"set_aside", {{"code", "SBA"}, {"description", "Small Business Set Aside - Total"}}},
            {"recipient", {{"uei", uei}, {"display_name", std::string("VENDOR ") + uei}}},
            {"awarding_office",
             {{"agency_code", agency_code}, {"agency_name", agency_name}, {"office_code", "47QTCA"}}}};
}

// The Tango API as far as these tests need it.
ScriptedReply tango(const SeenRequest& r) {
    auto json = [](unsigned status, Json body) {
        ScriptedReply reply;
        reply.status = status;
        reply.body = body.dump();
        reply.headers = {{"Content-Type", "application/json"}, {"x-tango-api-version", "4.22.0"}};
        return reply;
    };
    if (r.header("X-API-KEY").empty()) return json(401, {{"detail", "Authentication credentials were not provided."}});
    if (r.header("X-API-KEY") != kKey) return json(401, {{"detail", "Invalid API key."}});
    const std::string path = r.target.substr(0, r.target.find('?'));
    const std::string query = r.target.find('?') == std::string::npos ? "" : r.target.substr(r.target.find('?') + 1);
    auto has = [&](const std::string& param) { return ("&" + query).find("&" + param) != std::string::npos; };
    if (path == "/api/contracts/") {
        if (has("search=ratelimited")) {
            auto reply = json(429, {{"detail", "Rate limit exceeded for burst. Please try again in 45 seconds."},
                                    {"wait_in_seconds", 45}});
            return reply;
        }
        if (has("search=broken")) return json(200, {{"error", "search backend unavailable"}});
        // Three pages of two rows each, keyed by the cursor.
        // Tango's cursors are base64 of the keyset (award date, record id) of the last row.
        int page = has("cursor=WyIyMDI0LTAyLTAxIiwicDIiXQ") ? 2 : has("cursor=WyIyMDIzLTEyLTAxIiwicDMiXQ") ? 3 : 1;
        Json rows = Json::array();
        if (page == 1) {
            rows.push_back(
                contract_row(1, "N553JH75Z8K1", "4732", "Federal Acquisition Service", 1000000, "2024-03-15"));
            rows.push_back(contract_row(2, "C47BNA8GM833", "9700", "Department of Defense", 5000000, "2024-02-01"));
        } else if (page == 2) {
            rows.push_back(contract_row(3, "N553JH75Z8K1", "4732", "Federal Acquisition Service", 250000, "2024-01-10"));
            rows.push_back(contract_row(4, "Z9CJC8GFNZ87", "9700", "Department of Defense", 100000, "2023-12-01"));
        } else {
            rows.push_back(contract_row(5, "UX6XA5HES291", "1540", "Federal Prison System", 50000, "2023-11-01"));
        }
        Json body = {{"count", 5}, {"previous", nullptr}, {"previous_cursor", nullptr}, {"results", rows}};
        const char* next = page == 1   ? "WyIyMDI0LTAyLTAxIiwicDIiXQ=="
                           : page == 2 ? "WyIyMDIzLTEyLTAxIiwicDMiXQ=="
                                       : nullptr;
        body["next"] = next ? Json("http://fixture/api/contracts/?limit=2&cursor=" + std::string(next)) : Json();
        body["cursor"] = next ? Json(next) : Json();
        return json(200, body);
    }
    if (path == "/api/entities/N553JH75Z8K1/") {
        return json(200, {{"uei", "N553JH75Z8K1"},
                          {"legal_business_name", "00ALPHA, LLC"},
                          {"cage_code", "8ABC1"},
                          {"federal_obligations", {{"total", {{"awards_obligated", 1250000.0}, {"awards_count", 3}}}}}});
    }
    if (path == "/api/entities/N553JH75Z8K1/contracts/") {
        return json(200,
                    {{"count", 3},
                     {"next", nullptr},
                     {"results",
                      {contract_row(1, "N553JH75Z8K1", "4732", "Federal Acquisition Service", 1000000, "2024-03-15")}}});
    }
    if (path == "/api/entities/N553JH75Z8K1/metrics/24/month/") {
        return json(200, {{"count", 2},
                          {"description", "Last 24 months, by month"},
                          {"recipient", {{"uei", "N553JH75Z8K1"}, {"display_name", "00ALPHA, LLC"}}},
                          {"results",
                           {{{"year", 2024}, {"month", 1}, {"awards", {{"obligations", 250000.0}, {"count", 1}}}},
                            {{"year", 2024}, {"month", 3}, {"awards", {{"obligations", 1000000.0}, {"count", 2}}}}}}});
    }
    if (path == "/api/psc/DA01/metrics/12/year/") {  // group_by=agency; an answer in a form nobody documented
        return json(200, {{"count", 1}, {"results", {{{"year", 2024}, {"agency", "GSA"}, {"awards", "lots"}}}}});
    }
    // A vendor whose profile the plan covers but not its contract list.
    if (path == "/api/entities/C47BNA8GM833/") {
        return json(200, {{"uei", "C47BNA8GM833"}, {"legal_business_name", "ACCENTURE FEDERAL SERVICES LLC"}});
    }
    if (path == "/api/entities/C47BNA8GM833/contracts/") {
        return json(403, {{"detail", "You do not have permission to perform this action."}});
    }
    if (path.rfind("/api/entities/", 0) == 0) return json(404, {{"detail", "No Entity matches the given query."}});
    if (path == "/api/grants/" && has("search=echo")) {
        // An API that quotes the request back, key included.
        return json(200, {{"count", 1},
                          {"next", nullptr},
                          {"results",
                           {{{"grant_id", 1},
                             {"opportunity_number", r.header("X-API-KEY")},
                             {"title", "Requested with key " + r.header("X-API-KEY")}}}}});
    }
    if (path == "/api/grants/") {
        return json(200, {{"count", 4852},
                          {"next", "http://fixture/api/grants/?limit=1&page=3"},
                          {"previous", "http://fixture/api/grants/?limit=1&page=1"},
                          {"results",
                           {{{"grant_id", 363557},
                             {"opportunity_number", "RFA-AG-28-009"},
                             {"status", {{"code", "F"}, {"description", "Forecasted"}}},
                             {"title", "Alzheimer&#39;s Drug-Development Program"}}}}});
    }
    if (path == "/api/forecasts/") {
        return json(200,
                    {{"count", 1},
                     {"next", nullptr},
                     {"results", {{{"id", 19690}, {"title", "RNC Janitorial Services"}, {"naics_code", "561720"}}}}});
    }
    return json(404, {{"detail", "Not found."}});
}

class TangoPackTest : public ::testing::Test {
protected:
    TangoPackTest() : server(tango) {}

    void start(Json settings = Json::object(), const char* key = kKey) {
        if (key) ::setenv("TOOLPORT_UT_TANGO_KEY", key, 1);
        else ::unsetenv("TOOLPORT_UT_TANGO_KEY");
        settings["base_url"] = server.url("");
        settings["api_key_env"] = "TOOLPORT_UT_TANGO_KEY";
        Config config;
        config.packs = {"tango"};
        config.pack_settings.emplace("tango", providers::SourceSettings(settings, "packs.tango"));
        config.downstream.proxy = {};
        runtime = std::make_unique<Runtime>(config, executor);
        session = runtime->server().open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                                 CallerIdentity{.session_id = "tango-test"});
        session->receive(protocol::Request{0, "initialize", {{"protocolVersion", "2025-11-25"}}});
        session->receive(protocol::Notification{"notifications/initialized", nullptr});
        pump([] { return true; });
    }

    ~TangoPackTest() override {
        if (session) session->close();
        io.poll();
    }

    void pump(const std::function<bool()>& done) {
        const auto until = std::chrono::steady_clock::now() + 10s;
        io.restart();
        while (!done() && std::chrono::steady_clock::now() < until) io.run_one_for(50ms);
        io.poll();
    }

    // The result of tools/call `tool` (the whole JSON-RPC message in `last`).
    Json call(const std::string& tool, Json args = Json::object()) {
        const int id = ++next_id;
        session->receive(protocol::Request{id, "tools/call", {{"name", tool}, {"arguments", std::move(args)}}});
        pump([&] {
            for (const auto& m : out) {
                if (m.value("id", Json()) == id) return true;
            }
            return false;
        });
        for (const auto& m : out) {
            if (m.value("id", Json()) == id) {
                last = m;
                return m.contains("result") ? m["result"] : m;
            }
        }
        ADD_FAILURE() << "no answer to " << tool;
        return nullptr;
    }

    // An error result's fields: in _meta["toolport/error"] (its structuredContent would have
    // to match the success envelope, so there is none).
    static Json error(const Json& result) {
        EXPECT_FALSE(result.contains("structuredContent")) << result.dump();
        return result.value("_meta", Json::object()).value("toolport/error", Json());
    }

    ScriptedServer server;
    boost::asio::io_context io;
    AsioExecutor executor{io};
    std::unique_ptr<Runtime> runtime;
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
    Json last;
    int next_id = 0;
};

}  // namespace

TEST_F(TangoPackTest, ContractsSearchMapsEveryFilterAndNormalizesTheRecords) {
    start();
    auto r = call("search_tango_contracts", {{"query", "cloud & data"},
                                             {"vendor_name", "Alpha"},
                                             {"vendor_uei", "n553jh75z8k1"},
                                             {"awarding_agency", "GSA"},
                                             {"naics_code", "541512"},
                                             {"psc_code", "DA01"},
                                             {"award_date_start", "2024-01-01"},
                                             {"award_date_end", "2024-12-31"},
                                             {"set_aside_type", "SDVOSB"},
                                             {"ordering", "-obligated"},
                                             {"limit", 2}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    ASSERT_EQ(server.requests().size(), 1u);
    const auto seen = server.requests()[0];
    EXPECT_EQ(seen.header("X-API-KEY"), kKey);
    EXPECT_EQ(
        seen.target.rfind("/api/contracts/?search=cloud%20%26%20data&recipient=Alpha&uei=N553JH75Z8K1&"
                          "awarding_agency=GSA&naics=541512&psc=DA01&award_date_gte=2024-01-01&"
                          "award_date_lte=2024-12-31&set_aside=SDVOSBC%7CSDVOSBS&ordering=-obligated&limit=2&shape=",
                          0),
        0u)
        << seen.target;
    const Json& env = r["structuredContent"];
    EXPECT_EQ(env["total"], 5);
    EXPECT_EQ(env["returned"], 2);
    EXPECT_EQ(env["data"][0]["vendor"]["uei"], "N553JH75Z8K1");
    EXPECT_EQ(env["data"][0]["naics"]["description"], "Computer Systems Design Services");
    EXPECT_EQ(env["pagination"],
              (Json{{"limit", 2}, {"has_more", true}, {"next_cursor", "WyIyMDI0LTAyLTAxIiwicDIiXQ=="}}));
    EXPECT_EQ(env["filters"]["set_aside_type"], "SDVOSBC|SDVOSBS");  // the argument's name, the value applied
    EXPECT_EQ(env["filters"]["vendor_uei"], "N553JH75Z8K1");
    EXPECT_FALSE(env["filters"].contains("api_key"));
    EXPECT_EQ(env["execution"]["cached"], false);
    EXPECT_EQ(env["execution"]["api_calls"], 1);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 1);

    // The next page with the cursor the answer gave.
    auto next = call("search_tango_contracts", {{"cursor", "WyIyMDI0LTAyLTAxIiwicDIiXQ=="}, {"limit", 2}});
    EXPECT_EQ(next["structuredContent"]["data"][0]["piid"], "47QTCA24F0013");
    EXPECT_NE(server.requests().back().target.find("cursor=WyIyMDI0LTAyLTAxIiwicDIiXQ%3D%3D"), std::string::npos);
}

TEST_F(TangoPackTest, TheServersKeyEchoedByTheApiReachesNoClient) {
    start();
    auto r = call("search_tango_grants", {{"query", "echo"}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    EXPECT_EQ(r.dump().find(kKey), std::string::npos) << r.dump();
    EXPECT_EQ(r["structuredContent"]["data"][0]["title"], "Requested with key [redacted]");
    EXPECT_EQ(r["structuredContent"]["data"][0]["opportunity_number"], "[redacted]");
}

TEST_F(TangoPackTest, ARepeatedCallIsServedFromTheCacheAndSaysSo) {
    start();
    auto first = call("search_tango_grants", {{"query", "alzheimer"}, {"cursor", "page:2"}, {"limit", 1}});
    ASSERT_FALSE(first.value("isError", false)) << first.dump();
    EXPECT_NE(server.requests()[0].target.find("page=2"), std::string::npos);
    EXPECT_EQ(first["structuredContent"]["data"][0]["title"], "Alzheimer's Drug-Development Program");
    EXPECT_EQ(first["structuredContent"]["pagination"]["next_cursor"], "page:3");
    auto again = call("search_tango_grants", {{"query", "alzheimer"}, {"cursor", "page:2"}, {"limit", 1}});
    EXPECT_EQ(server.requests().size(), 1u);  // the fixture saw one request
    EXPECT_EQ(again["structuredContent"]["execution"]["cached"], true);
    EXPECT_EQ(again["structuredContent"]["execution"]["api_calls"], 0);
    EXPECT_EQ(again["_meta"]["cache_status"], "hit");
    EXPECT_EQ(again["_meta"]["downstream_api_calls"], 0);
    EXPECT_NE(again["content"][0]["text"].get<std::string>().find("\"cached\":true"), std::string::npos);
}

TEST_F(TangoPackTest, ValuesRefusedLocallyNeverReachTheApi) {
    start();
    auto bad_date = call("search_tango_contracts", {{"award_date_start", "01/01/2024"}});
    EXPECT_EQ(error(bad_date)["error_code"], "INVALID_FORMAT");
    auto inverted = call("search_tango_contracts",
                         {{"award_date_start", "2024-12-31"}, {"award_date_end", "2024-01-01"}});
    EXPECT_EQ(error(inverted)["error_code"], "INVALID_ARGUMENT");
    auto bad_uei = call("get_tango_vendor_profile", {{"uei", "0BADUEI"}});
    EXPECT_EQ(error(bad_uei)["error_code"], "INVALID_FORMAT");
    auto limit = call("search_tango_opportunities", {{"limit", 500}});
    EXPECT_EQ(error(limit)["error_code"], "INVALID_ARGUMENT");
    auto ordering = call("search_tango_contracts", {{"ordering", "recipient_name"}});
    EXPECT_EQ(error(ordering)["error_code"], "INVALID_ARGUMENT");
    // A cursor longer than any Tango hands out is refused, not cut into another cursor.
    auto long_cursor = call("search_tango_contracts", {{"cursor", std::string(1001, 'A')}});
    EXPECT_EQ(error(long_cursor)["error_code"], "INVALID_FORMAT");
    EXPECT_EQ(error(long_cursor)["parameter"], "cursor");
    // Award dates wholly outside the fiscal year are refused, not replaced by it.
    auto outside = call("get_tango_spending_summary", {{"fiscal_year", 2024}, {"award_date_start", "2025-01-01"}});
    EXPECT_EQ(error(outside)["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(error(outside)["parameter"], "award_date_start");
    EXPECT_TRUE(server.requests().empty());
}

TEST_F(TangoPackTest, ExplicitAwardDatesNarrowTheFiscalYear) {
    start(Json{{"spending_summary_max_pages", 1}});
    auto r = call("get_tango_spending_summary",
                  {{"fiscal_year", 2024}, {"award_date_start", "2023-01-01"}, {"award_date_end", "2024-03-31"}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    EXPECT_NE(server.requests()[0].target.find("award_date_gte=2023-10-01&award_date_lte=2024-03-31"), std::string::npos)
        << server.requests()[0].target;
}

TEST_F(TangoPackTest, PostedDateOrdersOpportunitiesByTheirFirstNotice) {
    start();
    call("search_tango_opportunities", {{"ordering", "-posted_date"}});
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_NE(server.requests()[0].target.find("ordering=-first_notice_date"), std::string::npos)
        << server.requests()[0].target;
}

TEST_F(TangoPackTest, AMissingUeiSuggestsSearchingByVendorName) {
    start();
    auto r = call("get_tango_vendor_profile");
    EXPECT_EQ(r["isError"], true);
    EXPECT_EQ(error(r)["error_code"], "MISSING_PARAMETER");
    EXPECT_EQ(error(r)["parameter"], "uei");
    EXPECT_NE(error(r)["suggestion"].get<std::string>().find("search_tango_contracts with the vendor_name"),
              std::string::npos);
    EXPECT_EQ(r["content"][0]["text"].get<std::string>().rfind("MISSING_PARAMETER: ", 0), 0u);
    // /metrics counts the failure by its code, read from _meta.error.
    const auto counted = observability::metrics().value("toolport_tool_errors_total",
                                                        {{"tool", "get_tango_vendor_profile"},
                                                         {"code", "MISSING_PARAMETER"}});
    ASSERT_TRUE(counted);
    EXPECT_GE(*counted, 1.0);
}

TEST_F(TangoPackTest, VendorProfileWithRecentContractsAndNotFound) {
    start();
    auto r = call("get_tango_vendor_profile", {{"uei", "N553JH75Z8K1"}, {"recent_contracts_limit", 1}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    const Json& v = r["structuredContent"]["data"][0];
    EXPECT_EQ(v["legal_business_name"], "00ALPHA, LLC");
    EXPECT_EQ(v["federal_obligations"]["total"]["awards_count"], 3);
    EXPECT_EQ(v["recent_contracts"].size(), 1u);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 2);
    ASSERT_EQ(server.requests().size(), 2u);
    EXPECT_NE(server.requests()[1].target.find("ordering=-award_date"), std::string::npos);

    auto missing = call("get_tango_vendor_profile", {{"uei", "JNSXDDCLHRM8"}});
    EXPECT_EQ(error(missing)["error_code"], "NOT_FOUND");
    EXPECT_EQ(missing["_meta"]["downstream_api_calls"], 1);  // a failed call counts its requests too
    EXPECT_NE(error(missing)["error"].get<std::string>().find("No Entity matches"), std::string::npos);
}

TEST_F(TangoPackTest, AProfileWhoseRecentContractsTangoRefusesComesLabelledIncomplete) {
    start();
    auto r = call("get_tango_vendor_profile", {{"uei", "C47BNA8GM833"}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    const Json& v = r["structuredContent"]["data"][0];
    EXPECT_EQ(v["legal_business_name"], "ACCENTURE FEDERAL SERVICES LLC");
    EXPECT_EQ(v["complete"], false);
    EXPECT_FALSE(v.contains("recent_contracts"));
    EXPECT_EQ(v["recent_contracts_error"]["error_code"], "INVALID_ARGUMENT");
    EXPECT_NE(v["recent_contracts_error"]["error"].get<std::string>().find("HTTP 403"), std::string::npos);
    EXPECT_NE(v["recent_contracts_error"]["error"].get<std::string>().find("do not have permission"), std::string::npos);
    EXPECT_EQ(v["recent_contracts_error"]["transient"], false);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 2);
    // The declared schema says which keys come only sometimes.
    const auto& tool = *runtime->server().registry().tools().at("get_tango_vendor_profile");
    const Json& required = tool.output_schema["properties"]["data"]["items"]["required"];
    for (const char* sometimes : {"recent_contracts", "contracts_total", "recent_contracts_error"}) {
        EXPECT_EQ(std::find(required.begin(), required.end(), sometimes), required.end()) << sometimes;
        EXPECT_TRUE(tool.output_schema["properties"]["data"]["items"]["properties"].contains(sometimes)) << sometimes;
    }
    EXPECT_NE(std::find(required.begin(), required.end(), "complete"), required.end());
}

TEST_F(TangoPackTest, ApiErrorsBecomeStructuredToolErrors) {
    start();
    auto limited = call("search_tango_contracts", {{"query", "ratelimited"}});
    EXPECT_EQ(error(limited)["error_code"], "RATE_LIMITED");
    EXPECT_EQ(error(limited)["retry_after_ms"], 45000);
    auto broken = call("search_tango_contracts", {{"query", "broken"}});
    EXPECT_EQ(error(broken)["error_code"], "UPSTREAM_ERROR");
    auto wrong_key = call("search_tango_contracts", {{"api_key", "not-the-key"}});
    EXPECT_EQ(error(wrong_key)["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(error(wrong_key)["parameter"], "api_key");
    EXPECT_EQ(server.requests().back().header("X-API-KEY"), "not-the-key");
    // The session goes on serving.
    EXPECT_FALSE(call("search_tango_contracts", {{"limit", 1}}).value("isError", false));
}

TEST_F(TangoPackTest, WithoutAnyKeyTheToolSaysWhereToPutOne) {
    start(Json::object(), nullptr);
    auto r = call("search_tango_contracts", {{"limit", 1}});
    EXPECT_EQ(error(r)["error_code"], "MISSING_API_KEY");
    EXPECT_NE(error(r)["suggestion"].get<std::string>().find("TOOLPORT_UT_TANGO_KEY"), std::string::npos);
    EXPECT_TRUE(server.requests().empty());
    // The client's own key, as an argument, works.
    EXPECT_FALSE(call("search_tango_contracts", {{"limit", 1}, {"api_key", kKey}}).value("isError", false));
}

TEST_F(TangoPackTest, SpendingSummaryPagesWithSpacingAndSaysHowCompleteItIs) {
    start(Json{{"spending_summary_max_pages", 2}});
    auto r = call("get_tango_spending_summary", {{"group_by", "agency"}, {"fiscal_year", 2024}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    const Json& env = r["structuredContent"];
    EXPECT_EQ(env["summary"]["rows_aggregated"], 4);
    EXPECT_EQ(env["summary"]["total_matching_contracts"], 5);
    EXPECT_EQ(env["summary"]["complete"], false);
    EXPECT_NE(env["summary"]["note"].get<std::string>().find("Partial: 4 of 5"), std::string::npos);
    EXPECT_EQ(env["data"][0]["key"], "9700");
    EXPECT_EQ(env["data"][0]["total_obligated"], 5100000.0);
    EXPECT_EQ(env["data"][1]["total_obligated"], 1250000.0);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 2);
    auto seen = server.requests();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_NE(seen[0].target.find("award_date_gte=2023-10-01&award_date_lte=2024-09-30"), std::string::npos);
    // 100 ms between the requests to Tango, within one call. The pacer spaces the starts of
    // requests; as the server sees them arrive, the first one also carried the connection
    // set-up the second (on the pooled connection) did not, so a loaded machine shows a few
    // ms less. A client without pacing would show ~1 ms.
    EXPECT_GE(seen[1].at - seen[0].at, 80ms);
}

TEST_F(TangoPackTest, ASpendingSummaryWithinTheCapIsComplete) {
    start(Json{{"spending_summary_max_pages", 3}});
    auto r = call("get_tango_spending_summary", {{"group_by", "vendor"}, {"top", 2}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    const Json& env = r["structuredContent"];
    EXPECT_EQ(env["summary"]["complete"], true);
    EXPECT_EQ(env["summary"]["rows_aggregated"], 5);
    EXPECT_EQ(env["returned"], 2);
    EXPECT_EQ(env["data"][0]["label"], "VENDOR C47BNA8GM833 (C47BNA8GM833)");
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 3);
}

// get_tango_spending_summary may page through many contracts: it supports tasks, and run
// as one (a stateless client that declared the tasks extension) it completes with the
// same envelope and accounting as in the request.
TEST_F(TangoPackTest, TheSpendingSummaryRunsAsATaskForAClientThatDeclaredTheExtension) {
    start(Json{{"spending_summary_max_pages", 3}});
    const auto& tool = *runtime->server().registry().tools().at("get_tango_spending_summary");
    EXPECT_EQ(tool.execution, (Json{{"taskSupport", "optional"}}));
    auto stateless = runtime->server().open_session([this](const Json& m,
                                                           const protocol::RequestId*) { out.push_back(m); },
                                                    CallerIdentity{});
    auto send = [&](const std::string& method, Json params) {
        params["_meta"] = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                           {"io.modelcontextprotocol/clientCapabilities",
                            {{"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}}}};
        const int id = ++next_id;
        stateless->receive(protocol::Request{id, method, std::move(params)});
        Json answer;
        pump([&] {
            for (const auto& m : out) {
                if (m.value("id", Json()) == id && !m.contains("method")) answer = m;
            }
            return !answer.is_null();
        });
        return answer.value("result", answer);
    };
    // Asked as a task (params.task): a call this quick is otherwise answered in its request.
    Json created = send("tools/call", {{"name", "get_tango_spending_summary"},
                                       {"task", Json::object()},
                                       {"arguments", {{"group_by", "vendor"}, {"top", 2}}}});
    ASSERT_EQ(created.value("resultType", ""), "task") << created.dump();
    const std::string id = created["taskId"];
    Json task;
    for (int i = 0; i < 200; ++i) {
        task = send("tasks/get", {{"taskId", id}});
        if (task.value("status", "") != "working") break;
        io.restart();
        io.run_one_for(20ms);  // the call's requests to the fixture go on
    }
    ASSERT_EQ(task.value("status", ""), "completed") << task.dump();
    const Json& r = task["result"];
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    EXPECT_EQ(r["structuredContent"]["summary"]["complete"], true);
    EXPECT_EQ(r["structuredContent"]["summary"]["rows_aggregated"], 5);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 3);
    EXPECT_EQ(server.requests().size(), 3u);
    stateless->close();
}

TEST_F(TangoPackTest, OneVendorByMonthOverTheLastMonthsComesFromTangosMetrics) {
    start();
    auto r = call("get_tango_spending_summary",
                  {{"group_by", "month"}, {"vendor_uei", "N553JH75Z8K1"}, {"last_months", 24}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    ASSERT_EQ(server.requests().size(), 1u) << "one request, no contract pages";
    EXPECT_EQ(server.requests()[0].target, "/api/entities/N553JH75Z8K1/metrics/24/month/");
    const Json& env = r["structuredContent"];
    EXPECT_EQ(env["summary"]["source"], "metrics");
    EXPECT_EQ(env["summary"]["complete"], true);
    EXPECT_EQ(env["summary"]["total_obligated_aggregated"], 1250000.0);
    ASSERT_EQ(env["data"].size(), 2u);
    EXPECT_EQ(env["data"][0]["key"], "2024-01");
    EXPECT_EQ(env["data"][1]["key"], "2024-03");
    EXPECT_EQ(env["data"][1]["contract_count"], 2);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 1);
}

TEST_F(TangoPackTest, AMetricsAnswerItCannotReadFallsBackToAddingUpContracts) {
    start(Json{{"spending_summary_max_pages", 1}});
    auto r = call("get_tango_spending_summary", {{"group_by", "agency"}, {"psc_code", "DA01"}, {"last_months", 12}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    const auto seen = server.requests();
    ASSERT_EQ(seen.size(), 2u);
    EXPECT_EQ(seen[0].target, "/api/psc/DA01/metrics/12/year/?group_by=agency");
    EXPECT_EQ(seen[1].target.rfind("/api/contracts/?psc=DA01&award_date_gte=", 0), 0u) << seen[1].target;
    const Json& summary = r["structuredContent"]["summary"];
    EXPECT_EQ(summary["source"], "contracts");
    EXPECT_NE(summary["note"].get<std::string>().find("metrics answer was not in a form"), std::string::npos);
    EXPECT_EQ(r["_meta"]["downstream_api_calls"], 2);
}

TEST_F(TangoPackTest, QuestionsTheMetricsCannotAnswerPageThroughContracts) {
    start(Json{{"spending_summary_max_pages", 1}});
    // Two filters, another grouping, a NAICS prefix, or no look-back: contracts.
    call("get_tango_spending_summary",
         {{"group_by", "month"}, {"vendor_uei", "N553JH75Z8K1"}, {"awarding_agency", "GSA"}, {"last_months", 24}});
    call("get_tango_spending_summary", {{"group_by", "vendor"}, {"psc_code", "DA02"}, {"last_months", 24}});
    call("get_tango_spending_summary", {{"group_by", "month"}, {"naics_code", "5415"}, {"last_months", 24}});
    call("get_tango_spending_summary", {{"group_by", "month"}, {"psc_code", "DA03"}});
    for (const auto& seen : server.requests()) {
        EXPECT_EQ(seen.target.rfind("/api/contracts/", 0), 0u) << seen.target;
    }
    auto both = call("get_tango_spending_summary", {{"last_months", 6}, {"fiscal_year", 2024}});
    EXPECT_EQ(error(both)["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(error(both)["parameter"], "last_months");
}

TEST_F(TangoPackTest, ForecastsComeFromTheirOwnEndpoint) {
    start();
    auto r = call("search_tango_opportunities", {{"source", "forecasts"}, {"naics_code", "56"}});
    ASSERT_FALSE(r.value("isError", false)) << r.dump();
    EXPECT_EQ(r["structuredContent"]["data"][0]["forecast_id"], 19690);
    EXPECT_NE(server.requests()[0].target.find("/api/forecasts/?naics_starts_with=56"), std::string::npos);
}

TEST_F(TangoPackTest, EveryToolDeclaresItsOutputSchemaAndHints) {
    start();
    const auto& tools = runtime->server().registry().tools();
    for (const char* name : {"search_tango_contracts", "search_tango_grants", "get_tango_vendor_profile",
                             "search_tango_opportunities", "get_tango_spending_summary"}) {
        ASSERT_TRUE(tools.count(name)) << name;
        const auto& t = *tools.at(name);
        EXPECT_EQ(t.service, "tango");
        EXPECT_EQ(t.annotations["readOnlyHint"], true);
        EXPECT_TRUE(t.output_schema.is_object());
        EXPECT_TRUE(!t.input_schema.contains("required") || t.input_schema["required"].empty()) << name;
        EXPECT_GT(t.description.size(), 300u) << name;
    }
}
