// CancelToken: cooperative cancellation for one unit of work (a request, a tool call).
//
// Fired by notifications/cancelled, by a closed stream in the stateless revision, by a
// deadline, or by session end. Waiters register callbacks; firing runs them once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace toolport {

class CancelToken {
public:
    using CallbackId = std::uint64_t;

    bool cancelled() const noexcept { return cancelled_; }
    const std::string& reason() const noexcept { return reason_; }

    void cancel(std::string reason = "cancelled") {
        if (cancelled_) return;
        cancelled_ = true;
        reason_ = std::move(reason);
        auto callbacks = std::move(callbacks_);
        callbacks_.clear();
        for (auto& [id, cb] : callbacks) cb();
    }

    // Runs `cb` when cancelled (immediately if already). Returns an id for remove().
    CallbackId on_cancel(std::function<void()> cb) {
        if (cancelled_) {
            cb();
            return 0;
        }
        auto id = ++next_id_;
        callbacks_.emplace_back(id, std::move(cb));
        return id;
    }
    void remove(CallbackId id) {
        // From the end: mostly the last one registered goes first (scopes end in reverse).
        for (auto it = callbacks_.end(); it != callbacks_.begin();) {
            if ((--it)->first == id) {
                callbacks_.erase(it);
                return;
            }
        }
    }

private:
    bool cancelled_ = false;
    std::string reason_;
    CallbackId next_id_ = 0;
    // In registration (id) order, as cancel() runs them. A vector, not a map: a token holds
    // a few callbacks at a time, and a map's node and rebalancing per registration cost
    // more than a scan of them.
    std::vector<std::pair<CallbackId, std::function<void()>>> callbacks_;
};

}  // namespace toolport
