// JsonIdScanner: the top-level "id" of a message found while its text streams past. Where
// the text is a valid message, the scanner must agree with the payload parser (which the
// stdio transport uses for lines within the limit), however the text is cut into pieces.
#include <gtest/gtest.h>

#include <random>

#include "client/json_id_scanner.hpp"
#include "protocol/json_text.hpp"
#include "util/json.hpp"

using toolport::Json;
using toolport::client::JsonIdScanner;

namespace {

std::optional<Json> scan(std::string_view text) {
    JsonIdScanner scanner;
    scanner.feed(text);
    return scanner.id();
}

// What the payload parser makes of the message's "id" (nullopt: none, or one the scanner
// is not meant to report, i.e. neither a string nor an integer).
std::optional<Json> parsed_id(std::string_view text) {
    Json message = toolport::protocol::parse_json_keeping_ids(text);
    auto id = message.find("id");
    if (id == message.end()) return std::nullopt;
    if (id->is_string() || id->is_number_integer() || toolport::protocol::is_big_integer_id(*id)) return *id;
    return std::nullopt;
}

const std::vector<std::string> kMessages = {
    R"({"jsonrpc":"2.0","id":7,"result":{}})",
    R"({"jsonrpc":"2.0","result":{"id":99,"content":[{"id":"x","text":"}]{["}]},"id":8})",
    R"({"result":{"id":5,"nested":{"id":6}},"jsonrpc":"2.0"})",
    R"({"jsonrpc":"2.0","id":"a\"b\\c\/d\u00e9\ud83d\ude00\n","result":null})",
    R"({"result":"\"id\":3, \\","id":4})",
    R"({"\u0069d":12,"result":[]})",
    R"({"i\"d":1,"id\u0000":2,"ids":3,"result":0})",
    R"(  {  "id"  :  -3  ,  "error" : { "code" : -32603 , "message" : "x" }  }  )",
    R"({"id":18446744073709551615,"result":{}})",
    R"({"id":123456789012345678901234567890,"result":{}})",
    R"({"id":-123456789012345678901234567890,"result":{}})",
    R"({"id":1,"id":2,"result":{}})",
    R"({"id":1,"id":null,"result":{}})",
    R"({"id":1.5,"result":{}})",
    R"({"id":1e3,"result":{}})",
    R"({"id":true,"result":{}})",
    R"({"id":{"id":4},"result":{}})",
    R"({"id":[4],"result":{}})",
    R"({"id":"","result":{}})",
    R"({"jsonrpc":"2.0","method":"sampling/createMessage","params":{"id":1},"id":9})",
    "{\"id\"\t:\r\n10}",
    R"({})",
    R"([{"id":1,"result":{}}])",
    R"("id")",
    R"(42)",
};

TEST(JsonIdScanner, AgreesWithTheParserOnEveryMessageCutAtEveryPosition) {
    for (const auto& message : kMessages) {
        const auto expected = parsed_id(message);
        EXPECT_EQ(scan(message), expected) << message;
        for (std::size_t cut = 0; cut <= message.size(); ++cut) {
            JsonIdScanner scanner;
            scanner.feed(std::string_view(message).substr(0, cut));
            scanner.feed(std::string_view(message).substr(cut));
            ASSERT_EQ(scanner.id(), expected) << message << " cut at " << cut;
        }
        JsonIdScanner bytewise;
        for (char c : message) bytewise.feed(std::string_view(&c, 1));
        EXPECT_EQ(bytewise.id(), expected) << message << " byte by byte";
    }
}

TEST(JsonIdScanner, FindsTheIdBeforeOrAfterNestedMembers) {
    EXPECT_EQ(scan(R"({"id":3,"result":{"id":4,"content":[{"id":5}]}})"), Json(3));
    EXPECT_EQ(scan(R"({"result":{"id":4,"content":[{"id":5}]},"id":3})"), Json(3));
}

TEST(JsonIdScanner, IgnoresAnIdThatIsOnlyNested) {
    EXPECT_EQ(scan(R"({"result":{"id":4},"error":{"data":{"id":"x"}}})"), std::nullopt);
    EXPECT_EQ(scan(R"([{"id":1}])"), std::nullopt) << "a batch has no top-level id";
}

TEST(JsonIdScanner, StringIdsWithEscapes) {
    EXPECT_EQ(scan(R"({"id":"req-\"1\"","result":1})"), Json("req-\"1\""));
    EXPECT_EQ(scan(R"({"id":"back\\","result":1})"), Json("back\\")) << "an escaped backslash before the quote";
    EXPECT_EQ(scan(R"({"id":"\u00e9\ud83d\ude00","result":1})"), Json("\xc3\xa9\xf0\x9f\x98\x80"));
    EXPECT_EQ(scan(R"({"id":"\ud83d","result":1})"), std::nullopt) << "a lone surrogate is no valid text";
}

TEST(JsonIdScanner, QuotesAndBracketsInsideStringsDoNotCount) {
    EXPECT_EQ(scan(R"({"result":"}\"id\":1,{","id":2})"), Json(2));
    EXPECT_EQ(scan(R"({"result":{"text":"\"}, \"id\": 1"},"id":2})"), Json(2));
}

TEST(JsonIdScanner, IntegersOfEverySize) {
    EXPECT_EQ(scan(R"({"id":0})"), Json(0));
    EXPECT_EQ(scan(R"({"id":-9223372036854775808})"), Json(std::numeric_limits<std::int64_t>::min()));
    auto big = scan(R"({"id":99999999999999999999999})");
    ASSERT_TRUE(big);
    EXPECT_EQ(toolport::protocol::big_integer_id_digits(*big), "99999999999999999999999");
}

TEST(JsonIdScanner, TellsRepliesFromRequests) {
    JsonIdScanner reply;
    reply.feed(R"({"jsonrpc":"2.0","id":1,"result":{"method":"x"}})");
    EXPECT_FALSE(reply.has_method()) << "a nested \"method\" does not make a request";
    JsonIdScanner request;
    request.feed(R"({"jsonrpc":"2.0","id":1,"params":{},"method":"roots/list"})");
    EXPECT_EQ(request.id(), Json(1));
    EXPECT_TRUE(request.has_method());
}

TEST(JsonIdScanner, AnOverlongStringIdIsNotReported) {
    const std::string long_id(JsonIdScanner::kMaxIdBytes + 1, 'x');
    EXPECT_EQ(scan(R"({"id":")" + long_id + R"(","result":1})"), std::nullopt);
    const std::string longest(JsonIdScanner::kMaxIdBytes, 'x');
    EXPECT_EQ(scan(R"({"id":")" + longest + R"(","result":1})"), Json(longest));
}

TEST(JsonIdScanner, AHugeMessageKeepsNoMoreThanTheId) {
    // Megabytes of result around the id: the scanner's answer comes out the same, and
    // nothing of the result is kept (only checked indirectly: it is fed in small pieces).
    JsonIdScanner scanner;
    scanner.feed(R"({"jsonrpc":"2.0","result":{"content":[{"type":"text","text":")");
    const std::string piece(4096, 'x');
    for (int i = 0; i < 1024; ++i) scanner.feed(piece);
    scanner.feed(R"("}]},"id":41})");
    EXPECT_EQ(scanner.id(), Json(41));
}

TEST(JsonIdScanner, StopsAtTheEndOfTheRootValue) {
    EXPECT_EQ(scan(R"({"result":1} {"id":2})"), std::nullopt);
    EXPECT_EQ(scan(R"({"id":1} {"id":2})"), Json(1));
}

TEST(JsonIdScanner, AnIdNotYetCompleteIsNotReported) {
    JsonIdScanner scanner;
    scanner.feed(R"({"id":12)");
    EXPECT_EQ(scanner.id(), std::nullopt) << "12 may go on";
    scanner.feed("3,");
    EXPECT_EQ(scanner.id(), Json(123));
}

TEST(JsonIdScanner, ResetStartsOver) {
    JsonIdScanner scanner;
    scanner.feed(R"({"id":1,"method":"x","params":{"a":"unterminated)");
    scanner.reset();
    scanner.feed(R"({"id":2,"result":{}})");
    EXPECT_EQ(scanner.id(), Json(2));
    EXPECT_FALSE(scanner.has_method());
}

TEST(JsonIdScanner, SurvivesGarbage) {
    std::mt19937 random(12345);
    const std::string alphabet = "{}[]\":,\\u0123456789abcdefidmethod \n\t-+.eE";
    for (int round = 0; round < 2000; ++round) {
        std::string text;
        const int length = static_cast<int>(random() % 200);
        for (int i = 0; i < length; ++i) {
            text.push_back(round % 2 ? static_cast<char>(random() % 256) : alphabet[random() % alphabet.size()]);
        }
        JsonIdScanner scanner;
        scanner.feed(text);
        if (auto id = scanner.id()) {
            EXPECT_TRUE(id->is_string() || id->is_number_integer() || toolport::protocol::is_big_integer_id(*id));
        }
    }
    EXPECT_EQ(scan("}}}]]]{\"id\":1}"), std::nullopt) << "closers before any opener end the scan";
    EXPECT_EQ(scan(R"({"id":"\q","result":1})"), std::nullopt) << "an unknown escape";
    EXPECT_EQ(scan(R"({"id":"\u12G4","result":1})"), std::nullopt) << "a bad hex digit";
}

}  // namespace
