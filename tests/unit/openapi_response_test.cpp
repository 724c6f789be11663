// API answers → tool results and tool errors: JSON with and without an outputSchema,
// text, binary, no body; each error status, with the API's message kept and secrets gone.
#include <gtest/gtest.h>

#include "openapi_test_support.hpp"
#include "providers/openapi/response_mapping.hpp"
#include "providers/secret_redaction.hpp"

using namespace toolport;
using namespace toolport::openapi;
using namespace toolport::openapi::test;

namespace {

http_client::Response answer(unsigned status, std::string type, std::string body) {
    http_client::Response r;
    r.status = status;
    if (!type.empty()) r.headers = {{"Content-Type", type}};
    r.body = std::move(body);
    return r;
}

Operation with_output(Json schema) {
    Operation op;
    op.tool_name = "getThing";
    op.output_schema = std::move(schema);
    return op;
}

TEST(OpenApiResponse, JsonBecomesStructuredContentWhenThereIsAnOutputSchema) {
    auto op = with_output({{"type", "object"}});
    auto result = result_from_response(op, answer(200, "application/json; charset=utf-8", R"({"id":"7"})"), "u");
    EXPECT_EQ(result.structured_content, Json({{"id", "7"}}));
    ASSERT_EQ(result.content.size(), 1u);
    EXPECT_EQ(Json::parse(result.content[0]["text"].get<std::string>()), Json({{"id", "7"}}));
    EXPECT_FALSE(result.is_error);

    // Not the promised object: an error, not a result the client would refuse.
    auto error = error_of([&] { result_from_response(op, answer(200, "application/json", "[1,2]"), "u"); });
    EXPECT_EQ(error["error_code"], "UPSTREAM_ERROR");
    error = error_of([&] { result_from_response(op, answer(204, "", ""), "u"); });
    EXPECT_EQ(error["error_code"], "UPSTREAM_ERROR");
}

TEST(OpenApiResponse, OtherAnswersAsTextOrAResource) {
    Operation op;
    op.tool_name = "t";
    auto json = result_from_response(op, answer(200, "application/vnd.api+json", "[1, 2]"), "u");
    EXPECT_TRUE(json.structured_content.is_null());
    EXPECT_EQ(json.content[0], Json({{"type", "text"}, {"text", "[1, 2]"}}));
    auto text = result_from_response(op, answer(200, "text/plain", "hello"), "u");
    EXPECT_EQ(text.content[0]["text"], "hello");
    auto empty = result_from_response(op, answer(204, "", ""), "u");
    EXPECT_EQ(empty.content[0]["text"], "HTTP 204 (no content)");
    auto blob = result_from_response(op, answer(200, "image/png", std::string("\x89PNG\0\1", 6)),
                                     "https://api.test/img");
    ASSERT_EQ(blob.content[0]["type"], "resource");
    EXPECT_EQ(blob.content[0]["resource"]["uri"], "https://api.test/img");
    EXPECT_EQ(blob.content[0]["resource"]["mimeType"], "image/png");
    EXPECT_EQ(blob.content[0]["resource"]["blob"], "iVBORwAB");
}

TEST(OpenApiResponse, StatusesBecomeTheirErrorCodes) {
    auto error = [](unsigned status, std::string body, std::vector<std::string> secrets = {}) {
        return error_from_response(answer(status, "application/json", std::move(body)), "petstore", secrets,
                                   {"PETSTORE_API_KEY"})
            .to_json();
    };
    auto refused = error(401, R"({"message": "key sk-live-12345 is revoked"})", {"sk-live-12345"});
    EXPECT_EQ(refused["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(refused["error"], "petstore refused the request (HTTP 401): key [redacted] is revoked");
    EXPECT_NE(refused["suggestion"].get<std::string>().find("PETSTORE_API_KEY"), std::string::npos);
    EXPECT_EQ(error(403, "{}")["error_code"], "INVALID_ARGUMENT");

    auto missing = error(404, R"({"code": 404, "message": "no pet 7"})");
    EXPECT_EQ(missing["error_code"], "NOT_FOUND");
    EXPECT_NE(missing["error"].get<std::string>().find("no pet 7"), std::string::npos);

    auto bad = error(422, R"({"title": "Invalid", "detail": "name is too long"})");
    EXPECT_EQ(bad["error_code"], "INVALID_ARGUMENT");
    EXPECT_NE(bad["error"].get<std::string>().find("Invalid: name is too long"), std::string::npos);

    auto broken = error(503, R"({"error": {"message": "db down"}})");
    EXPECT_EQ(broken["error_code"], "UPSTREAM_ERROR");
    EXPECT_EQ(broken["transient"], true);
    EXPECT_NE(broken["error"].get<std::string>().find("db down"), std::string::npos);

    auto limited = error_from_response(
        [] {
            auto r = answer(429, "text/plain", "slow down\x01 please");
            r.headers.emplace_back("Retry-After", "7");
            return r;
        }(),
        "petstore", {}, {});
    EXPECT_EQ(limited.code(), ToolErrorCode::rate_limited);
    EXPECT_EQ(limited.retry_after_ms(), 7000);
    EXPECT_TRUE(limited.is_transient());
    EXPECT_EQ(std::string(limited.what()).find('\x01'), std::string::npos);  // sanitized
}

TEST(OpenApiResponse, ScrubsEverySecret) {
    EXPECT_EQ(providers::redact_text("a s3cr3t b s3cr3t", {"s3cr3t", "xy"}), "a [redacted] b [redacted]");
}

TEST(OpenApiResponse, AnAnswerThatEchoesTheCredentialsHasThemRedacted) {
    // The API echoes the key it was sent: redacted in structuredContent and its text, in
    // JSON without a schema and in text, never passed on.
    const std::vector<std::string> secrets = {"sk-live-12345"};
    auto op = with_output({{"type", "object"}});
    auto structured = result_from_response(
        op, answer(200, "application/json", R"({"id":"7","owner":{"key":"sk-live-12345"},"n":["x sk-live-12345"]})"),
        "u", secrets);
    const Json expected = {{"id", "7"}, {"owner", {{"key", "[redacted]"}}}, {"n", {"x [redacted]"}}};
    EXPECT_EQ(structured.structured_content, expected);
    EXPECT_EQ(Json::parse(structured.content[0]["text"].get<std::string>()), expected);

    Operation plain;
    plain.tool_name = "t";
    // Escaped in the JSON text ("\/"), so only the parsed value shows the secret.
    auto json = result_from_response(plain, answer(200, "application/json", R"({"token":"ab\/cd-9876"})"), "u",
                                     {"ab/cd-9876"});
    EXPECT_EQ(Json::parse(json.content[0]["text"].get<std::string>()), (Json{{"token", "[redacted]"}}));
    auto text = result_from_response(plain, answer(200, "text/plain", "your key is sk-live-12345."), "u", secrets);
    EXPECT_EQ(text.content[0]["text"], "your key is [redacted].");
    // Without secrets in it, the API's own text as it came.
    EXPECT_EQ(result_from_response(plain, answer(200, "application/json", "[1, 2]"), "u", secrets).content[0]["text"],
              "[1, 2]");

    // Redacted, an answer that must match a pattern no longer does: an error, not a result
    // the client would refuse, and without the key.
    auto strict = with_output(
        {{"type", "object"}, {"properties", {{"key", {{"type", "string"}, {"pattern", "^sk-"}}}}}});
    auto error = error_of([&] {
        result_from_response(strict, answer(200, "application/json", R"({"key":"sk-live-12345"})"), "u", secrets);
    });
    EXPECT_EQ(error["error_code"], "UPSTREAM_ERROR");
    EXPECT_NE(error["error"].get<std::string>().find("no longer matches the outputSchema of getThing"),
              std::string::npos);
    EXPECT_EQ(error.dump().find("sk-live"), std::string::npos);
}

}  // namespace
