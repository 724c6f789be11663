// LocalBudgets on the fake clock: atomic check-and-add reservations, settle, expiry.
#include <gtest/gtest.h>

#include <limits>

#include "manual_executor.hpp"
#include "stores/local_budgets.hpp"
#include "stores_test_support.hpp"

using namespace toolport;
using namespace toolport::stores;
using namespace std::chrono_literals;
using test_support::finish_now;

namespace {

constexpr auto ttl = 60s;

class StoresLocalBudgets : public ::testing::Test {
protected:
    test_support::ManualExecutor exec;
    LocalBudgets budgets{exec};
};

TEST_F(StoresLocalBudgets, ReservesWhileTheTotalStaysWithinTheLimit) {
    auto first = finish_now(budgets.reserve("trace-1", 60, 100, ttl));
    EXPECT_TRUE(first.granted);
    EXPECT_EQ(first.used, 60);
    EXPECT_EQ(first.limit, 100);
    auto second = finish_now(budgets.reserve("trace-1", 40, 100, ttl));  // exactly at the limit
    EXPECT_TRUE(second.granted);
    EXPECT_EQ(second.used, 100);
    auto third = finish_now(budgets.reserve("trace-1", 1, 100, ttl));
    EXPECT_FALSE(third.granted);
    EXPECT_EQ(third.used, 100);  // refused: the total now, unchanged
    EXPECT_EQ(finish_now(budgets.used("trace-1")), 100);
    EXPECT_EQ(finish_now(budgets.used("unknown")), 0);
}

TEST_F(StoresLocalBudgets, TwentyInterleavedReservesOfTwelveAgainst120GrantExactlyTen) {
    std::vector<Task<BudgetReservation>> tasks;
    for (int i = 0; i < 20; ++i) tasks.push_back(budgets.reserve("session-9", 12, 120, ttl));
    int granted = 0;
    std::vector<std::int64_t> totals;
    for (auto& task : tasks) {
        auto r = finish_now(std::move(task));
        if (r.granted) {
            ++granted;
            totals.push_back(r.used);
        }
        EXPECT_LE(r.used, 120);
    }
    EXPECT_EQ(granted, 10);
    EXPECT_EQ(totals.back(), 120);
    EXPECT_EQ(finish_now(budgets.used("session-9")), 120);
}

TEST_F(StoresLocalBudgets, SettleReplacesTheReservationWithTheRealFigure) {
    finish_now(budgets.reserve("s", 12, 120, ttl));
    EXPECT_EQ(finish_now(budgets.settle("s", 12, 5, ttl)), 5);  // fewer calls than reserved
    EXPECT_EQ(finish_now(budgets.used("s")), 5);
    finish_now(budgets.reserve("s", 10, 120, ttl));
    EXPECT_EQ(finish_now(budgets.settle("s", 10, 30, ttl)), 35);  // more than reserved
    // Settle may take a scope over its limit (the calls happened); reserve then refuses.
    EXPECT_EQ(finish_now(budgets.settle("s", 0, 100, ttl)), 135);
    EXPECT_FALSE(finish_now(budgets.reserve("s", 0, 120, ttl)).granted);
}

TEST_F(StoresLocalBudgets, SettleNeverGoesBelowZero) {
    finish_now(budgets.reserve("s", 3, 10, ttl));
    EXPECT_EQ(finish_now(budgets.settle("s", 50, 0, ttl)), 0);
    EXPECT_EQ(finish_now(budgets.settle("fresh", 7, 2, ttl)), 0);
}

TEST_F(StoresLocalBudgets, AScopeExpiresTtlAfterItsLastChange) {
    finish_now(budgets.reserve("s", 10, 100, 1000ms));
    exec.advance(600ms);
    finish_now(budgets.settle("s", 10, 8, 1000ms));  // a change: the ttl restarts
    exec.advance(999ms);
    EXPECT_EQ(finish_now(budgets.used("s")), 8);
    exec.advance(1ms);
    EXPECT_EQ(finish_now(budgets.used("s")), 0);
    EXPECT_TRUE(finish_now(budgets.reserve("s", 100, 100, 1000ms)).granted);  // a fresh budget
}

TEST_F(StoresLocalBudgets, ARefusedReservationIsNoChangeAndDoesNotExtendTheScope) {
    finish_now(budgets.reserve("s", 10, 10, 1000ms));
    exec.advance(900ms);
    EXPECT_FALSE(finish_now(budgets.reserve("s", 1, 10, 1000ms)).granted);
    exec.advance(100ms);
    EXPECT_EQ(finish_now(budgets.used("s")), 0);
}

TEST_F(StoresLocalBudgets, ExpiredScopesAreSweptAway) {
    for (int i = 0; i < 300; ++i) finish_now(budgets.reserve("scope" + std::to_string(i), 1, 10, 100ms));
    EXPECT_EQ(budgets.tracked_scopes(), 300u);
    exec.advance(100ms);
    for (int i = 0; i < 300; ++i) finish_now(budgets.reserve("live", 0, 10, 100ms));
    EXPECT_EQ(budgets.tracked_scopes(), 1u);
}

TEST_F(StoresLocalBudgets, ScopesAreIndependent) {
    finish_now(budgets.reserve("a", 10, 10, ttl));
    EXPECT_TRUE(finish_now(budgets.reserve("b", 10, 10, ttl)).granted);
    EXPECT_EQ(finish_now(budgets.used("a")), 10);
}

TEST_F(StoresLocalBudgets, HugeFiguresSaturateInsteadOfWrapping) {
    constexpr auto top = std::numeric_limits<std::int64_t>::max();
    EXPECT_TRUE(finish_now(budgets.reserve("s", top, top, ttl)).granted);
    EXPECT_FALSE(finish_now(budgets.reserve("s", top, top, ttl)).granted);
    EXPECT_EQ(finish_now(budgets.settle("s", 0, top, ttl)), top);
}

TEST_F(StoresLocalBudgets, BadArgumentsAreRefusedWithAClearError) {
    EXPECT_THROW(finish_now(budgets.reserve("s", -1, 10, ttl)), std::invalid_argument);
    EXPECT_THROW(finish_now(budgets.reserve("s", 1, 10, 0ms)), std::invalid_argument);
    EXPECT_THROW(finish_now(budgets.settle("s", -1, 1, ttl)), std::invalid_argument);
    EXPECT_THROW(finish_now(budgets.settle("s", 1, -1, ttl)), std::invalid_argument);
    try {
        finish_now(budgets.reserve("s", -5, 10, ttl));
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("-5"), std::string::npos) << e.what();
    }
    EXPECT_EQ(finish_now(budgets.used("s")), 0);  // nothing was recorded
}

}  // namespace
