// LocalBudgets: budgets kept in this process (`store: memory`, and RedisBudgets' fallback
// while Redis is away).
//
// reserve is one check-and-add (granted only if used + amount <= limit), so calls that
// reserve in turn can never overspend together; settle replaces a reservation with the
// real figure (never below 0). A scope is forgotten `ttl` after its last change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "async/executor.hpp"
#include "stores/budget_store.hpp"

namespace toolport::stores {

class LocalBudgets final : public BudgetStore {
public:
    // `executor` supplies the clock (tests use a fake one).
    explicit LocalBudgets(Executor& executor);

    std::string_view backend() const override { return "memory"; }
    // reserve and settle throw std::invalid_argument for a negative figure or a ttl <= 0.
    Task<BudgetReservation> reserve(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                    std::chrono::milliseconds ttl) override;
    Task<std::int64_t> settle(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                              std::chrono::milliseconds ttl) override;
    Task<std::int64_t> used(const std::string& scope) override;
    StoreState state() const override { return StoreState::available; }

    BudgetReservation reserve_now(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                  std::chrono::milliseconds ttl);
    std::int64_t settle_now(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                            std::chrono::milliseconds ttl);
    std::int64_t used_now(const std::string& scope);
    std::size_t tracked_scopes() const { return scopes_.size(); }

private:
    using TimePoint = Executor::Clock::time_point;
    struct Scope {
        std::int64_t used = 0;
        TimePoint expires_at;
    };

    Task<BudgetReservation> reserve_copy(std::string scope, std::int64_t amount, std::int64_t limit,
                                         std::chrono::milliseconds ttl);
    Task<std::int64_t> settle_copy(std::string scope, std::int64_t reserved, std::int64_t actual,
                                   std::chrono::milliseconds ttl);
    Task<std::int64_t> used_copy(std::string scope);
    // The scope's live entry, or nullptr (an expired one is dropped on the way).
    Scope* live(const std::string& scope, TimePoint now);
    void sweep_if_due(TimePoint now);

    Executor& executor_;
    std::unordered_map<std::string, Scope> scopes_;
    std::size_t operations_since_sweep_ = 0;
};

}  // namespace toolport::stores
