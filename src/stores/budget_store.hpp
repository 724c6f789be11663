// BudgetStore: downstream API calls counted per user request (seed 002), shared by every
// call in that request's scope (trace id, else session, else the one call). Reserve before
// the call and settle after, so parallel calls cannot overspend between a check and a
// record. Local and Redis (atomic Lua) implementations.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "async/task.hpp"
#include "stores/store_health.hpp"

namespace toolport::stores {

struct BudgetReservation {
    bool granted = false;
    std::int64_t used = 0;  // the scope's total after this reservation (or now, if refused)
    std::int64_t limit = 0;
};

class BudgetStore {
public:
    virtual ~BudgetStore() = default;
    virtual std::string_view backend() const = 0;
    // Adds `amount` to `scope`'s total if the total stays within `limit`; the scope
    // expires `ttl` after its last change.
    virtual Task<BudgetReservation> reserve(const std::string& scope, std::int64_t amount, std::int64_t limit,
                                            std::chrono::milliseconds ttl) = 0;
    // Replaces a reservation with the real figure (may be more or less); returns the new total.
    virtual Task<std::int64_t> settle(const std::string& scope, std::int64_t reserved, std::int64_t actual,
                                      std::chrono::milliseconds ttl) = 0;
    // The scope's total now (0 when unknown).
    virtual Task<std::int64_t> used(const std::string& scope) = 0;
    virtual StoreState state() const = 0;
};

}  // namespace toolport::stores
