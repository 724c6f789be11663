// CancelToken: cooperative cancellation for one unit of work (a request, a tool call).
//
// Fired by notifications/cancelled, by a closed stream in the stateless revision, by a
// deadline, or by session end. Waiters register callbacks; firing runs them once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

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
        callbacks_.emplace(id, std::move(cb));
        return id;
    }
    void remove(CallbackId id) { callbacks_.erase(id); }

private:
    bool cancelled_ = false;
    std::string reason_;
    CallbackId next_id_ = 0;
    std::map<CallbackId, std::function<void()>> callbacks_;
};

}  // namespace toolport
