// JSON-RPC batches: refusal messages and gathering the replies of an allowed batch.
#include <gtest/gtest.h>

#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "transports/batch.hpp"

using namespace toolport;
using namespace toolport::protocol;

namespace {

ParsedPayload batch(std::string_view bytes) {
    auto p = parse_payload(bytes);
    EXPECT_TRUE(p.is_batch);
    EXPECT_FALSE(p.fatal);
    return p;
}

}  // namespace

TEST(Batch, CollectsRepliesUntilEveryRequestIsAnswered) {
    BatchCollector c;
    c.begin(batch(R"([
        {"jsonrpc":"2.0","id":1,"method":"a"},
        {"jsonrpc":"2.0","id":"two","method":"b"},
        {"jsonrpc":"2.0","method":"notifications/x"},
        {"jsonrpc":"2.0","id":3.5,"method":"c"}
    ])"));

    auto r1 = make_response(1, Json{{"n", 1}});
    EXPECT_FALSE(c.offer(r1).has_value());
    EXPECT_TRUE(c.holds(r1));

    auto r3 = make_error(3.5, -32601, "Method not found");
    EXPECT_FALSE(c.offer(r3).has_value());
    EXPECT_TRUE(c.holds(r3));
    EXPECT_FALSE(c.holds(make_response("two", nullptr)));  // not offered yet

    auto r2 = make_response("two", Json::object());
    auto done = c.offer(r2);
    ASSERT_TRUE(done.has_value());
    ASSERT_TRUE(done->is_array());
    ASSERT_EQ(done->size(), 3u);
    EXPECT_EQ((*done)[0], r1);
    EXPECT_EQ((*done)[1], r3);
    EXPECT_EQ((*done)[2], r2);

    // Nothing is held any more, and a repeated reply is not swallowed.
    EXPECT_FALSE(c.holds(r1));
    EXPECT_FALSE(c.holds(r2));
    EXPECT_FALSE(c.holds(r3));
    EXPECT_FALSE(c.offer(r1).has_value());
    EXPECT_FALSE(c.holds(r1));
}

TEST(Batch, IdsAreMatchedByJsonValueAndType) {
    BatchCollector c;
    c.begin(batch(R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}])"));
    // "1" (a string) is not the request 1.
    auto wrong = make_response("1", nullptr);
    EXPECT_FALSE(c.offer(wrong).has_value());
    EXPECT_FALSE(c.holds(wrong));
    EXPECT_FALSE(c.offer(make_response(1, nullptr)).has_value());
    auto done = c.offer(make_response(2, nullptr));
    ASSERT_TRUE(done);
    EXPECT_EQ(done->size(), 2u);
}

TEST(Batch, SingleRequestBatchCompletesOnItsReply) {
    BatchCollector c;
    c.begin(batch(R"([{"jsonrpc":"2.0","id":7,"method":"ping"}])"));
    auto reply = make_response(7, Json::object());
    auto done = c.offer(reply);
    ASSERT_TRUE(done);
    EXPECT_EQ(*done, Json::array({reply}));
    EXPECT_FALSE(c.holds(reply));
}

TEST(Batch, NotificationsAndResponsesAreNotWaitedFor) {
    BatchCollector c;
    c.begin(batch(R"([
        {"jsonrpc":"2.0","method":"notifications/initialized"},
        {"jsonrpc":"2.0","id":"srv-1","result":{}}
    ])"));
    // Nothing to wait for: replies pass through untouched.
    auto reply = make_response("srv-1", nullptr);
    EXPECT_FALSE(c.offer(reply).has_value());
    EXPECT_FALSE(c.holds(reply));

    BatchCollector c2;
    c2.begin(batch(R"([{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":1,"method":"m"}])"));
    auto done = c2.offer(make_response(1, nullptr));
    ASSERT_TRUE(done);
    EXPECT_EQ(done->size(), 1u);
}

TEST(Batch, OutgoingNotificationsAndRequestsAreNotTaken) {
    BatchCollector c;
    c.begin(batch(R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}])"));
    auto progress = make_notification("notifications/progress", Json{{"progressToken", 1}});
    EXPECT_FALSE(c.offer(progress).has_value());
    EXPECT_FALSE(c.holds(progress));
    // A server-to-client request that happens to reuse id 1 is not a reply.
    auto nested = make_request(1, "sampling/createMessage", Json::object());
    EXPECT_FALSE(c.offer(nested).has_value());
    EXPECT_FALSE(c.holds(nested));
    // The batch is still waiting for both replies.
    EXPECT_FALSE(c.offer(make_response(1, nullptr)).has_value());
    EXPECT_TRUE(c.offer(make_response(2, nullptr)).has_value());
}

TEST(Batch, MalformedMembersAreAnsweredInsideTheBatch) {
    BatchCollector c;
    // The member with a readable id is answered by the session (and waited for); the one
    // without is answered by the collector itself, inside the same array.
    EXPECT_FALSE(c.begin(batch(R"([
        {"jsonrpc":"2.0","id":1,"method":"a"},
        {"jsonrpc":"1.0","id":"bad","method":"b"},
        42
    ])"))
                     .has_value());
    EXPECT_FALSE(c.offer(make_response(1, nullptr)).has_value());
    auto err = make_error("bad", error_code::kInvalidRequest, "Invalid Request");
    auto done = c.offer(err);
    ASSERT_TRUE(done);
    ASSERT_EQ(done->size(), 3u);
    EXPECT_TRUE((*done)[0]["id"].is_null());
    EXPECT_EQ((*done)[0]["error"]["code"], error_code::kInvalidRequest);
    EXPECT_EQ((*done)[1], make_response(1, nullptr));
    EXPECT_EQ((*done)[2], err);
}

TEST(Batch, ABatchOfOnlyUnreadableMembersIsAnsweredAtOnce) {
    BatchCollector c;
    auto done = c.begin(batch(R"([1, {"jsonrpc":"2.0","method":"n"}, {"jsonrpc":"2.0","id":true,"method":"m"}])"));
    ASSERT_TRUE(done);
    ASSERT_EQ(done->size(), 2u);
    for (const auto& reply : *done) {
        EXPECT_TRUE(reply["id"].is_null());
        EXPECT_EQ(reply["error"]["code"], error_code::kInvalidRequest);
    }
    // Nothing is left waiting.
    auto stray = make_response(1, nullptr);
    EXPECT_FALSE(c.offer(stray).has_value());
    EXPECT_FALSE(c.holds(stray));
    // Notifications alone still need no reply at all.
    EXPECT_FALSE(c.begin(batch(R"([{"jsonrpc":"2.0","method":"n"}])")).has_value());
}

TEST(Batch, BigIntegerIdsAreMatchedExactly) {
    BatchCollector c;
    c.begin(batch(R"([{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"a"},)"
                  R"({"jsonrpc":"2.0","id":123456789012345678901234567891,"method":"b"}])"));
    // The double both would round to is neither of them.
    EXPECT_FALSE(c.offer(make_response(1.2345678901234568e+29, nullptr)).has_value());
    EXPECT_FALSE(c.offer(make_response(make_big_integer_id("123456789012345678901234567891"), nullptr)).has_value());
    auto done = c.offer(make_response(make_big_integer_id("123456789012345678901234567890"), nullptr));
    ASSERT_TRUE(done);
    EXPECT_EQ(serialize(*done), R"([{"id":123456789012345678901234567891,"jsonrpc":"2.0","result":null},)"
                                R"({"id":123456789012345678901234567890,"jsonrpc":"2.0","result":null}])");
}

TEST(Batch, TwoBatchesInFlightCompleteIndependently) {
    BatchCollector c;
    c.begin(batch(R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}])"));
    c.begin(batch(R"([{"jsonrpc":"2.0","id":3,"method":"c"},{"jsonrpc":"2.0","id":4,"method":"d"}])"));

    EXPECT_FALSE(c.offer(make_response(1, nullptr)).has_value());
    EXPECT_FALSE(c.offer(make_response(4, nullptr)).has_value());
    auto second = c.offer(make_response(3, nullptr));
    ASSERT_TRUE(second);
    ASSERT_EQ(second->size(), 2u);
    EXPECT_EQ((*second)[0]["id"], Json(4));
    EXPECT_EQ((*second)[1]["id"], Json(3));
    EXPECT_TRUE(c.holds(make_response(1, nullptr)));

    auto first = c.offer(make_response(2, nullptr));
    ASSERT_TRUE(first);
    ASSERT_EQ(first->size(), 2u);
    EXPECT_EQ((*first)[0]["id"], Json(1));
    EXPECT_EQ((*first)[1]["id"], Json(2));

    // The collector is reusable afterwards.
    c.begin(batch(R"([{"jsonrpc":"2.0","id":5,"method":"e"}])"));
    auto third = c.offer(make_response(5, nullptr));
    ASSERT_TRUE(third);
    EXPECT_EQ(third->size(), 1u);
}

TEST(Batch, OfferWithoutBatchesPassesThrough) {
    BatchCollector c;
    auto reply = make_response(1, nullptr);
    EXPECT_FALSE(c.offer(reply).has_value());
    EXPECT_FALSE(c.holds(reply));
}

TEST(Batch, RefusalMentionsTheRevision) {
    for (auto r : {Revision::v2024_11_05, Revision::v2025_06_18, Revision::v2025_11_25, Revision::v2026_07_28}) {
        auto e = batch_refusal(r);
        EXPECT_EQ(e.code, error_code::kInvalidRequest);
        EXPECT_TRUE(e.id.is_null());
        EXPECT_NE(e.message.find(std::string(name(r))), std::string::npos) << e.message;
        EXPECT_NE(e.message.find("2025-03-26"), std::string::npos) << e.message;
        EXPECT_NE(e.message.find("not supported"), std::string::npos) << e.message;
    }
}

TEST(Batch, RefusalBeforeInitialize) {
    auto e = batch_refusal(std::nullopt);
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_TRUE(e.id.is_null());
    EXPECT_NE(e.message.find("before initialize"), std::string::npos) << e.message;
}
