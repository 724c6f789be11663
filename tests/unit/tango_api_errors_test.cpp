// The Tango API's failures as tool errors (providers/tango/tango_api.hpp error_for_status,
// error_in_body), status by status with the bodies the reference records (tango-api.md
// §1.6): what the model is told, whether it may retry, and how long to wait.
#include <gtest/gtest.h>

#include "providers/tango/tango_api.hpp"

using namespace toolport;
using namespace toolport::tango;

namespace {

Json status_error(unsigned status, std::string_view body, std::optional<std::string> retry_after = std::nullopt) {
    return error_for_status(status, retry_after, body).to_json();
}

bool mentions(const Json& error, std::string_view text) {
    return error["error"].get<std::string>().find(text) != std::string::npos;
}

}  // namespace

TEST(TangoApiErrors, ARefusedKeyNamesTheKeyNotTheCaller) {
    for (const char* body :
         {R"({"detail": "Authentication credentials were not provided."})", R"({"detail": "Invalid API key."})"}) {
        for (unsigned status : {401u, 403u}) {
            Json e = status_error(status, body);
            EXPECT_EQ(e["error_code"], "INVALID_ARGUMENT") << status;
            EXPECT_EQ(e["parameter"], "api_key") << status;
            EXPECT_TRUE(mentions(e, std::to_string(status))) << e["error"];
            EXPECT_TRUE(mentions(e, Json::parse(body)["detail"].get<std::string>())) << e["error"];
            EXPECT_EQ(e["transient"], false);
            EXPECT_EQ(e["recoverable"], true);
            EXPECT_NE(e["suggestion"].get<std::string>().find("TANGO_API_KEY"), std::string::npos);
            EXPECT_FALSE(e.contains("retry_after_ms"));
        }
    }
}

TEST(TangoApiErrors, NotFoundCarriesTheApisSentence) {
    Json e = status_error(404, R"({"detail": "No Contract matches the given query."})");
    EXPECT_EQ(e["error_code"], "NOT_FOUND");
    EXPECT_TRUE(mentions(e, "No Contract matches the given query."));
    EXPECT_EQ(e["transient"], false);
    EXPECT_NE(e["suggestion"].get<std::string>().find("search_tango_contracts"), std::string::npos);
    EXPECT_EQ(status_error(404, R"({"detail": "No Entity matches the given query."})")["error_code"], "NOT_FOUND");
}

TEST(TangoApiErrors, BadRequestsRelayTheApisMessageInEachDrfShape) {
    // edge-vehicles-bad-ordering.json
    Json ordering = status_error(
        400,
        R"({"error": "Invalid ordering value(s): not_a_real_field. Allowed values are: award_date, fiscal_year, idv_count, last_date_to_order, latest_award_date, order_count, total_obligated, vehicle_obligations."})");
    EXPECT_EQ(ordering["error_code"], "INVALID_ARGUMENT");
    EXPECT_TRUE(mentions(ordering, "Invalid ordering value(s): not_a_real_field."));
    EXPECT_TRUE(mentions(ordering, "vehicle_obligations"));
    EXPECT_EQ(ordering["transient"], false);

    EXPECT_TRUE(
        mentions(status_error(400, R"({"detail": "Invalid date: award_date_gte."})"), "Invalid date: award_date_gte."));
    EXPECT_TRUE(
        mentions(status_error(400, R"({"message": "limit must be at most 100"})"), "limit must be at most 100"));
    EXPECT_TRUE(mentions(status_error(400, R"({"award_date_gte": ["Enter a valid date."], "limit": ["Too big."]})"),
                         "award_date_gte: Enter a valid date."));
    EXPECT_TRUE(mentions(status_error(400, R"({"non_field_errors": "award_date_gte is after award_date_lte"})"),
                         "non_field_errors: award_date_gte is after award_date_lte"));
}

TEST(TangoApiErrors, ShapeErrorsNameTheFieldAndTheReason) {
    Json e = status_error(400, R"({"issues": [{"path": "tradeoff_process", "reason": "unknown_field"},
                                              {"path": "other", "reason": "unknown_field"}],
                                   "available_fields": ["key", "piid", "award_date"]})");
    EXPECT_EQ(e["error_code"], "INVALID_ARGUMENT");
    EXPECT_TRUE(mentions(e, "tradeoff_process: unknown_field"));
}

TEST(TangoApiErrors, BodiesThatAreNotJsonAreQuotedSafely) {
    Json html = status_error(400, "<html><body>Bad Request</body></html>");
    EXPECT_EQ(html["error_code"], "INVALID_ARGUMENT");
    EXPECT_TRUE(mentions(html, "Bad Request"));
    Json empty = status_error(400, "");
    EXPECT_EQ(empty["error_code"], "INVALID_ARGUMENT");
    EXPECT_TRUE(mentions(status_error(400, "{}"), "the API gave no reason"));
    // A huge body is cut, and its control characters never reach the client.
    const std::string huge = "\x1b[2J<h1>Bad Gateway</h1>\r\nSet-Cookie: x" + std::string(20000, 'A');
    Json cut = status_error(502, huge);
    EXPECT_LT(cut["error"].get<std::string>().size(), 1000u);
    EXPECT_EQ(cut["error"].get<std::string>().find('\x1b'), std::string::npos);
    EXPECT_EQ(cut["error"].get<std::string>().find('\r'), std::string::npos);
    EXPECT_TRUE(mentions(cut, "Bad Gateway"));
    Json long_detail = status_error(400, Json{{"detail", std::string(5000, 'd')}}.dump());
    EXPECT_LT(long_detail["error"].get<std::string>().size(), 1000u);
}

// api_message quotes a body that is not JSON as its first 300 bytes, which can end inside
// a UTF-8 sequence; the cut is then kept in the message (dump() throws type_error 316, the
// server's writers show U+FFFD). Enable once the quote is cut on a character boundary.
TEST(TangoApiErrors, AQuotedBodyIsCutOnACharacterBoundary) {
    const std::string body = std::string(299, 'a') + "é and more";  // byte 300 is the middle of é
    Json e = status_error(502, body);
    EXPECT_NO_THROW((void)e.dump());
}

TEST(TangoApiErrors, RateLimitsSayHowLongToWait) {
    const char* body =
        R"({"detail": "Rate limit exceeded for burst. Please try again in 45 seconds.", "wait_in_seconds": 45})";
    Json from_body = status_error(429, body);
    EXPECT_EQ(from_body["error_code"], "RATE_LIMITED");
    EXPECT_EQ(from_body["retry_after_ms"], 45000);
    EXPECT_EQ(from_body["transient"], true);
    EXPECT_EQ(from_body["recoverable"], true);
    EXPECT_TRUE(mentions(from_body, "Rate limit exceeded for burst."));
    EXPECT_NE(from_body["suggestion"].get<std::string>().find("45 seconds"), std::string::npos);

    // Retry-After wins over the body when both are there.
    EXPECT_EQ(status_error(429, body, "7")["retry_after_ms"], 7000);
    // Fractional waits in the body are kept to the millisecond.
    EXPECT_EQ(status_error(429, R"({"wait_in_seconds": 1.5})")["retry_after_ms"], 1500);
    // An unreadable Retry-After falls back to the body.
    EXPECT_EQ(status_error(429, body, "soon")["retry_after_ms"], 45000);
    // Neither: a second, so a retry is not immediate.
    EXPECT_EQ(status_error(429, "Too Many Requests")["retry_after_ms"], 1000);
}

TEST(TangoApiErrors, RetryAfterAsAnHttpDateIsAWaitFromNow) {
    const auto in_a_minute = std::chrono::system_clock::now() + std::chrono::seconds(60);
    const std::time_t t = std::chrono::system_clock::to_time_t(in_a_minute);
    std::tm gmt{};
    gmtime_r(&t, &gmt);
    char date[64];
    std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", &gmt);
    const auto wait = status_error(429, "{}", std::string(date))["retry_after_ms"].get<long long>();
    EXPECT_GT(wait, 55000);
    EXPECT_LE(wait, 61000);
}

TEST(TangoApiErrors, ServerErrorsAreTransientUpstreamErrors) {
    // 408: the request was fine, the API gave up waiting for it; asking again may work.
    for (unsigned status : {408u, 500u, 502u, 503u, 504u}) {
        Json e = status_error(status, "<html>Service Unavailable</html>");
        EXPECT_EQ(e["error_code"], "UPSTREAM_ERROR") << status;
        EXPECT_EQ(e["transient"], true) << status;
        EXPECT_EQ(e["recoverable"], true) << status;
        EXPECT_TRUE(mentions(e, std::to_string(status))) << status;
        EXPECT_FALSE(e.contains("parameter")) << status;
    }
}

TEST(TangoApiErrors, ErrorsInsideASuccessfulAnswer) {
    auto text = error_in_body(Json{{"error", "search backend unavailable"}});
    ASSERT_TRUE(text);
    Json e = text->to_json();
    EXPECT_EQ(e["error_code"], "UPSTREAM_ERROR");
    EXPECT_EQ(e["transient"], true);
    EXPECT_NE(e["error"].get<std::string>().find("search backend unavailable"), std::string::npos);

    auto structured = error_in_body(Json{{"error", {{"code", "E42"}, {"message", "index rebuilding"}}}});
    ASSERT_TRUE(structured);
    EXPECT_NE(structured->to_json()["error"].get<std::string>().find("index rebuilding"), std::string::npos);

    EXPECT_FALSE(error_in_body(Json{{"error", nullptr}, {"count", 0}}));
    EXPECT_FALSE(error_in_body(Json{{"count", 1}, {"results", Json::array()}, {"error", "warning only"}}));
    EXPECT_FALSE(error_in_body(Json::parse(R"({"uei": "N553JH75Z8K1", "legal_business_name": "00ALPHA, LLC"})")));
    EXPECT_FALSE(error_in_body(Json::array({Json{{"error", "x"}}})));
    EXPECT_FALSE(error_in_body(Json("error")));
}

TEST(TangoApiErrors, TheMessageOfAnErrorInABodyIsCleanedAndCapped) {
    auto e = error_in_body(Json{{"error", "line\nbreak\x07" + std::string(3000, 'z')}});
    ASSERT_TRUE(e);
    const std::string message = e->to_json()["error"];
    EXPECT_LT(message.size(), 1000u);
    EXPECT_EQ(message.find('\x07'), std::string::npos);
}
