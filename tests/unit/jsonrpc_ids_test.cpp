// JSON-RPC ids beyond 64 bits: kept exactly by parse_payload, written back digit for digit
// by serialize, in single messages, batches and cancellations; and the batch size cap.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/wire_payload.hpp"
#include "protocol/jsonrpc.hpp"
#include "util/json.hpp"

using namespace toolport::protocol;
using toolport::Json;

namespace {

const std::string kTwoTo64 = "18446744073709551616";     // 2^64: one past uint64
const std::string kBelowInt64 = "-9223372036854775809";  // -2^63-1: one below int64
const std::string kThirtyDigits = "123456789012345678901234567890";
const std::vector<std::string> kBigIds = {kTwoTo64, kBelowInt64, kThirtyDigits};

std::string dump(const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); }

Message parse_one(const std::string& text) {
    auto p = parse_payload(text);
    EXPECT_FALSE(p.fatal) << (p.fatal ? p.fatal->message : "");
    if (p.items.size() != 1 || !std::holds_alternative<Message>(p.items[0])) {
        ADD_FAILURE() << "expected one message for: " << text;
        return Notification{"<missing>", nullptr};
    }
    return std::get<Message>(p.items[0]);
}

std::string batch_of(std::size_t n) {
    std::string text = "[";
    for (std::size_t i = 0; i < n; ++i) {
        if (i) text += ',';
        text += R"({"jsonrpc":"2.0","method":"n"})";
    }
    return text + "]";
}

}  // namespace

TEST(JsonRpcIds, IntegersBeyond64BitsRoundTripThroughParseReplyAndSerialize) {
    for (const auto& id : kBigIds) {
        const auto request = std::get<Request>(parse_one(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})"));
        ASSERT_TRUE(is_big_integer_id(request.id)) << id;
        EXPECT_EQ(big_integer_id_digits(request.id), id);
        EXPECT_EQ(id_text(request.id), id);
        EXPECT_TRUE(is_valid_id(request.id));

        EXPECT_EQ(serialize(make_response(request.id, Json::object())),
                  R"({"id":)" + id + R"(,"jsonrpc":"2.0","result":{}})");
        EXPECT_EQ(serialize(make_error(request.id, error_code::kMethodNotFound, "Method not found")),
                  R"({"error":{"code":-32601,"message":"Method not found"},"id":)" + id + R"(,"jsonrpc":"2.0"})");
        // And what was written reads back as the same id.
        const auto again = std::get<Response>(parse_one(serialize(make_response(request.id, Json::object()))));
        EXPECT_EQ(again.id, request.id) << id;
    }
}

TEST(JsonRpcIds, IdsThatFit64BitsStayOrdinaryNumbers) {
    for (std::string id : {"18446744073709551615", "-9223372036854775808", "0", "-1"}) {
        const auto request = std::get<Request>(parse_one(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})"));
        EXPECT_TRUE(request.id.is_number_integer()) << id;
        EXPECT_EQ(serialize(make_response(request.id, nullptr)),
                  R"({"id":)" + id + R"(,"jsonrpc":"2.0","result":null})");
    }
    // Fractions and exponents are not integer-shaped: they stay doubles, as JSON numbers do.
    for (std::string id : {"1e30", "1.5", "123456789012345678901234567890.0"}) {
        const auto request = std::get<Request>(parse_one(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})"));
        EXPECT_TRUE(request.id.is_number_float()) << id;
    }
}

TEST(JsonRpcIds, BatchMembersKeepTheirIds) {
    const std::string text =
        "["
        R"({"jsonrpc":"2.0","id":)" +
        kTwoTo64 + R"(,"method":"a"},)" + R"({"jsonrpc":"2.0","id":)" + kBelowInt64 + R"(,"method":"b"},)" +
        R"({"jsonrpc":"2.0","id":7,"method":"c"},)" + R"({"jsonrpc":"2.0","id":)" + kThirtyDigits + R"(,"method":5}])";
    auto p = parse_payload(text);
    ASSERT_FALSE(p.fatal);
    ASSERT_EQ(p.items.size(), 4u);
    Json replies = Json::array();
    for (std::size_t i = 0; i < 3; ++i) {
        const auto& r = std::get<Request>(std::get<Message>(p.items[i]));
        replies.push_back(make_response(r.id, Json::object()));
    }
    // A malformed member keeps its (usable) id in the error.
    const auto& bad = std::get<ProtocolError>(p.items[3]);
    EXPECT_EQ(id_text(bad.id), kThirtyDigits);
    replies.push_back(make_error(bad.id, bad.code, "bad"));

    EXPECT_EQ(serialize(replies),
              "["
              R"({"id":)" +
                  kTwoTo64 + R"(,"jsonrpc":"2.0","result":{}},)" + R"({"id":)" + kBelowInt64 +
                  R"(,"jsonrpc":"2.0","result":{}},)" + R"({"id":7,"jsonrpc":"2.0","result":{}},)" +
                  R"({"error":{"code":-32600,"message":"bad"},"id":)" + kThirtyDigits + R"(,"jsonrpc":"2.0"}])");
}

TEST(JsonRpcIds, CancellationOfABigIdNamesItExactly) {
    // The method may come before or after params: the id is kept either way.
    for (std::string text :
         {R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" + kThirtyDigits +
              R"(,"reason":"x"}})",
          R"({"params":{"reason":"x","requestId":)" + kThirtyDigits +
              R"(},"jsonrpc":"2.0","method":"notifications/cancelled"})",
          R"([{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" + kThirtyDigits + R"(}}])"}) {
        auto p = parse_payload(text);
        ASSERT_FALSE(p.fatal) << text;
        const auto& n = std::get<Notification>(std::get<Message>(p.items.at(0)));
        ASSERT_TRUE(is_big_integer_id(n.params["requestId"])) << text;
        // Sessions key in-flight requests by id.dump(): the request and its cancellation agree.
        const auto request = std::get<Request>(
            parse_one(R"({"jsonrpc":"2.0","id":)" + kThirtyDigits + R"(,"method":"tools/call"})"));
        EXPECT_EQ(n.params["requestId"].dump(), request.id.dump());
    }
}

TEST(JsonRpcIds, OtherBigNumbersStayAsNlohmannReadsThem) {
    const std::string big = kThirtyDigits;
    struct Case {
        std::string text;
        std::string pointer;  // where the number is
    };
    for (const auto& c : std::vector<Case>{
             {R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"n":)" + big + "}}", "/params/n"},
             {R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"id":)" + big + "}}", "/params/id"},
             {R"({"jsonrpc":"2.0","id":1,"result":{"id":)" + big + "}}", "/result/id"},
             {R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":)" + big + "}}",
              "/params/requestId"},
             {R"({"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":[)" + big + "]}", "/params/0"},
             {R"({"jsonrpc":"2.0","id":[)" + big + R"(],"method":"m"})", "/id/0"},
         }) {
        Json parsed = parse_json_keeping_ids(c.text);
        const Json& number = parsed.at(Json::json_pointer(c.pointer));
        EXPECT_TRUE(number.is_number_float()) << c.text;
        EXPECT_EQ(number, Json::parse(big)) << c.text;
    }
    // Only a message's own id: not one nested a level deeper than a batch.
    Json nested = parse_json_keeping_ids("[[{\"id\":" + big + "}]]");
    EXPECT_TRUE(nested[0][0]["id"].is_number_float());
    // A bare number is no message at all.
    EXPECT_TRUE(parse_json_keeping_ids(big).is_number_float());
}

TEST(JsonRpcIds, JsonTextCannotForgeABigIntegerId) {
    // What nlohmann would dump a big integer id as is just an object when read back.
    const Json forged = parse_json_keeping_ids(R"({"jsonrpc":"2.0","id":{"bytes":[49,50],"subtype":)" +
                                               std::to_string(kBigIntegerIdSubtype) + R"(},"method":"ping"})");
    EXPECT_TRUE(forged["id"].is_object());
    auto p = parse_payload(dump(forged));
    const auto& e = std::get<ProtocolError>(p.items.at(0));
    EXPECT_TRUE(e.id.is_null());
}

TEST(JsonRpcIds, SerializeIsNlohmannsCompactDumpForEverythingElse) {
    const std::vector<Json> values = {
        make_response(1, {{"text", "caf\xc3\xa9 \"quoted\"\n"}, {"n", 1.5}}),
        make_error("x", -32601, "bad \xff bytes"),  // invalid UTF-8 replaced, not thrown
        make_request(2, "m", Json{{"a", Json::array({1, nullptr, true})}}),
        make_notification("n", nullptr),
        Json::array({make_response(1, nullptr), make_response("two", Json::object())}),
        Json::array({1, "two", nullptr}),
        Json{{"id", Json::array({1})}},
        Json("scalar"),
        Json(),
    };
    for (const auto& v : values) EXPECT_EQ(serialize(v), dump(v));

    // With a big id, everything around it is still written exactly as dump() writes it.
    Json message = make_response(make_big_integer_id(kThirtyDigits),
                                 {{"k\xc3\xa9y\t", "v\xff"}, {"list", Json::array({1.25, false})}});
    message["\x01odd key"] = "x";
    Json placeholder = message;
    placeholder["id"] = 424242424242;
    std::string expected = dump(placeholder);
    expected.replace(expected.find("424242424242"), 12, kThirtyDigits);
    EXPECT_EQ(serialize(message), expected);
}

TEST(JsonRpcIds, BigIdsAreDistinctFromEachOtherAndFromStrings) {
    const Json a = make_big_integer_id(kThirtyDigits);
    const Json b = make_big_integer_id("123456789012345678901234567891");
    EXPECT_NE(a, b);
    EXPECT_NE(a.dump(), b.dump());
    EXPECT_NE(a.dump(), Json(kThirtyDigits).dump());
    EXPECT_EQ(a, make_big_integer_id(kThirtyDigits));
    EXPECT_EQ(make_response(a, nullptr)["id"].dump(), a.dump());
    EXPECT_THROW(make_big_integer_id("12a"), std::invalid_argument);
    EXPECT_THROW(make_big_integer_id("-"), std::invalid_argument);
    EXPECT_THROW(make_big_integer_id(""), std::invalid_argument);
    EXPECT_EQ(loggable_id(a), Json(kThirtyDigits));
    EXPECT_EQ(loggable_id(Json(5)), Json(5));
    EXPECT_EQ(id_text(Json("s")), "\"s\"");
}

TEST(JsonRpcIds, ClassifyAcceptsABigIntegerIdBuiltInMemory) {
    Json wire = make_request(make_big_integer_id(kTwoTo64), "ping", nullptr);
    auto classified = classify(wire);
    const auto& r = std::get<Request>(std::get<Message>(classified));
    EXPECT_EQ(id_text(r.id), kTwoTo64);
}

TEST(JsonRpcIds, TheClientsWireDecoderKeepsBigIdsToo) {
    auto decoded = toolport::client::decode_wire_payload(R"([{"jsonrpc":"2.0","id":)" + kThirtyDigits +
                                                         R"(,"method":"roots/list"}])");
    ASSERT_TRUE(decoded.error.empty()) << decoded.error;
    ASSERT_EQ(decoded.messages.size(), 1u);
    EXPECT_EQ(id_text(decoded.messages[0]["id"]), kThirtyDigits);
}

// ---- the batch size cap ----------------------------------------------------------------------------

TEST(JsonRpcBatchCap, UpToTheLimitIsAcceptedOneMoreIsRefusedWhole) {
    auto at_limit = parse_payload(batch_of(1000));
    ASSERT_FALSE(at_limit.fatal);
    EXPECT_EQ(at_limit.items.size(), 1000u);

    auto over = parse_payload(batch_of(3000));
    EXPECT_TRUE(over.is_batch);
    EXPECT_TRUE(over.items.empty());
    ASSERT_TRUE(over.fatal);
    EXPECT_EQ(over.fatal->code, error_code::kInvalidRequest);
    EXPECT_TRUE(over.fatal->id.is_null());
    EXPECT_EQ(over.fatal->message,
              "Invalid Request: a batch may hold at most 1000 messages; this one has 3000 \u2014 send it in smaller "
              "batches");
}

TEST(JsonRpcBatchCap, TheLimitIsConfigurable) {
    ParseLimits limits;
    limits.max_batch_size = 2;
    EXPECT_FALSE(parse_payload(batch_of(2), limits).fatal);
    auto over = parse_payload(batch_of(3), limits);
    ASSERT_TRUE(over.fatal);
    EXPECT_NE(over.fatal->message.find("at most 2 messages; this one has 3"), std::string::npos) << over.fatal->message;
    // Members are counted, whatever they are: malformed ones too.
    EXPECT_TRUE(parse_payload("[1,2,3]", limits).fatal);
}
