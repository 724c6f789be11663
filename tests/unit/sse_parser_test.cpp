// The SSE parser against the event-stream rules of the WHATWG HTML standard.
#include <gtest/gtest.h>

#include "client/sse_parser.hpp"

using toolport::client::SseError;
using toolport::client::SseEvent;
using toolport::client::SseParser;
using namespace std::chrono_literals;

namespace {

std::vector<SseEvent> parse_all(std::string_view text) {
    SseParser parser;
    return parser.feed(text);
}

TEST(SseParser, OneEventWithTypeDataAndId) {
    auto events = parse_all("id: 7-3\nevent: message\ndata: {\"a\":1}\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].type, "message");
    EXPECT_EQ(events[0].data, "{\"a\":1}");
    EXPECT_EQ(events[0].id, "7-3");
}

TEST(SseParser, MultiLineDataIsJoinedWithNewlines) {
    auto events = parse_all("data: first\ndata:second\ndata:  third\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "first\nsecond\n third") << "only one space after the colon is removed";
}

TEST(SseParser, TypeDefaultsToMessageAndResetsAfterEachEvent) {
    auto events = parse_all("event: ping\ndata: a\n\ndata: b\n\n");
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].type, "ping");
    EXPECT_EQ(events[1].type, "message");
}

TEST(SseParser, EveryLineEndingWorks) {
    for (std::string_view text : {"data: x\r\n\r\n", "data: x\r\r", "data: x\n\n", "data: x\r\n\n"}) {
        auto events = parse_all(text);
        ASSERT_EQ(events.size(), 1u) << text;
        EXPECT_EQ(events[0].data, "x");
    }
}

TEST(SseParser, ChunksMaySplitAnywhereEvenInsideCrlf) {
    const std::string stream = "id: 1\r\ndata: hello\r\ndata: world\r\n\r\nid: 2\r\ndata: again\r\n\r\n";
    for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
        SseParser parser;
        auto events = parser.feed(std::string_view(stream).substr(0, cut));
        auto more = parser.feed(std::string_view(stream).substr(cut));
        events.insert(events.end(), more.begin(), more.end());
        ASSERT_EQ(events.size(), 2u) << "cut at " << cut;
        EXPECT_EQ(events[0].data, "hello\nworld");
        EXPECT_EQ(events[0].id, "1");
        EXPECT_EQ(events[1].data, "again");
        EXPECT_EQ(events[1].id, "2");
    }
    // One byte at a time.
    SseParser parser;
    std::vector<SseEvent> events;
    for (char c : stream) {
        auto got = parser.feed(std::string_view(&c, 1));
        events.insert(events.end(), got.begin(), got.end());
    }
    EXPECT_EQ(events.size(), 2u);
}

TEST(SseParser, CommentsAndUnknownFieldsAreIgnored) {
    auto events = parse_all(": keep-alive\n\nfoo: bar\ndata: x\n: inside\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "x");
}

TEST(SseParser, EventsWithoutDataAreNotDispatchedButTheirIdSticks) {
    SseParser parser;
    auto events = parser.feed("id: 5\n\nevent: lonely\n\n");
    EXPECT_TRUE(events.empty());
    EXPECT_EQ(parser.last_event_id(), "5");
    events = parser.feed("data: later\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].id, "5") << "the last event ID carries over";
    EXPECT_EQ(events[0].type, "message") << "the type of an undispatched event is dropped";
}

TEST(SseParser, AnEmptyDataLineIsAnEventWithEmptyData) {
    // The server's priming event: an id to resume from, and nothing to say yet.
    SseParser parser;
    auto events = parser.feed("id: 3-0\nretry: 1000\ndata: \n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "");
    EXPECT_EQ(events[0].id, "3-0");
    EXPECT_EQ(parser.retry(), 1000ms);
}

TEST(SseParser, IdWithNulIsIgnoredAndEmptyIdResets) {
    SseParser parser;
    parser.feed("id: keep\n\n");
    parser.feed(std::string_view("id: bad\0id\n\n", 12));
    EXPECT_EQ(parser.last_event_id(), "keep");
    parser.feed("id\n\n");
    EXPECT_EQ(parser.last_event_id(), "");
}

TEST(SseParser, RetryNeedsOnlyDigits) {
    SseParser parser;
    parser.feed("retry: 250\n\n");
    EXPECT_EQ(parser.retry(), 250ms);
    for (const char* bad : {"retry: 12a\n\n", "retry: -5\n\n", "retry: \n\n", "retry: 1.5\n\n", "retry: +7\n\n",
                            "retry: 99999999999999999999999\n\n"}) {
        parser.feed(bad);
        EXPECT_EQ(parser.retry(), 250ms) << bad;
    }
}

TEST(SseParser, ALeadingBomIsSkippedOnlyAtTheStart) {
    SseParser parser;
    auto events = parser.feed(
        "\xEF\xBB\xBF"
        "data: x\n\n\xEF\xBB\xBF"
        "data: y\n\n");
    ASSERT_EQ(events.size(), 1u) << "a BOM later is part of a field name, which is then unknown";
    EXPECT_EQ(events[0].data, "x");
}

TEST(SseParser, AnUnfinishedEventAtTheEndIsNotDispatched) {
    SseParser parser;
    EXPECT_TRUE(parser.feed("data: partial\n").empty());
    EXPECT_TRUE(parser.feed("data: still").empty());
}

TEST(SseParser, OversizedEventsAreRefused) {
    SseParser parser(64);
    EXPECT_THROW(parser.feed("data: " + std::string(100, 'x')), SseError);
    SseParser lines(64);
    EXPECT_THROW(for (int i = 0; i < 10; ++i) lines.feed("data: 0123456789\n"), SseError);
}

TEST(SseParser, ALineWithoutColonIsAFieldWithEmptyValue) {
    auto events = parse_all("data\ndata\n\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].data, "\n");
}

}  // namespace
