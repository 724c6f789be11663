#include "stores/local_budgets.hpp"

#include <algorithm>
#include <limits>

#include "stores/argument_checks.hpp"

namespace toolport::stores {

LocalBudgets::LocalBudgets(Executor& executor) : executor_(executor) {}

namespace {
// Sums in 128 bits, then cut into [0, int64 max]: huge figures saturate instead of wrapping.
std::int64_t saturate(__int128 value) {
    if (value < 0) return 0;
    constexpr auto top = std::numeric_limits<std::int64_t>::max();
    return value > top ? top : static_cast<std::int64_t>(value);
}
}  // namespace

// The coroutines take copies, so a task may outlive the caller's arguments.
Task<BudgetReservation> LocalBudgets::reserve(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                              std::chrono::milliseconds ttl) {
    return reserve_copy(scope, amount, limit, ttl);
}

Task<std::int64_t> LocalBudgets::settle(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                                        std::chrono::milliseconds ttl) {
    return settle_copy(scope, reserved, actual, ttl);
}

Task<std::int64_t> LocalBudgets::used(const std::string& scope) { return used_copy(scope); }

Task<BudgetReservation> LocalBudgets::reserve_copy(std::string scope, std::int64_t amount, std::int64_t limit,
                                                   std::chrono::milliseconds ttl) {
    co_return reserve_now(scope, amount, limit, ttl);
}

Task<std::int64_t> LocalBudgets::settle_copy(std::string scope, std::int64_t reserved, std::int64_t actual,
                                             std::chrono::milliseconds ttl) {
    co_return settle_now(scope, reserved, actual, ttl);
}

Task<std::int64_t> LocalBudgets::used_copy(std::string scope) { co_return used_now(scope); }

BudgetReservation LocalBudgets::reserve_now(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                            std::chrono::milliseconds ttl) {
    check_reservation(amount, ttl);
    const auto now = executor_.now();
    sweep_if_due(now);
    Scope* entry = live(scope, now);
    const std::int64_t used = entry ? entry->used : 0;
    if (static_cast<__int128>(used) + amount > limit) return BudgetReservation{false, used, limit};
    if (!entry) entry = &scopes_[scope];
    entry->used = used + amount;  // cannot overflow: it is <= limit
    entry->expires_at = now + clamp_duration(ttl);
    return BudgetReservation{true, entry->used, limit};
}

std::int64_t LocalBudgets::settle_now(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                                      std::chrono::milliseconds ttl) {
    check_settlement(reserved, actual, ttl);
    const auto now = executor_.now();
    sweep_if_due(now);
    Scope* entry = live(scope, now);
    if (!entry) entry = &scopes_[scope];
    entry->used = saturate(static_cast<__int128>(entry->used) + actual - reserved);
    entry->expires_at = now + clamp_duration(ttl);
    return entry->used;
}

std::int64_t LocalBudgets::used_now(const std::string& scope) {
    Scope* entry = live(scope, executor_.now());
    return entry ? entry->used : 0;
}

LocalBudgets::Scope* LocalBudgets::live(const std::string& scope, TimePoint now) {
    auto found = scopes_.find(scope);
    if (found == scopes_.end()) return nullptr;
    if (found->second.expires_at <= now) {
        scopes_.erase(found);
        return nullptr;
    }
    return &found->second;
}

// Amortised: a full pass every max(64, size) operations is O(1) per operation.
void LocalBudgets::sweep_if_due(TimePoint now) {
    if (++operations_since_sweep_ < std::max<std::size_t>(64, scopes_.size())) return;
    operations_since_sweep_ = 0;
    std::erase_if(scopes_, [now](const auto& entry) { return entry.second.expires_at <= now; });
}

}  // namespace toolport::stores
