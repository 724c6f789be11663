// LocalRateLimits on the fake clock: minimum spacing (wait, max_wait, retry_after), the
// token bucket, both in one decision, refused calls taking nothing, idle keys forgotten.
#include <gtest/gtest.h>

#include <cmath>

#include "manual_executor.hpp"
#include "stores/local_rate_limits.hpp"
#include "stores_test_support.hpp"

using namespace toolport;
using namespace toolport::stores;
using namespace std::chrono_literals;
using test_support::finish_now;

namespace {

RateLimitRule spacing(std::chrono::milliseconds min_spacing, std::chrono::milliseconds max_wait) {
    RateLimitRule rule;
    rule.min_spacing = min_spacing;
    rule.max_wait = max_wait;
    return rule;
}

RateLimitRule bucket(double rate, double burst) {
    RateLimitRule rule;
    rule.rate = rate;
    rule.burst = burst;
    return rule;
}

class StoresLocalRateLimits : public ::testing::Test {
protected:
    RateDecision acquire(const std::string& key, const RateLimitRule& rule) {
        return finish_now(limits.acquire(key, rule));
    }
    test_support::ManualExecutor exec;
    LocalRateLimits limits{exec};
};

TEST_F(StoresLocalRateLimits, EarlyCallsAreGivenTheirSlotsAsWaits) {
    const auto rule = spacing(100ms, 1000ms);
    auto first = acquire("svc:a", rule);
    EXPECT_TRUE(first.allowed);
    EXPECT_EQ(first.wait, 0ms);
    EXPECT_EQ(acquire("svc:a", rule).wait, 100ms);
    EXPECT_EQ(acquire("svc:a", rule).wait, 200ms);  // each allowed call took its slot
    exec.advance(150ms);
    auto later = acquire("svc:a", rule);
    EXPECT_TRUE(later.allowed);
    EXPECT_EQ(later.wait, 150ms);  // slot at 300 ms, now 150 ms
    exec.advance(1000ms);
    EXPECT_EQ(acquire("svc:a", rule).wait, 0ms);  // all slots passed
}

TEST_F(StoresLocalRateLimits, ACallThatWouldWaitLongerThanMaxWaitIsRefusedAndTakesNoSlot) {
    const auto rule = spacing(100ms, 150ms);
    EXPECT_EQ(acquire("k", rule).wait, 0ms);
    EXPECT_EQ(acquire("k", rule).wait, 100ms);
    auto refused = acquire("k", rule);  // its slot would be 200 ms away
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 50ms);
    EXPECT_EQ(refused.wait, 0ms);
    exec.advance(50ms);
    auto retried = acquire("k", rule);  // the refused call did not move the next slot
    EXPECT_TRUE(retried.allowed);
    EXPECT_EQ(retried.wait, 150ms);
}

TEST_F(StoresLocalRateLimits, RetryAfterIsRoundedUpToWholeMilliseconds) {
    const auto rule = bucket(3, 1);  // a token every 333.3 ms
    EXPECT_TRUE(acquire("k", rule).allowed);
    auto refused = acquire("k", rule);
    EXPECT_EQ(refused.retry_after, 334ms);  // retrying after 333 ms would be early
    exec.advance(333ms);
    auto early = acquire("k", rule);
    EXPECT_FALSE(early.allowed);
    EXPECT_EQ(early.retry_after, 1ms);  // 0.3 ms to go, never "0"
    exec.advance(1ms);
    EXPECT_TRUE(acquire("k", rule).allowed);
}

TEST_F(StoresLocalRateLimits, TheBucketAllowsBurstThenRefillsAtTheRate) {
    const auto rule = bucket(2, 3);  // 2 tokens a second, 3 saved up
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(acquire("k", rule).allowed) << i;
    auto refused = acquire("k", rule);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 500ms);
    exec.advance(499ms);
    auto almost = acquire("k", rule);
    EXPECT_FALSE(almost.allowed);
    EXPECT_EQ(almost.retry_after, 1ms);
    exec.advance(1ms);
    EXPECT_TRUE(acquire("k", rule).allowed);
    EXPECT_FALSE(acquire("k", rule).allowed);
    exec.advance(10s);  // refills up to burst, not beyond
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(acquire("k", rule).allowed) << i;
    EXPECT_FALSE(acquire("k", rule).allowed);
}

TEST_F(StoresLocalRateLimits, ABurstBelowOneStillSavesOneToken) {
    const auto rule = bucket(1, 0);
    EXPECT_TRUE(acquire("k", rule).allowed);
    auto refused = acquire("k", rule);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 1000ms);
}

TEST_F(StoresLocalRateLimits, BothConditionsDecideTogetherAndARefusalTakesNothing) {
    RateLimitRule rule = spacing(100ms, 1000ms);
    rule.rate = 1;
    rule.burst = 2;
    EXPECT_EQ(acquire("k", rule).wait, 0ms);
    EXPECT_EQ(acquire("k", rule).wait, 100ms);
    auto refused = acquire("k", rule);  // the spacing would allow it (wait 200), the bucket is empty
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 1000ms);
    exec.advance(1000ms);
    auto next = acquire("k", rule);
    EXPECT_TRUE(next.allowed);
    EXPECT_EQ(next.wait, 0ms);  // the refused call took no slot (the last slot was at 100 ms)
}

TEST_F(StoresLocalRateLimits, WhenBothRefuseRetryAfterIsTheLaterOfTheTwo) {
    RateLimitRule rule = spacing(5000ms, 0ms);
    rule.rate = 1;
    rule.burst = 1;
    EXPECT_TRUE(acquire("k", rule).allowed);
    auto refused = acquire("k", rule);
    EXPECT_FALSE(refused.allowed);
    EXPECT_EQ(refused.retry_after, 5000ms);  // spacing 5 s beats the bucket's 1 s
    exec.advance(5000ms);
    EXPECT_TRUE(acquire("k", rule).allowed);
}

TEST_F(StoresLocalRateLimits, KeysAreIndependent) {
    const auto rule = bucket(1, 1);
    EXPECT_TRUE(acquire("svc:a", rule).allowed);
    EXPECT_FALSE(acquire("svc:a", rule).allowed);
    EXPECT_TRUE(acquire("svc:b", rule).allowed);
    EXPECT_TRUE(acquire("client:a", rule).allowed);
}

TEST_F(StoresLocalRateLimits, ARuleThatLimitsNothingAllowsEverythingAndKeepsNoState) {
    for (int i = 0; i < 100; ++i) {
        auto d = acquire("k" + std::to_string(i), RateLimitRule{});
        EXPECT_TRUE(d.allowed);
        EXPECT_EQ(d.wait, 0ms);
    }
    EXPECT_EQ(limits.tracked_keys(), 0u);
}

TEST_F(StoresLocalRateLimits, IdleKeysAreForgottenOnceTheirStateIsFreshAgain) {
    const auto rule = spacing(10ms, 1000ms);
    for (int i = 0; i < 200; ++i) acquire("key" + std::to_string(i), rule);
    EXPECT_EQ(limits.tracked_keys(), 200u);
    exec.advance(20ms);  // every slot has passed: the keys' state equals a fresh one
    const auto busy = bucket(1000, 1000);
    for (int i = 0; i < 200; ++i) acquire("busy", busy);  // enough decisions to trigger a sweep
    EXPECT_EQ(limits.tracked_keys(), 1u);
    // A forgotten key behaves exactly as before it was forgotten.
    EXPECT_EQ(acquire("key7", rule).wait, 0ms);
    EXPECT_EQ(acquire("key7", rule).wait, 10ms);
}

TEST_F(StoresLocalRateLimits, ABucketKeyIsKeptUntilItHasRefilled) {
    const auto rule = bucket(1, 2);
    acquire("k", rule);
    acquire("k", rule);
    exec.advance(1500ms);                     // one and a half tokens back: not fresh yet
    EXPECT_TRUE(acquire("k", rule).allowed);  // 1.5 -> 0.5 tokens
    EXPECT_FALSE(acquire("k", rule).allowed);
}

TEST_F(StoresLocalRateLimits, BadRulesAreRefusedWithAClearError) {
    RateLimitRule negative_spacing = spacing(-1ms, 0ms);
    EXPECT_THROW(acquire("k", negative_spacing), std::invalid_argument);
    RateLimitRule negative_rate = bucket(-1, 1);
    EXPECT_THROW(acquire("k", negative_rate), std::invalid_argument);
    RateLimitRule nan_burst = bucket(1, std::nan(""));
    try {
        acquire("k", nan_burst);
        FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("burst"), std::string::npos) << e.what();
    }
    // The error arrives at the co_await, like any store's.
    auto task = limits.acquire("k", negative_rate);
    EXPECT_THROW(finish_now(std::move(task)), std::invalid_argument);
}

TEST_F(StoresLocalRateLimits, ANearZeroRateDoesNotOverflowTheClock) {
    const auto rule = bucket(1e-300, 1);
    EXPECT_TRUE(acquire("k", rule).allowed);
    auto refused = acquire("k", rule);
    EXPECT_FALSE(refused.allowed);
    EXPECT_GT(refused.retry_after, 24h * 365);  // cut to a year
    EXPECT_LE(refused.retry_after, 24h * 366);
}

}  // namespace
