// RpcPeer: the request tables both ends of a connection share (protocol/rpc_peer.hpp).
#include "protocol/rpc_peer.hpp"

#include <gtest/gtest.h>

#include "manual_executor.hpp"

namespace toolport::protocol {
namespace {

using namespace std::chrono_literals;
using test_support::ManualExecutor;

struct GaveUp {
    std::int64_t id;
    std::string method;
    std::string reason;
};

struct TimedOut : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class RpcPeerTest : public ::testing::Test {
protected:
    ManualExecutor exec;
    std::vector<GaveUp> gave_up;
    RpcPeer peer{exec,
                 {.on_give_up =
                      [this](std::int64_t id, const std::string& method, const std::string& reason) {
                          gave_up.push_back({id, method, reason});
                      },
                  .timeout_error =
                      [](const std::string& method, std::chrono::milliseconds after) {
                          return std::make_exception_ptr(TimedOut(method + " " + std::to_string(after.count())));
                      }}};

    // The reply's value, or rethrows its error.
    static Json value_of(Completion<Json>& reply) {
        EXPECT_TRUE(reply.done());
        return reply.await_resume();
    }
};

TEST_F(RpcPeerTest, IdsArePositiveAndNeverReused) {
    auto a = peer.begin({.method = "a"});
    auto b = peer.begin({.method = "b"});
    EXPECT_EQ(a.id, 1);
    EXPECT_EQ(b.id, 2);
    EXPECT_TRUE(peer.finish(a.id, Json::object()));
    auto c = peer.begin({.method = "c"});
    EXPECT_EQ(c.id, 3);
    EXPECT_EQ(peer.pending(), 2u);
}

TEST_F(RpcPeerTest, AReplyFinishesItsRequestOnTheNextTurnOfTheLoop) {
    auto r = peer.begin({.method = "tools/call"});
    EXPECT_TRUE(peer.receive_reply({RequestId(r.id), Json{{"ok", true}}}));
    EXPECT_FALSE(r.reply.done()) << "never from inside the owner's read path";
    exec.run();
    EXPECT_EQ(value_of(r.reply), (Json{{"ok", true}}));
    EXPECT_EQ(peer.pending(), 0u);
    // A second reply to the same id is late: dropped.
    EXPECT_FALSE(peer.receive_reply({RequestId(r.id), Json::object()}));
}

TEST_F(RpcPeerTest, RepliesToIdsThatAreNotOursAreRefused) {
    auto r = peer.begin({.method = "x"});
    EXPECT_FALSE(peer.receive_reply({RequestId("1"), Json::object()})) << "a string id is never ours";
    EXPECT_FALSE(peer.receive_reply({RequestId(1.0), Json::object()}));
    EXPECT_FALSE(peer.receive_reply({RequestId(99), Json::object()}));
    EXPECT_FALSE(peer.receive_reply({Json::parse("18446744073709551615"), Json::object()}));
    EXPECT_EQ(peer.pending(), 1u);
    EXPECT_EQ(peer.pending_id(RequestId(r.id)), r.id);
}

TEST_F(RpcPeerTest, AnErrorResponseEndsTheRequestWithRpcError) {
    auto r = peer.begin({.method = "sampling/createMessage"});
    ErrorResponse error;
    error.id = RequestId(r.id);
    error.code = -32601;
    error.message = "no sampling here";
    error.data = Json{{"why", "policy"}};
    EXPECT_TRUE(peer.receive_error(error));
    exec.run();
    try {
        value_of(r.reply);
        FAIL() << "expected RpcError";
    } catch (const RpcError& e) {
        EXPECT_EQ(e.code, -32601);
        EXPECT_EQ(e.message, "no sampling here");
        EXPECT_EQ(e.data, (Json{{"why", "policy"}}));
    }
    EXPECT_TRUE(gave_up.empty()) << "an answered request is not given up";
}

TEST_F(RpcPeerTest, ATimeoutEndsTheRequestAndGivesItUp) {
    auto r = peer.begin({.method = "roots/list", .timeout = 100ms});
    exec.advance(99ms);
    EXPECT_FALSE(r.reply.done());
    exec.advance(1ms);
    EXPECT_THROW(value_of(r.reply), TimedOut);
    ASSERT_EQ(gave_up.size(), 1u);
    EXPECT_EQ(gave_up[0].id, r.id);
    EXPECT_EQ(gave_up[0].method, "roots/list");
    EXPECT_EQ(gave_up[0].reason, "timed out after 100 ms");
    // The reply that comes after is dropped.
    EXPECT_FALSE(peer.receive_reply({RequestId(r.id), Json::object()}));
}

TEST_F(RpcPeerTest, AnAnsweredRequestLeavesNoTimerBehind) {
    auto r = peer.begin({.method = "x", .timeout = 100ms});
    EXPECT_EQ(exec.pending_timers(), 1u);
    peer.finish(r.id, Json::object());
    EXPECT_EQ(exec.pending_timers(), 0u);
    exec.advance(1s);
    EXPECT_TRUE(gave_up.empty());
}

TEST_F(RpcPeerTest, TheCallersCancelTokenEndsTheRequestAndGivesItUp) {
    CancelToken token;
    auto r = peer.begin({.method = "elicitation/create", .cancel = &token});
    token.cancel("user left");
    EXPECT_FALSE(r.reply.done());
    exec.run();
    EXPECT_THROW(value_of(r.reply), OperationCancelled);
    ASSERT_EQ(gave_up.size(), 1u);
    EXPECT_EQ(gave_up[0].reason, "request cancelled");
}

TEST_F(RpcPeerTest, AFiredTokenEndsARequestAtOnce) {
    CancelToken token;
    token.cancel();
    auto r = peer.begin({.method = "x", .cancel = &token});
    exec.run();
    EXPECT_THROW(value_of(r.reply), OperationCancelled);
}

TEST_F(RpcPeerTest, AFinishedRequestForgetsItsToken) {
    CancelToken token;
    auto r = peer.begin({.method = "x", .cancel = &token});
    peer.finish(r.id, Json::object());
    token.cancel();
    exec.run();
    EXPECT_EQ(value_of(r.reply), Json::object());
    EXPECT_TRUE(gave_up.empty());
}

TEST_F(RpcPeerTest, FailWithAReasonGivesUpAndWithoutOneDoesNot) {
    auto a = peer.begin({.method = "a"});
    auto b = peer.begin({.method = "b"});
    EXPECT_TRUE(peer.fail(a.id, std::make_exception_ptr(OperationCancelled()), "subscription replaced"));
    EXPECT_TRUE(peer.fail(b.id, std::make_exception_ptr(std::runtime_error("send failed"))));
    EXPECT_FALSE(peer.fail(b.id, std::make_exception_ptr(std::runtime_error("again"))));
    ASSERT_EQ(gave_up.size(), 1u);
    EXPECT_EQ(gave_up[0].method, "a");
}

TEST_F(RpcPeerTest, FailAllEndsEveryRequestWithoutGivingAnyUp) {
    auto a = peer.begin({.method = "a", .timeout = 1s});
    auto b = peer.begin({.method = "b"});
    peer.fail_all(std::make_exception_ptr(std::runtime_error("connection lost")));
    exec.advance(2s);
    EXPECT_THROW(value_of(a.reply), std::runtime_error);
    EXPECT_THROW(value_of(b.reply), std::runtime_error);
    EXPECT_TRUE(gave_up.empty());
    EXPECT_EQ(peer.pending(), 0u);
}

TEST_F(RpcPeerTest, ProgressGoesToTheRequestWhoseIdIsTheToken) {
    std::vector<Json> seen;
    auto r = peer.begin({.method = "tools/call", .on_progress = [&](const Json& p) { seen.push_back(p); }});
    auto quiet = peer.begin({.method = "tools/list"});
    EXPECT_TRUE(peer.receive_progress({{"progressToken", r.id}, {"progress", 1}}));
    EXPECT_FALSE(peer.receive_progress({{"progressToken", quiet.id}, {"progress", 1}})) << "it asked for none";
    EXPECT_FALSE(peer.receive_progress({{"progressToken", "1"}, {"progress", 2}}));
    EXPECT_FALSE(peer.receive_progress(Json("not an object")));
    ASSERT_EQ(seen.size(), 1u);
    EXPECT_EQ(seen[0]["progress"], 1);
}

TEST_F(RpcPeerTest, ProgressMayEndItsOwnRequest) {
    auto r = peer.begin({.method = "x", .on_progress = [&](const Json&) { peer.finish(1, Json::object()); }});
    EXPECT_TRUE(peer.receive_progress({{"progressToken", r.id}, {"progress", 1}}));
    exec.run();
    EXPECT_TRUE(r.reply.done());
}

TEST_F(RpcPeerTest, TagsAndMethodsAreKeptWhilePending) {
    auto r = peer.begin({.method = "tools/call", .tag = 7});
    EXPECT_EQ(peer.tag_of(r.id), 7u);
    ASSERT_NE(peer.method_of(r.id), nullptr);
    EXPECT_EQ(*peer.method_of(r.id), "tools/call");
    peer.finish(r.id, Json::object());
    EXPECT_EQ(peer.tag_of(r.id), 0u);
    EXPECT_EQ(peer.method_of(r.id), nullptr);
}

TEST_F(RpcPeerTest, DestroyingThePeerFailsWhatIsPendingAndDisarmsItsTimers) {
    auto owned = std::make_unique<RpcPeer>(exec, RpcPeer::Hooks{.on_give_up =
                                                                    [this](std::int64_t id, const std::string& m,
                                                                           const std::string& r) {
                                                                        gave_up.push_back({id, m, r});
                                                                    },
                                                                .timeout_error = nullptr});
    auto r = owned->begin({.method = "x", .timeout = 10ms});
    owned.reset();
    exec.advance(1s);
    EXPECT_THROW(value_of(r.reply), OperationCancelled);
    EXPECT_TRUE(gave_up.empty());
}

// ---- requests we serve

TEST_F(RpcPeerTest, ADuplicateIdInFlightIsRefused) {
    std::vector<std::string> stopped;
    EXPECT_TRUE(peer.begin_serving(RequestId(5), [&](const std::string& r) { stopped.push_back(r); }));
    EXPECT_FALSE(peer.begin_serving(RequestId(5), [&](const std::string&) { stopped.push_back("wrong one"); }));
    EXPECT_TRUE(peer.begin_serving(RequestId("5"), [](const std::string&) {})) << "\"5\" and 5 are different ids";
    EXPECT_EQ(peer.serving_count(), 2u);
    peer.end_serving(RequestId(5));
    EXPECT_FALSE(peer.serving(RequestId(5)));
    EXPECT_TRUE(peer.begin_serving(RequestId(5), [](const std::string&) {})) << "free again once it ended";
    EXPECT_TRUE(stopped.empty());
}

TEST_F(RpcPeerTest, CancelledStopsTheNamedRequestWithItsReason) {
    std::string reason;
    peer.begin_serving(RequestId("req-1"), [&](const std::string& r) { reason = r; });
    EXPECT_FALSE(peer.receive_cancelled({{"requestId", "req-2"}}, "default")) << "finished or never ours: ignored";
    EXPECT_FALSE(peer.receive_cancelled(Json::array(), "default"));
    EXPECT_TRUE(peer.receive_cancelled({{"requestId", "req-1"}, {"reason", "user pressed stop"}}, "default"));
    EXPECT_EQ(reason, "user pressed stop");
    peer.begin_serving(RequestId(2), [&](const std::string& r) { reason = r; });
    EXPECT_TRUE(peer.receive_cancelled({{"requestId", 2}, {"reason", 42}}, "cancelled by client"));
    EXPECT_EQ(reason, "cancelled by client") << "a reason that is not a string is not used";
}

TEST_F(RpcPeerTest, AStopThatEndsItsRequestAtOnceIsSafe) {
    peer.begin_serving(RequestId(1), [&](const std::string&) { peer.end_serving(RequestId(1)); });
    peer.begin_serving(RequestId(2), [&](const std::string&) { peer.end_serving(RequestId(2)); });
    EXPECT_TRUE(peer.receive_cancelled({{"requestId", 1}}, "x"));
    EXPECT_EQ(peer.serving_count(), 1u);
    peer.stop_serving_all("closing");
    EXPECT_EQ(peer.serving_count(), 0u);
}

TEST_F(RpcPeerTest, StopServingAllStopsEveryRequest) {
    std::vector<std::string> stopped;
    for (int i = 0; i < 3; ++i) {
        peer.begin_serving(RequestId(i), [&, i](const std::string& r) { stopped.push_back(std::to_string(i) + r); });
    }
    peer.stop_serving_all(":closed");
    std::sort(stopped.begin(), stopped.end());
    EXPECT_EQ(stopped, (std::vector<std::string>{"0:closed", "1:closed", "2:closed"}));
}

}  // namespace
}  // namespace toolport::protocol
