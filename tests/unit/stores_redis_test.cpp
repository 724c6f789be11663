// The Redis stores against a real redis-server (started by each test on a free loopback
// port): shared state between two store instances ("replicas"), atomic budgets, the
// fallbacks while Redis is dead or hung, and the return to Redis once it is back.
// Skipped only when /usr/bin/redis-server is not installed.
#include <gtest/gtest.h>

#include "async/asio_executor.hpp"
#include "stores/redis_client.hpp"
#include "stores/redis_stores.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"
#include "stores_redis_support.hpp"

using namespace toolport;
using namespace toolport::stores;
using namespace std::chrono_literals;
using test_support::RedisServerProcess;
using test_support::run_for;
using test_support::run_task;
using test_support::run_until;

namespace {

class StoresRedis : public ::testing::Test {
protected:
    void SetUp() override {
        if (!test_support::redis_server_installed()) GTEST_SKIP() << "/usr/bin/redis-server is not installed";
        server = std::make_unique<RedisServerProcess>();
        server->start();
    }

    // Clients destroyed with a command in flight (a handshake, say) complete it with
    // RedisUnavailable through the loop: run the loop once more so nothing stays suspended
    // (LeakSanitizer would report the waiting coroutine).
    void TearDown() override {
        inspector.reset();
        io.restart();
        io.poll();
    }

    StoreOptions options(bool fail_open = true) const {
        StoreOptions o;
        o.url = server->url();
        o.rate_limit_fail_open = fail_open;
        o.redis_timeout = 2000ms;  // generous: the test machine is shared
        o.reconnect_interval = 100ms;
        return o;
    }

    std::unique_ptr<Stores> connected_stores(StoreOptions o) {
        auto stores = make_stores(o, exec);
        EXPECT_TRUE(run_until(io, [&] { return stores->state() == StoreState::available; }))
            << "the stores never connected to Redis";
        return stores;
    }
    std::unique_ptr<Stores> connected_stores(bool fail_open = true) { return connected_stores(options(fail_open)); }

    // A connection of its own, to look at (and tamper with) what the stores keep in Redis.
    RedisReply redis(std::vector<std::string> args) {
        if (!inspector) {
            inspector = std::make_unique<RedisClient>(exec,
                                                      RedisClient::Options{.endpoint = parse_redis_url(server->url()),
                                                                           .command_timeout = 2000ms,
                                                                           .reconnect_interval = 100ms});
            inspector->start();
        }
        EXPECT_TRUE(run_until(io, [&] { return inspector->ready(); }));
        return run_task(io, inspector->command(std::move(args)));
    }

    template <typename T>
    T run(Task<T> task) {
        return run_task(io, std::move(task));
    }
    void run(Task<void> task) { run_task(io, std::move(task)); }

    bool wait_for_state(Stores& stores, StoreState state) {
        return run_until(io, [&] { return stores.state() == state; });
    }

    boost::asio::io_context io;
    AsioExecutor exec{io};
    std::unique_ptr<RedisServerProcess> server;
    std::unique_ptr<RedisClient> inspector;
};

RateLimitRule bucket(double rate, double burst) {
    RateLimitRule rule;
    rule.rate = rate;
    rule.burst = burst;
    return rule;
}

TEST_F(StoresRedis, TheCacheRoundTripsThroughRedisAndExpires) {
    auto stores = connected_stores();
    EXPECT_EQ(stores->backend(), "redis");
    EXPECT_EQ(stores->cache().backend(), "redis");
    EXPECT_EQ(run(stores->cache().get("result-1")), std::nullopt);

    const std::string value("{\"text\":\"a\\u0000b\"}\r\n\0tail", 26);
    run(stores->cache().put("result-1", value, 400ms));
    EXPECT_EQ(run(stores->cache().get("result-1")), value);
    // It is in Redis under the prefix, with its TTL, and not in the local fallback.
    auto raw = redis({"GET", "toolport:cache:result-1"});
    ASSERT_TRUE(raw.is_string());
    EXPECT_EQ(raw.text, value);
    auto pttl = redis({"PTTL", "toolport:cache:result-1"});
    ASSERT_TRUE(pttl.is_integer());
    EXPECT_GT(pttl.integer, 0);
    EXPECT_LE(pttl.integer, 400);
    auto& cache = dynamic_cast<RedisCache&>(stores->cache());
    EXPECT_EQ(cache.fallback().entries(), 0u);

    EXPECT_TRUE(run_until(io, [&] { return !run(stores->cache().get("result-1")).has_value(); }))
        << "the entry never expired";
    EXPECT_TRUE(redis({"EXISTS", "toolport:cache:result-1"}).integer == 0);
}

TEST_F(StoresRedis, LargeValuesAndManyPipelinedCommandsComeBackWhole) {
    auto stores = connected_stores();
    // Far larger than hiredis reads at once (16 KB): the socket must be watched again
    // while it still holds data.
    std::string large(3 << 20, '\0');
    for (std::size_t i = 0; i < large.size(); ++i) large[i] = static_cast<char>(i * 7 % 251);
    run(stores->cache().put("large", large, 60s));
    EXPECT_EQ(run(stores->cache().get("large")), large);

    int finished = 0;
    int matched = 0;
    for (int i = 0; i < 300; ++i) {
        run(stores->cache().put("k" + std::to_string(i), std::string(1000, static_cast<char>('a' + i % 26)), 60s));
    }
    for (int i = 0; i < 300; ++i) {
        spawn(stores->cache().get("k" + std::to_string(i)),
              [&, i](std::optional<std::optional<std::string>> value, std::exception_ptr) {
                  ++finished;
                  if (value && *value == std::string(1000, static_cast<char>('a' + i % 26))) ++matched;
              });
    }
    ASSERT_TRUE(run_until(io, [&] { return finished == 300; }));
    EXPECT_EQ(matched, 300);
    EXPECT_EQ(stores->state(), StoreState::available);
}

TEST_F(StoresRedis, TwoReplicasShareTheCache) {
    auto a = connected_stores();
    auto b = connected_stores();
    run(a->cache().put("k", "from a", 60s));
    EXPECT_EQ(run(b->cache().get("k")), "from a");
    run(b->cache().put("k", "from b", 60s));
    EXPECT_EQ(run(a->cache().get("k")), "from b");
}

TEST_F(StoresRedis, TwoReplicasShareOneTokenBucket) {
    auto a = connected_stores();
    auto b = connected_stores();
    const auto rule = bucket(0.01, 3);  // one token per 100 s: none refills during the test
    EXPECT_TRUE(run(a->rate_limits().acquire("svc:weather", rule)).allowed);
    EXPECT_TRUE(run(b->rate_limits().acquire("svc:weather", rule)).allowed);
    EXPECT_TRUE(run(a->rate_limits().acquire("svc:weather", rule)).allowed);
    auto refused = run(b->rate_limits().acquire("svc:weather", rule));
    EXPECT_FALSE(refused.allowed);
    EXPECT_GT(refused.retry_after, 90s);
    EXPECT_LE(refused.retry_after, 100s);
    EXPECT_FALSE(run(a->rate_limits().acquire("svc:weather", rule)).allowed);
    EXPECT_TRUE(run(a->rate_limits().acquire("svc:other", rule)).allowed);  // keys are separate
    EXPECT_EQ(redis({"TYPE", "toolport:rate:svc:weather"}).text, "hash");
    EXPECT_GT(redis({"PTTL", "toolport:rate:svc:weather"}).integer, 0);
}

TEST_F(StoresRedis, ANearZeroRateGivesAYearNotAnOverflow) {
    auto stores = connected_stores();
    const auto rule = bucket(1e-300, 1);
    EXPECT_TRUE(run(stores->rate_limits().acquire("k", rule)).allowed);
    auto refused = run(stores->rate_limits().acquire("k", rule));
    EXPECT_FALSE(refused.allowed);
    EXPECT_GT(refused.retry_after, 24h * 365);
    EXPECT_LE(refused.retry_after, 24h * 366);
    auto pttl = redis({"PTTL", "toolport:rate:k"});
    EXPECT_GT(pttl.integer, 0);
}

TEST_F(StoresRedis, TwoReplicasShareTheMinimumSpacing) {
    auto a = connected_stores();
    auto b = connected_stores();
    RateLimitRule rule;
    rule.min_spacing = 60s;
    rule.max_wait = 90s;
    auto first = run(a->rate_limits().acquire("svc:slow", rule));
    EXPECT_TRUE(first.allowed);
    EXPECT_EQ(first.wait, 0ms);
    auto second = run(b->rate_limits().acquire("svc:slow", rule));
    EXPECT_TRUE(second.allowed);
    EXPECT_GT(second.wait, 55s);  // its slot is one spacing after the first call
    EXPECT_LE(second.wait, 60s);
    auto third = run(a->rate_limits().acquire("svc:slow", rule));  // would wait ~120 s > 90 s
    EXPECT_FALSE(third.allowed);
    EXPECT_GT(third.retry_after, 25s);
    EXPECT_LE(third.retry_after, 30s);
}

TEST_F(StoresRedis, TheBucketRefillsOnRedisTime) {
    auto stores = connected_stores();
    const auto rule = bucket(20, 1);  // a token every 50 ms
    EXPECT_TRUE(run(stores->rate_limits().acquire("k", rule)).allowed);
    auto refused = run(stores->rate_limits().acquire("k", rule));
    ASSERT_FALSE(refused.allowed);
    EXPECT_GE(refused.retry_after, 1ms);
    EXPECT_LE(refused.retry_after, 50ms);
    run_for(io, refused.retry_after + 20ms);
    EXPECT_TRUE(run(stores->rate_limits().acquire("k", rule)).allowed);
}

TEST_F(StoresRedis, TwoReplicasShareBudgets) {
    auto a = connected_stores();
    auto b = connected_stores();
    auto first = run(a->budgets().reserve("trace-7", 12, 20, 60s));
    EXPECT_TRUE(first.granted);
    EXPECT_EQ(first.used, 12);
    auto second = run(b->budgets().reserve("trace-7", 12, 20, 60s));
    EXPECT_FALSE(second.granted);
    EXPECT_EQ(second.used, 12);
    EXPECT_EQ(run(b->budgets().used("trace-7")), 12);
    EXPECT_EQ(run(b->budgets().settle("trace-7", 12, 5, 60s)), 5);
    EXPECT_EQ(run(a->budgets().used("trace-7")), 5);
    EXPECT_EQ(run(a->budgets().settle("trace-7", 8, 0, 60s)), 0);  // never below 0
    EXPECT_EQ(redis({"GET", "toolport:budget:trace-7"}).text, "0");
    auto pttl = redis({"PTTL", "toolport:budget:trace-7"});
    EXPECT_GT(pttl.integer, 0);
    EXPECT_LE(pttl.integer, 60000);
}

TEST_F(StoresRedis, TwentyConcurrentReservesAcrossReplicasNeverOverspend) {
    auto a = connected_stores();
    auto b = connected_stores();
    int finished = 0;
    int granted = 0;
    std::int64_t highest = 0;
    for (int i = 0; i < 20; ++i) {
        Stores& replica = i % 2 ? *a : *b;
        spawn(replica.budgets().reserve("request-42", 12, 120, 60s),
              [&](std::optional<BudgetReservation> r, std::exception_ptr error) {
                  ++finished;
                  ASSERT_FALSE(error);
                  if (r->granted) ++granted;
                  highest = std::max(highest, r->used);
              });
    }
    ASSERT_TRUE(run_until(io, [&] { return finished == 20; }));
    EXPECT_EQ(granted, 10);
    EXPECT_EQ(highest, 120);
    EXPECT_EQ(redis({"GET", "toolport:budget:request-42"}).text, "120");
}

TEST_F(StoresRedis, KillingRedisFallsBackAndRestartingItReturnsToRedis) {
    auto open_replica = connected_stores(/*fail_open=*/true);
    auto closed_replica = connected_stores(/*fail_open=*/false);
    run(open_replica->cache().put("before", "v0", 60s));
    run(open_replica->budgets().reserve("scope", 5, 10, 60s));

    server->kill();
    ASSERT_TRUE(wait_for_state(*open_replica, StoreState::degraded));
    ASSERT_TRUE(wait_for_state(*closed_replica, StoreState::degraded));

    // Cache: served from the local LRU.
    EXPECT_EQ(open_replica->cache().state(), StoreState::degraded);
    EXPECT_EQ(run(open_replica->cache().get("before")), std::nullopt);  // it lived in Redis
    run(open_replica->cache().put("during", "v1", 60s));
    EXPECT_EQ(run(open_replica->cache().get("during")), "v1");
    EXPECT_EQ(dynamic_cast<RedisCache&>(open_replica->cache()).fallback().lookup("during"), "v1");

    // Rate limits: fail-open allows, fail-closed refuses until the next reconnect attempt.
    const auto rule = bucket(0.01, 1);
    EXPECT_EQ(open_replica->rate_limits().state(), StoreState::degraded);
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(run(open_replica->rate_limits().acquire("svc:x", rule)).allowed);
    EXPECT_EQ(closed_replica->rate_limits().state(), StoreState::unavailable);
    auto refused = run(closed_replica->rate_limits().acquire("svc:x", rule));
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 100ms);

    // Budgets: the local fallback, which knows nothing of Redis's total.
    EXPECT_EQ(open_replica->budgets().state(), StoreState::degraded);
    auto local = run(open_replica->budgets().reserve("scope", 7, 10, 60s));
    EXPECT_TRUE(local.granted);
    EXPECT_EQ(local.used, 7);
    EXPECT_FALSE(run(open_replica->budgets().reserve("scope", 7, 10, 60s)).granted);
    EXPECT_EQ(dynamic_cast<RedisBudgets&>(open_replica->budgets()).fallback().used_now("scope"), 7);

    // Redis is back on the same port: both replicas reconnect and use it again.
    inspector.reset();
    server->start();
    ASSERT_TRUE(wait_for_state(*open_replica, StoreState::available));
    ASSERT_TRUE(wait_for_state(*closed_replica, StoreState::available));
    EXPECT_EQ(open_replica->cache().state(), StoreState::available);
    EXPECT_EQ(closed_replica->rate_limits().state(), StoreState::available);

    run(open_replica->cache().put("after", "v2", 60s));
    EXPECT_EQ(redis({"GET", "toolport:cache:after"}).text, "v2");
    EXPECT_EQ(run(closed_replica->cache().get("after")), "v2");
    EXPECT_TRUE(run(closed_replica->rate_limits().acquire("svc:x", rule)).allowed);
    EXPECT_FALSE(run(open_replica->rate_limits().acquire("svc:x", rule)).allowed);  // shared again
    auto shared = run(closed_replica->budgets().reserve("scope", 4, 10, 60s));
    EXPECT_TRUE(shared.granted);
    EXPECT_EQ(shared.used, 4);  // Redis's fresh counter, not the fallback's 7
    EXPECT_EQ(redis({"GET", "toolport:budget:scope"}).text, "4");
}

TEST_F(StoresRedis, ConnectsByHostName) {
    auto o = options();
    o.url = "redis://localhost:" + std::to_string(server->port());  // resolved off the loop thread
    auto stores = connected_stores(o);
    run(stores->cache().put("k", "v", 60s));
    EXPECT_EQ(redis({"GET", "toolport:cache:k"}).text, "v");
}

TEST_F(StoresRedis, StartsDegradedWhenRedisIsDownAndConnectsWhenItComesUp) {
    server->kill();
    auto stores = make_stores(options(), exec);  // returns at once, without Redis
    EXPECT_EQ(stores->state(), StoreState::degraded);
    run(stores->cache().put("k", "local", 60s));
    EXPECT_EQ(run(stores->cache().get("k")), "local");
    EXPECT_TRUE(run(stores->rate_limits().acquire("k", bucket(1, 1))).allowed);
    run_for(io, 300ms);  // a few failed reconnect attempts
    EXPECT_EQ(stores->state(), StoreState::degraded);

    server->start();
    ASSERT_TRUE(wait_for_state(*stores, StoreState::available));
    run(stores->cache().put("k", "shared", 60s));
    EXPECT_EQ(redis({"GET", "toolport:cache:k"}).text, "shared");
}

TEST_F(StoresRedis, AHungRedisTimesOutIntoTheFallbacksAndRecovers) {
    auto o = options();
    o.redis_timeout = 300ms;
    auto stores = connected_stores(o);
    run(stores->cache().put("k", "v", 60s));

    server->pause();                                         // connections stay open; nothing answers
    EXPECT_EQ(run(stores->cache().get("k")), std::nullopt);  // timed out: a miss from the empty fallback
    EXPECT_EQ(stores->state(), StoreState::degraded);        // the slow connection was dropped
    auto reservation = run(stores->budgets().reserve("s", 1, 1, 60s));
    EXPECT_TRUE(reservation.granted);  // the local fallback

    server->resume();
    ASSERT_TRUE(wait_for_state(*stores, StoreState::available));
    EXPECT_EQ(run(stores->cache().get("k")), "v");
}

TEST_F(StoresRedis, ErrorRepliesAndWrongTypesNeverCrash) {
    auto open_replica = connected_stores(true);
    auto closed_replica = connected_stores(false);
    redis({"HSET", "toolport:cache:h", "field", "value"});
    redis({"SET", "toolport:rate:r", "not a hash"});
    redis({"SET", "toolport:budget:text", "abc"});
    redis({"HSET", "toolport:budget:hash", "f", "v"});

    EXPECT_EQ(run(open_replica->cache().get("h")), std::nullopt);  // WRONGTYPE: a miss
    run(open_replica->cache().put("h", "overwritten", 60s));       // SET replaces any type
    EXPECT_EQ(run(open_replica->cache().get("h")), "overwritten");

    EXPECT_TRUE(run(open_replica->rate_limits().acquire("r", bucket(1, 1))).allowed);
    auto refused = run(closed_replica->rate_limits().acquire("r", bucket(1, 1)));
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 100ms);

    auto from_text = run(open_replica->budgets().reserve("text", 3, 10, 60s));
    EXPECT_TRUE(from_text.granted);  // reserved in the local fallback
    EXPECT_EQ(from_text.used, 3);
    EXPECT_EQ(run(open_replica->budgets().used("text")), 3);
    EXPECT_EQ(run(open_replica->budgets().settle("hash", 0, 2, 60s)), 2);
    EXPECT_EQ(redis({"GET", "toolport:budget:text"}).text, "abc");  // untouched

    EXPECT_EQ(open_replica->state(), StoreState::available);  // Redis itself is fine
}

TEST_F(StoresRedis, ScriptsAreSentAgainAfterRedisForgetsThem) {
    auto stores = connected_stores();
    EXPECT_TRUE(run(stores->rate_limits().acquire("k", bucket(0.01, 2))).allowed);
    redis({"SCRIPT", "FLUSH"});  // as after a restart: EVALSHA now answers NOSCRIPT
    EXPECT_TRUE(run(stores->rate_limits().acquire("k", bucket(0.01, 2))).allowed);
    EXPECT_FALSE(run(stores->rate_limits().acquire("k", bucket(0.01, 2))).allowed);
    redis({"SCRIPT", "FLUSH"});
    EXPECT_TRUE(run(stores->budgets().reserve("b", 1, 5, 60s)).granted);
}

TEST_F(StoresRedis, KeysCarryTheConfiguredPrefix) {
    auto o = options();
    o.key_prefix = "tenant-a:";
    auto stores = connected_stores(o);
    run(stores->cache().put("k", "v", 60s));
    run(stores->budgets().reserve("k", 1, 5, 60s));
    run(stores->rate_limits().acquire("k", bucket(1, 5)));
    auto keys = redis({"KEYS", "*"});
    ASSERT_TRUE(keys.is_array());
    std::vector<std::string> names;
    for (const auto& k : keys.elements) names.push_back(k.text);
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names, (std::vector<std::string>{"tenant-a:budget:k", "tenant-a:cache:k", "tenant-a:rate:k"}));
}

class StoresRedisAuth : public StoresRedis {
protected:
    void SetUp() override {
        if (!test_support::redis_server_installed()) GTEST_SKIP() << "/usr/bin/redis-server is not installed";
        server = std::make_unique<RedisServerProcess>(std::vector<std::string>{"--requirepass", "p@ss/word"});
        server->start();
    }
    std::string url_with(const std::string& password, int db) const {
        return "redis://:" + password + "@127.0.0.1:" + std::to_string(server->port()) + "/" + std::to_string(db);
    }
};

TEST_F(StoresRedisAuth, AuthenticatesAndSelectsTheDatabaseFromTheUrl) {
    auto o = options();
    o.url = url_with("p%40ss%2Fword", 2);
    auto stores = connected_stores(o);
    run(stores->cache().put("k", "in db 2", 60s));

    RedisClient raw(exec, RedisClient::Options{.endpoint = parse_redis_url(o.url),
                                               .command_timeout = 2000ms,
                                               .reconnect_interval = 100ms});
    raw.start();
    ASSERT_TRUE(run_until(io, [&] { return raw.ready(); }));
    EXPECT_EQ(run(raw.command({"GET", "toolport:cache:k"})).text, "in db 2");
    EXPECT_TRUE(run(raw.command({"SELECT", "0"})).text == "OK");
    EXPECT_TRUE(run(raw.command({"GET", "toolport:cache:k"})).is_nil());
}

TEST_F(StoresRedisAuth, AWrongPasswordNeverConnectsAndTheStoresStayOnTheirFallbacks) {
    auto o = options();
    o.url = url_with("wrong", 0);
    auto stores = make_stores(o, exec);
    run_for(io, 400ms);  // several refused handshakes
    EXPECT_EQ(stores->state(), StoreState::degraded);
    run(stores->cache().put("k", "v", 60s));
    EXPECT_EQ(run(stores->cache().get("k")), "v");
}

TEST_F(StoresRedis, TheClientIsBinarySafeAndRefusesCommandsWhileDown) {
    RedisClient client(exec, RedisClient::Options{.endpoint = parse_redis_url(server->url()),
                                                  .command_timeout = 2000ms,
                                                  .reconnect_interval = 100ms});
    EXPECT_THROW(run(client.command({"PING"})), RedisUnavailable);  // not started yet
    client.start();
    ASSERT_TRUE(run_until(io, [&] { return client.ready(); }));
    EXPECT_EQ(client.connections(), 1u);
    const std::string key("key with spaces\r\n\0and a NUL", 27);
    const std::string value("$5\r\nfake\r\n*2\0", 13);
    EXPECT_EQ(run(client.command({"SET", key, value})).text, "OK");
    auto back = run(client.command({"GET", key}));
    ASSERT_TRUE(back.is_string());
    EXPECT_EQ(back.text, value);
    auto error = run(client.command({"NOSUCHCOMMAND", "x"}));
    EXPECT_TRUE(error.is_error());
    EXPECT_TRUE(run(client.command({"PING"})).text == "PONG");  // an error reply breaks nothing

    server->kill();
    ASSERT_TRUE(run_until(io, [&] { return !client.ready(); }));
    EXPECT_THROW(run(client.command({"PING"})), RedisUnavailable);
    server->start();
    ASSERT_TRUE(run_until(io, [&] { return client.ready(); }));
    EXPECT_EQ(client.connections(), 2u);
}

TEST_F(StoresRedis, ACommandInFlightWhenRedisDiesFailsInsteadOfHanging) {
    RedisClient client(exec, RedisClient::Options{.endpoint = parse_redis_url(server->url()),
                                                  .command_timeout = 5000ms,
                                                  .reconnect_interval = 100ms});
    client.start();
    ASSERT_TRUE(run_until(io, [&] { return client.ready(); }));
    std::optional<std::exception_ptr> outcome;
    // BLPOP blocks in Redis until the server dies under it.
    spawn(client.command({"BLPOP", "never-filled", "0"}),
          [&](std::optional<RedisReply>, std::exception_ptr error) { outcome = error; });
    run_for(io, 50ms);
    EXPECT_FALSE(outcome.has_value());
    server->kill();
    ASSERT_TRUE(run_until(io, [&] { return outcome.has_value(); }));
    ASSERT_TRUE(*outcome);
    EXPECT_THROW(std::rethrow_exception(*outcome), RedisUnavailable);
}

}  // namespace
