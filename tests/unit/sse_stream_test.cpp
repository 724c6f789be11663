// Streamable HTTP streams without sockets: OutStream event logs and HttpSession routing.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "transports/sse_stream.hpp"
#include "util/json.hpp"

using namespace toolport;
using protocol::RequestId;

namespace {

Json parse(const StreamEvent& e) { return Json::parse(e.data); }

}  // namespace

// ---- OutStream ----------------------------------------------------------------------------

TEST(SseStream, PushNumbersEventsFromOne) {
    OutStream s(3, 100);
    EXPECT_EQ(s.id(), 3u);
    EXPECT_EQ(s.last_seq(), 0u);
    s.push("a", nullptr);
    s.push("b", nullptr);
    s.push("c", nullptr);
    ASSERT_EQ(s.events().size(), 3u);
    EXPECT_EQ(s.events()[0].seq, 1u);
    EXPECT_EQ(s.events()[1].seq, 2u);
    EXPECT_EQ(s.events()[2].seq, 3u);
    EXPECT_EQ(s.events()[0].data, "a");
    EXPECT_EQ(s.events()[2].data, "c");
    EXPECT_EQ(s.last_seq(), 3u);
    EXPECT_TRUE(s.has_non_response());
    EXPECT_FALSE(s.events()[0].is_response);
}

TEST(SseStream, FinishesAfterLastExpectedReply) {
    OutStream s(1, 100);
    s.expect_reply("1");
    s.expect_reply("\"b\"");
    EXPECT_EQ(s.expected_replies(), 2u);
    EXPECT_FALSE(s.finished());

    s.push("progress", nullptr);
    EXPECT_FALSE(s.finished());
    std::string k1 = "1";
    s.push("reply1", &k1);
    EXPECT_FALSE(s.finished());
    EXPECT_EQ(s.expected_replies(), 1u);
    EXPECT_TRUE(s.events().back().is_response);

    std::string k2 = "\"b\"";
    auto before = std::chrono::steady_clock::now();
    s.push("reply2", &k2);
    EXPECT_TRUE(s.finished());
    EXPECT_EQ(s.expected_replies(), 0u);
    EXPECT_GE(s.finished_at, before);
    EXPECT_EQ(s.events().size(), 3u);
}

TEST(SseStream, ResponsesOnlyStreamHasNoNonResponse) {
    OutStream s(1, 100);
    s.expect_reply("1");
    std::string k = "1";
    s.push("reply", &k);
    EXPECT_FALSE(s.has_non_response());
}

TEST(SseStream, CanReplayAfterTellsWhetherEventsWereDropped) {
    OutStream s(1, 3);
    EXPECT_TRUE(s.can_replay_after(0));  // nothing logged yet
    for (int i = 0; i < 6; ++i) s.push("e" + std::to_string(i + 1), nullptr);
    ASSERT_EQ(s.events().size(), 3u);
    EXPECT_EQ(s.events().front().seq, 4u);
    EXPECT_EQ(s.last_seq(), 6u);
    EXPECT_FALSE(s.can_replay_after(0));
    EXPECT_FALSE(s.can_replay_after(2));  // event 3 is gone
    EXPECT_TRUE(s.can_replay_after(3));   // the client saw 3; 4..6 are all still here
}

TEST(SseStream, UndeliveredRepliesAreNeverDroppedFromTheLog) {
    // 3,000 replies in a log of 1,024 events: a batch's replies are its own.
    OutStream s(1, 1024, 1 << 20);
    std::vector<std::string> keys;
    for (int i = 0; i < 3000; ++i) s.expect_reply(keys.emplace_back(std::to_string(i)));
    for (int i = 0; i < 3000; ++i) {
        s.push("progress", nullptr);  // notifications may go
        s.push("{\"id\":" + keys[i] + "}", &keys[i]);
    }
    EXPECT_TRUE(s.finished());
    std::size_t replies = 0;
    for (const auto& e : s.events()) replies += e.is_response ? 1 : 0;
    EXPECT_EQ(replies, 3000u);
    auto body = Json::parse(s.take_json_body(true));
    ASSERT_EQ(body.size(), 3000u);
    EXPECT_EQ(body[2999]["id"], 2999);
}

TEST(SseStream, UndeliveredRepliesPastTheByteLimitBecomeErrorsForTheirRequests) {
    OutStream s(1, 100, 1000);
    std::string k1 = "1", k2 = "\"two\"", k3 = "3";
    for (auto* k : {&k1, &k2, &k3}) s.expect_reply(*k);
    const std::string big(600, 'x');
    s.push(R"({"id":1,"result":")" + big + "\"}", &k1);
    s.push(R"({"id":"two","result":")" + big + "\"}", &k2);  // 1,200+ bytes: the first shrinks
    s.push(R"({"id":3,"result":")" + big + "\"}", &k3);      // ... then the second
    ASSERT_EQ(s.events().size(), 3u);
    auto body = Json::parse(s.take_json_body(true));
    ASSERT_EQ(body.size(), 3u);
    EXPECT_EQ(body[0]["id"], 1);
    EXPECT_EQ(body[0]["error"]["code"], protocol::error_code::kInternalError);
    EXPECT_NE(body[0]["error"]["message"].get<std::string>().find("max_replay_bytes"), std::string::npos);
    EXPECT_EQ(body[1]["id"], "two");
    EXPECT_TRUE(body[1].contains("error"));
    EXPECT_EQ(body[2]["result"], big);  // the newest is kept as it is
}

TEST(SseStream, DeliveredRepliesMayBeDropped) {
    OutStream s(1, 2);
    std::string k1 = "1", k2 = "2", k3 = "3";
    s.expect_reply(k1);
    s.expect_reply(k2);
    s.expect_reply(k3);
    s.push("r1", &k1);
    s.push("r2", &k2);
    s.mark_delivered(2);
    s.push("r3", &k3);
    ASSERT_EQ(s.events().size(), 2u);
    EXPECT_EQ(s.events().front().data, "r2");
}

TEST(SseStream, EndedRequestsAnswerWithTheirErrorInTheJsonBody) {
    OutStream s(1, 10);
    std::string k1 = "1", k2 = "2";
    s.expect_reply(k1);
    s.expect_reply(k2);
    s.push("{\"id\":1}", &k1);
    EXPECT_FALSE(s.finished());
    s.end_request(k2, "{\"error\":{},\"id\":2}");
    EXPECT_TRUE(s.finished());
    EXPECT_FALSE(s.has_non_response());
    EXPECT_EQ(s.events().size(), 1u);  // nothing is streamed for it
    EXPECT_EQ(s.take_json_body(true), "[{\"id\":1},{\"error\":{},\"id\":2}]");
    s.end_request(k2, "again");  // no longer expected: ignored
}

TEST(SseStream, SingleEndedRequestAnswersWithItsError) {
    OutStream s(1, 10);
    s.expect_reply("7");
    int wakes = 0;
    s.set_waker([&] { ++wakes; });
    s.end_request("7", "cancelled");
    EXPECT_EQ(wakes, 1);
    EXPECT_TRUE(s.finished());
    EXPECT_EQ(s.take_json_body(false), "cancelled");
}

TEST(SseStream, LocalRepliesAreResponsesOfNoRequest) {
    OutStream s(1, 10);
    s.expect_reply("1");
    s.push_local_reply("dup");
    EXPECT_FALSE(s.finished());
    EXPECT_FALSE(s.has_non_response());
    std::string k = "1";
    s.push("r", &k);
    EXPECT_TRUE(s.finished());
    EXPECT_EQ(s.take_json_body(true), "[dup,r]");
}

TEST(SseStream, EndFinishesAStreamAndWakesItsWriter) {
    OutStream s(0, 10);
    int wakes = 0;
    s.set_waker([&] { ++wakes; });
    EXPECT_FALSE(s.ended());
    s.end();
    EXPECT_TRUE(s.ended());
    EXPECT_TRUE(s.finished());
    EXPECT_EQ(wakes, 1);
}

TEST(SseStream, ByteLimitDropsOldestButKeepsNewest) {
    OutStream s(1, 100, 10);
    s.push("aaaaaa", nullptr);
    s.push("bbbbbb", nullptr);  // 12 bytes > 10: the first goes
    ASSERT_EQ(s.events().size(), 1u);
    EXPECT_EQ(s.events().front().data, "bbbbbb");
    s.push(std::string(50, 'c'), nullptr);  // larger than the limit on its own: still kept
    ASSERT_EQ(s.events().size(), 1u);
    EXPECT_EQ(s.events().front().seq, 3u);
    s.push("d", nullptr);
    ASSERT_EQ(s.events().size(), 1u);
    EXPECT_EQ(s.events().front().data, "d");
    s.push("e", nullptr);
    EXPECT_EQ(s.events().size(), 2u);
}

TEST(SseStream, WakerIsCalledOnPushFinishAndClose) {
    OutStream s(1, 10);
    s.expect_reply("1");
    int wakes = 0;
    EXPECT_FALSE(s.attached());
    s.push("before", nullptr);  // no waker: nothing to call
    s.set_waker([&] { ++wakes; });
    EXPECT_TRUE(s.attached());
    s.push("x", nullptr);
    EXPECT_EQ(wakes, 1);
    s.request_close();
    EXPECT_EQ(wakes, 2);
    const std::string key = "1";
    s.push("reply", &key);  // the last expected reply finishes the stream
    EXPECT_EQ(wakes, 3);
    EXPECT_TRUE(s.finished());
    s.clear_waker();
    EXPECT_FALSE(s.attached());
    s.push("y", nullptr);
    EXPECT_EQ(wakes, 3);
}

TEST(SseStream, CloseRequestIsTakenOnce) {
    OutStream s(1, 10);
    EXPECT_FALSE(s.close_requested());
    s.request_close();
    EXPECT_TRUE(s.close_requested());
    EXPECT_TRUE(s.take_close_request());
    EXPECT_FALSE(s.close_requested());
    EXPECT_FALSE(s.take_close_request());
}

// ---- HttpSession routing -------------------------------------------------------------------

TEST(SseStream, RouteSendsRepliesToTheStreamOwningTheRequest) {
    HttpSession session("sid", 100);
    EXPECT_EQ(session.id(), "sid");
    RequestId id1 = 1, id2 = "two", id3 = 3.5;
    auto a = session.open_stream({id1, id2});
    auto b = session.open_stream({id3});
    EXPECT_NE(a->id(), 0u);
    EXPECT_NE(b->id(), 0u);
    EXPECT_NE(a->id(), b->id());
    EXPECT_EQ(session.find_stream(a->id()), a);
    EXPECT_EQ(session.find_stream(b->id()), b);

    session.route(protocol::make_response(id3, Json{{"r", 3}}), &id3);
    EXPECT_TRUE(a->events().empty());
    ASSERT_EQ(b->events().size(), 1u);
    EXPECT_TRUE(b->events()[0].is_response);
    EXPECT_EQ(parse(b->events()[0])["id"].dump(), "3.5");
    EXPECT_TRUE(b->finished());

    // Progress for request "two" goes to stream a, but does not finish it.
    session.route(protocol::make_notification("notifications/progress", Json{{"progress", 1}}), &id2);
    ASSERT_EQ(a->events().size(), 1u);
    EXPECT_FALSE(a->events()[0].is_response);
    EXPECT_TRUE(a->has_non_response());
    // A server-to-client request nested in request 1 goes there too, and is no reply.
    session.route(protocol::make_request(Json("srv-1"), "sampling/createMessage", Json::object()), &id1);
    ASSERT_EQ(a->events().size(), 2u);
    EXPECT_FALSE(a->events()[1].is_response);
    EXPECT_FALSE(a->finished());

    session.route(protocol::make_response(id1, Json::object()), &id1);
    EXPECT_FALSE(a->finished());
    session.route(protocol::make_error(id2, -32603, "boom"), &id2);
    EXPECT_TRUE(a->finished());
    ASSERT_EQ(a->events().size(), 4u);
    EXPECT_TRUE(a->events()[3].is_response);
    EXPECT_EQ(parse(a->events()[3])["error"]["message"], "boom");

    // Nothing went to the standalone stream.
    EXPECT_EQ(session.find_stream(0), nullptr);
}

TEST(SseStream, UnrelatedNotificationsGoToTheStandaloneStream) {
    HttpSession session("sid", 100);
    RequestId id1 = 1;
    auto a = session.open_stream({id1});
    session.route(protocol::make_notification("notifications/tools/list_changed", nullptr), nullptr);
    auto standalone = session.find_stream(0);
    ASSERT_NE(standalone, nullptr);
    EXPECT_EQ(standalone->id(), 0u);
    EXPECT_EQ(session.standalone(), standalone);
    ASSERT_EQ(standalone->events().size(), 1u);
    EXPECT_EQ(parse(standalone->events()[0])["method"], "notifications/tools/list_changed");
    EXPECT_TRUE(a->events().empty());

    // A message related to an unknown request also lands on the standalone stream.
    RequestId unknown = 99;
    session.route(protocol::make_notification("notifications/message", Json{{"level", "info"}}), &unknown);
    EXPECT_EQ(standalone->events().size(), 2u);
    EXPECT_TRUE(a->events().empty());
}

TEST(SseStream, MessagesAfterTheReplyGoToTheStandaloneStream) {
    HttpSession session("sid", 100);
    RequestId id1 = 1;
    auto a = session.open_stream({id1});
    session.route(protocol::make_response(id1, Json::object()), &id1);
    ASSERT_TRUE(a->finished());
    session.route(protocol::make_notification("notifications/message", nullptr), &id1);
    EXPECT_EQ(a->events().size(), 1u);
    ASSERT_NE(session.find_stream(0), nullptr);
    EXPECT_EQ(session.find_stream(0)->events().size(), 1u);
}

TEST(SseStream, LegacySessionPutsEverythingOnTheStandaloneStream) {
    HttpSession session("sid", 100);
    session.legacy = true;
    RequestId id1 = 1;
    auto a = session.open_stream({id1});
    session.route(protocol::make_notification("notifications/progress", nullptr), &id1);
    session.route(protocol::make_response(id1, Json::object()), &id1);
    session.route(protocol::make_notification("notifications/tools/list_changed", nullptr), nullptr);
    EXPECT_TRUE(a->events().empty());
    auto s = session.find_stream(0);
    ASSERT_NE(s, nullptr);
    ASSERT_EQ(s->events().size(), 3u);
    EXPECT_EQ(parse(s->events()[1])["id"], Json(1));
    EXPECT_EQ(s->events()[0].seq, 1u);
    EXPECT_EQ(s->events()[2].seq, 3u);
    EXPECT_FALSE(s->finished());
}

TEST(SseStream, StandaloneIsCreatedOnceAndFoundById) {
    HttpSession session("sid", 100);
    EXPECT_EQ(session.find_stream(0), nullptr);
    auto s1 = session.standalone();
    auto s2 = session.standalone();
    EXPECT_EQ(s1, s2);
    EXPECT_EQ(session.find_stream(0), s1);
    EXPECT_EQ(session.find_stream(12345), nullptr);
}

TEST(SseStream, CloseStreamFlagsTheStreamOwningTheRequest) {
    HttpSession session("sid", 100);
    RequestId ida = "a", idb = 2;
    auto a = session.open_stream({ida});
    auto b = session.open_stream({idb});
    session.close_stream(idb);
    EXPECT_TRUE(b->close_requested());
    EXPECT_FALSE(a->close_requested());
    session.close_stream(ida);
    EXPECT_TRUE(a->close_requested());
    // Unknown request: nothing happens (and nothing crashes).
    RequestId unknown = "zzz";
    EXPECT_NO_THROW(session.close_stream(unknown));
    // Same number, different JSON type: not the same request.
    HttpSession s2("sid2", 100);
    auto c = s2.open_stream({Json(2)});
    s2.close_stream(Json("2"));
    EXPECT_FALSE(c->close_requested());
}

TEST(SseStream, PruneDropsOnlyOldFinishedUnattachedStreams) {
    HttpSession session("sid", 100);
    RequestId id1 = 1, id2 = 2, id3 = 3;
    auto done = session.open_stream({id1});
    auto attached = session.open_stream({id2});
    auto open = session.open_stream({id3, Json(4)});
    attached->set_waker([] {});
    session.route(protocol::make_response(id1, Json::object()), &id1);
    session.route(protocol::make_response(id2, Json::object()), &id2);
    session.route(protocol::make_response(id3, Json::object()), &id3);
    ASSERT_TRUE(done->finished());
    ASSERT_TRUE(attached->finished());
    ASSERT_FALSE(open->finished());

    // Not old enough yet.
    session.prune(std::chrono::hours(1));
    EXPECT_EQ(session.find_stream(done->id()), done);

    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    session.prune(std::chrono::milliseconds(1));
    EXPECT_EQ(session.find_stream(done->id()), nullptr);
    EXPECT_EQ(session.find_stream(attached->id()), attached);
    EXPECT_EQ(session.find_stream(open->id()), open);

    // Once the reader goes away, the finished stream is dropped too.
    attached->clear_waker();
    session.prune(std::chrono::milliseconds(1));
    EXPECT_EQ(session.find_stream(attached->id()), nullptr);
    EXPECT_EQ(session.find_stream(open->id()), open);
}

TEST(SseStream, BusyWhileStreamsAreOpenOrAttached) {
    HttpSession session("sid", 100);
    EXPECT_FALSE(session.busy());
    RequestId id1 = 1;
    auto a = session.open_stream({id1});
    EXPECT_TRUE(session.busy());  // a reply is still due
    session.route(protocol::make_response(id1, Json::object()), &id1);
    EXPECT_FALSE(session.busy());
    session.standalone()->set_waker([] {});
    EXPECT_TRUE(session.busy());
    session.standalone()->clear_waker();
    EXPECT_FALSE(session.busy());
}

TEST(SseStream, ParseEventId) {
    std::uint64_t stream = 111, seq = 222;
    EXPECT_TRUE(HttpSession::parse_event_id("3-7", &stream, &seq));
    EXPECT_EQ(stream, 3u);
    EXPECT_EQ(seq, 7u);
    EXPECT_TRUE(HttpSession::parse_event_id("0-0", &stream, &seq));
    EXPECT_EQ(stream, 0u);
    EXPECT_EQ(seq, 0u);
    EXPECT_TRUE(HttpSession::parse_event_id("18446744073709551615-12", &stream, &seq));
    EXPECT_EQ(stream, 18446744073709551615ull);
    EXPECT_EQ(seq, 12u);

    for (std::string_view bad : {"3-", "-7", "a-b", "3-7x", "x3-7", "37", "", "-", "3--7", "3-+7", " 3-7", "3-7 ",
                                 "18446744073709551616-1", "3-7-1"}) {
        EXPECT_FALSE(HttpSession::parse_event_id(bad, &stream, &seq)) << '"' << bad << '"';
    }
}
