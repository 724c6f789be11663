// Shared sessions (stores/shared_sessions.hpp): the record and bus-message formats, the
// numbered GET-stream events, and the Redis implementation against a real redis-server with
// two "replicas" (two instances on their own connections): state saved by one is loaded and
// announced to the other, events are numbered and logged in order, the log is bounded,
// touch pushes the expiry, remove ends the session for both, and the bus comes back after
// Redis restarts.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "async/asio_executor.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_url.hpp"
#include "stores/shared_sessions.hpp"
#include "stores/stores.hpp"
#include "stores_redis_support.hpp"
#include "transports/sse_stream.hpp"

namespace toolport::stores {
namespace {

using namespace std::chrono_literals;

SharedSessionState sample_state(const std::string& id) {
    SharedSessionState s;
    s.id = id;
    s.principal = "p:abc";
    s.view = "cursor";
    s.revision = "2025-11-25";
    s.client_capabilities = {{"elicitation", nlohmann::json::object()}, {"extensions", {{"x", 1}}}};
    s.client_info = {{"name", "client"}, {"version", "1.0"}};
    s.log_level = "warning";
    s.subscriptions = {"test://a", "file:///b c"};
    return s;
}

TEST(SharedSessionState, RoundTripsThroughJsonText) {
    auto s = sample_state("0123456789abcdef0123456789abcdef");
    auto back = SharedSessionState::from_json_text(s.to_json_text());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->id, s.id);
    EXPECT_EQ(back->principal, s.principal);
    EXPECT_EQ(back->view, s.view);
    EXPECT_EQ(back->revision, s.revision);
    EXPECT_EQ(back->client_capabilities, s.client_capabilities);
    EXPECT_EQ(back->client_info, s.client_info);
    EXPECT_EQ(back->log_level, s.log_level);
    EXPECT_EQ(back->subscriptions, s.subscriptions);
}

TEST(SharedSessionState, RefusesWhatIsNotSuchARecord) {
    EXPECT_FALSE(SharedSessionState::from_json_text("not json"));
    EXPECT_FALSE(SharedSessionState::from_json_text("[]"));
    EXPECT_FALSE(SharedSessionState::from_json_text(R"({"v":2,"id":"a"})"));
    auto text = nlohmann::json::parse(sample_state("a").to_json_text());
    text.erase("revision");
    EXPECT_FALSE(SharedSessionState::from_json_text(text.dump()));
    text = nlohmann::json::parse(sample_state("a").to_json_text());
    text["subscriptions"] = "x";
    EXPECT_FALSE(SharedSessionState::from_json_text(text.dump()));
    text = nlohmann::json::parse(sample_state("a").to_json_text());
    text["id"] = "";
    EXPECT_FALSE(SharedSessionState::from_json_text(text.dump()));
}

TEST(SessionBusMessage, EncodesAndDecodesEveryKindWithAnyData) {
    for (auto kind : {SessionBusMessage::Kind::changed, SessionBusMessage::Kind::ended, SessionBusMessage::Kind::event}) {
        SessionBusMessage m{kind, "r1", "s1", 42, "{\"a\": \"b c\"}\n second line "};
        auto back = SessionBusMessage::decode(m.encode());
        ASSERT_TRUE(back);
        EXPECT_EQ(back->kind, kind);
        EXPECT_EQ(back->origin, "r1");
        EXPECT_EQ(back->session_id, "s1");
        EXPECT_EQ(back->seq, 42u);
        EXPECT_EQ(back->data, m.data);
    }
    SessionBusMessage empty{SessionBusMessage::Kind::ended, "r", "s", 0, ""};
    ASSERT_TRUE(SessionBusMessage::decode(empty.encode()));
    EXPECT_EQ(SessionBusMessage::decode(empty.encode())->data, "");
}

TEST(SessionBusMessage, AStreamEventNamesItsStream) {
    SessionBusMessage m{SessionBusMessage::Kind::stream, "r1", "s1", 7, "{\"x\": 1} tail", 123456789};
    auto back = SessionBusMessage::decode(m.encode());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->kind, SessionBusMessage::Kind::stream);
    EXPECT_EQ(back->stream, 123456789u);
    EXPECT_EQ(back->seq, 7u);
    EXPECT_EQ(back->data, m.data);
    EXPECT_FALSE(SessionBusMessage::decode("stream r s 1 notanumber data"));
    EXPECT_FALSE(SessionBusMessage::decode("stream r s 1"));
}

TEST(SessionBusMessage, RefusesMalformedText) {
    EXPECT_FALSE(SessionBusMessage::decode(""));
    EXPECT_FALSE(SessionBusMessage::decode("event r s"));
    EXPECT_FALSE(SessionBusMessage::decode("gone r s 1 x"));
    EXPECT_FALSE(SessionBusMessage::decode("event r s x1 data"));
    EXPECT_FALSE(SessionBusMessage::decode("event r s -1 data"));
    EXPECT_FALSE(SessionBusMessage::decode("event r  1 data"));
}

TEST(OutStreamNumbered, KeepsTheNumbersItIsGivenAndIgnoresOlderOnes) {
    OutStream out(0, 100);
    out.start_after(41);
    out.push_numbered(42, "a");
    out.push_numbered(45, "b");  // a gap: numbers are the log's, not this stream's
    out.push_numbered(44, "late");
    out.push_numbered(45, "again");
    out.push("local", nullptr);  // numbered after the last
    ASSERT_EQ(out.events().size(), 3u);
    EXPECT_EQ(out.events()[0].seq, 42u);
    EXPECT_EQ(out.events()[1].seq, 45u);
    EXPECT_EQ(out.events()[1].data, "b");
    EXPECT_EQ(out.events()[2].seq, 46u);
    EXPECT_TRUE(out.can_replay_after(41));
    EXPECT_FALSE(out.can_replay_after(40));
}

// Two replicas' SharedSessions on one redis-server, on a real event loop.
class RedisSharedSessionsTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!test_support::redis_server_installed()) GTEST_SKIP() << "redis-server is not installed";
        server_ = std::make_unique<test_support::RedisServerProcess>();
        server_->start();
        StoreOptions options;
        options.url = server_->url();
        options.redis_timeout = 2000ms;
        options.reconnect_interval = 100ms;
        a_ = make_redis_shared_sessions(options, exec_);
        b_ = make_redis_shared_sessions(options, exec_);
        a_->set_listener([this](SessionBusMessage m) { heard_a_.push_back(std::move(m)); });
        b_->set_listener([this](SessionBusMessage m) { heard_b_.push_back(std::move(m)); });
        ASSERT_TRUE(test_support::run_until(io_, [&] { return a_->ready() && b_->ready(); }));
        inspector_ = std::make_unique<RedisClient>(exec_,
                                                   RedisClient::Options{.endpoint = parse_redis_url(server_->url()),
                                                                        .command_timeout = 2000ms,
                                                                        .reconnect_interval = 100ms});
        inspector_->start();
        ASSERT_TRUE(test_support::run_until(io_, [&] { return inspector_->ready(); }));
    }
    void TearDown() override {
        a_.reset();
        b_.reset();
        inspector_.reset();
        io_.restart();
        io_.poll();
    }
    template <typename T>
    T run(Task<T> task) {
        return test_support::run_task(io_, std::move(task));
    }
    void run(Task<void> task) { test_support::run_task(io_, std::move(task)); }
    RedisReply redis(std::vector<std::string> args) { return run(inspector_->command(std::move(args))); }

    boost::asio::io_context io_;
    AsioExecutor exec_{io_};
    std::unique_ptr<test_support::RedisServerProcess> server_;
    std::unique_ptr<SharedSessions> a_, b_;
    std::unique_ptr<RedisClient> inspector_;
    std::vector<SessionBusMessage> heard_a_, heard_b_;
};

TEST_F(RedisSharedSessionsTest, StateSavedByOneReplicaIsLoadedAndAnnouncedToTheOther) {
    EXPECT_NE(a_->replica(), b_->replica());
    EXPECT_FALSE(run(b_->load("nope")));
    auto state = sample_state("s1");
    run(a_->save(state, 60000ms));
    auto loaded = run(b_->load("s1"));
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->subscriptions, state.subscriptions);
    EXPECT_EQ(loaded->client_capabilities, state.client_capabilities);
    ASSERT_TRUE(test_support::run_until(io_, [&] { return !heard_b_.empty(); }));
    EXPECT_EQ(heard_b_[0].kind, SessionBusMessage::Kind::changed);
    EXPECT_EQ(heard_b_[0].origin, a_->replica());
    EXPECT_EQ(heard_b_[0].session_id, "s1");
    EXPECT_EQ(SharedSessionState::from_json_text(heard_b_[0].data)->log_level, "warning");
    // The record expires with the idle timeout it was saved with.
    auto ttl = redis({"PTTL", "toolport:session:s1"});
    EXPECT_GT(ttl.integer, 50000);
    EXPECT_LE(ttl.integer, 60000);
}

TEST_F(RedisSharedSessionsTest, EventsAreNumberedInOrderLoggedBoundedAndAnnounced) {
    run(a_->save(sample_state("s2"), 60000ms));
    for (int i = 1; i <= 5; ++i) {
        EXPECT_EQ(run(b_->publish_event("s2", "m" + std::to_string(i), 3, 60000ms)), static_cast<std::uint64_t>(i));
    }
    auto after = run(a_->events_after("s2", 3));
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[0].seq, 4u);
    EXPECT_EQ(after[0].data, "m4");
    EXPECT_EQ(after[1].data, "m5");
    // Only the newest three are kept.
    auto all = run(a_->events_after("s2", 0));
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].seq, 3u);
    ASSERT_TRUE(test_support::run_until(io_, [&] {
        return std::count_if(heard_a_.begin(), heard_a_.end(),
                             [](const auto& m) { return m.kind == SessionBusMessage::Kind::event; }) == 5;
    }));
    std::vector<std::uint64_t> seqs;
    for (const auto& m : heard_a_) {
        if (m.kind == SessionBusMessage::Kind::event) seqs.push_back(m.seq);
    }
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(heard_a_.back().data, "m5");
}

TEST_F(RedisSharedSessionsTest, TouchPushesTheExpiryAndRemoveEndsTheSessionForEveryone) {
    run(a_->save(sample_state("s3"), 1000ms));
    run(a_->publish_event("s3", "m", 10, 1000ms));
    run(b_->touch("s3", 60000ms));
    EXPECT_GT(redis({"PTTL", "toolport:session:s3"}).integer, 50000);
    EXPECT_GT(redis({"PTTL", "toolport:session:s3:events"}).integer, 50000);
    run(b_->remove("s3"));
    EXPECT_FALSE(run(a_->load("s3")));
    EXPECT_TRUE(run(a_->events_after("s3", 0)).empty());
    ASSERT_TRUE(test_support::run_until(io_, [&] {
        return std::any_of(heard_a_.begin(), heard_a_.end(), [](const auto& m) {
            return m.kind == SessionBusMessage::Kind::ended && m.session_id == "s3";
        });
    }));
    // Touching a session that is gone does not bring it back.
    run(b_->touch("s3", 60000ms));
    EXPECT_EQ(redis({"EXISTS", "toolport:session:s3:events"}).integer, 0);
}

TEST_F(RedisSharedSessionsTest, AResponseStreamIsMirroredWithItsEndAndBounded) {
    auto none = run(b_->stream_events_after("s5", 9, 0));
    EXPECT_FALSE(none.exists);
    for (std::uint64_t seq = 1; seq <= 4; ++seq)
        run(a_->publish_stream_event("s5", 9, seq, "e" + std::to_string(seq), 3, 60000ms));
    auto open = run(b_->stream_events_after("s5", 9, 1));
    EXPECT_TRUE(open.exists);
    EXPECT_FALSE(open.ended);
    ASSERT_EQ(open.events.size(), 3u);  // the newest three: 2, 3, 4
    EXPECT_EQ(open.events[0].seq, 2u);
    EXPECT_EQ(open.events[2].data, "e4");
    run(a_->publish_stream_event("s5", 9, 0, "", 3, 60000ms));
    auto ended = run(b_->stream_events_after("s5", 9, 4));
    EXPECT_TRUE(ended.exists);
    EXPECT_TRUE(ended.ended);
    EXPECT_TRUE(ended.events.empty());
    EXPECT_EQ(run(b_->stream_events_after("s5", 9, 0)).events.size(), 3u);  // the end marker outlives trimming
    ASSERT_TRUE(test_support::run_until(io_, [&] {
        return std::count_if(heard_b_.begin(), heard_b_.end(), [](const auto& m) {
                   return m.kind == SessionBusMessage::Kind::stream && m.stream == 9u;
               }) == 5;
    }));
    EXPECT_EQ(heard_b_.back().seq, 0u);
}

TEST_F(RedisSharedSessionsTest, TheBusComesBackAfterRedisRestarts) {
    const auto started = b_->subscriptions_started();
    inspector_.reset();
    server_->kill();
    ASSERT_TRUE(test_support::run_until(io_, [&] { return !a_->ready() && !b_->ready(); }));
    EXPECT_EQ(a_->state(), StoreState::degraded);
    EXPECT_THROW(run(a_->save(sample_state("s4"), 60000ms)), RedisUnavailable);
    server_->start();
    ASSERT_TRUE(test_support::run_until(
        io_, [&] { return a_->ready() && b_->ready(); }, 10s));
    EXPECT_GT(b_->subscriptions_started(), started);
    heard_b_.clear();
    run(a_->save(sample_state("s4"), 60000ms));
    ASSERT_TRUE(test_support::run_until(io_, [&] { return !heard_b_.empty(); }));
    EXPECT_EQ(heard_b_[0].session_id, "s4");
}

}  // namespace
}  // namespace toolport::stores
