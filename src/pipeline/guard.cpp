#include "pipeline/guard.hpp"

#include "async/executor.hpp"

namespace toolport::pipeline {

std::string_view to_string(GuardPhase phase) { return phase == GuardPhase::before ? "before" : "after"; }

Json GuardVerdict::to_json() const {
    Json j = {{"allow", allow}};
    if (!reason.empty()) j["reason"] = reason;
    if (!suggestion.empty()) j["suggestion"] = suggestion;
    if (replacement) j["replacement"] = *replacement;
    return j;
}

GuardVerdict GuardVerdict::from_json(const Json& json) {
    GuardVerdict v;
    v.allow = json.at("allow").get<bool>();
    v.reason = json.value("reason", std::string());
    v.suggestion = json.value("suggestion", std::string());
    if (auto it = json.find("replacement"); it != json.end()) v.replacement = *it;
    return v;
}

Task<bool> GuardLimiter::acquire(std::chrono::milliseconds wait) {
    if (in_use_ < limit_) {
        ++in_use_;
        co_return true;
    }
    if (wait.count() <= 0) co_return false;
    auto waiter = std::make_shared<Waiter>();
    waiters_.push_back(waiter);
    // The timer holds the waiter, not the limiter's queue entry: release() skips and drops
    // a waiter whose time ran out.
    waiter->cancel_timer = executor_.schedule_after(wait, [waiter] { waiter->granted.set_value(false); });
    Completion<bool> granted = waiter->granted;
    co_return co_await granted;
}

void GuardLimiter::release() {
    // The slot goes straight to the first waiter still waiting (in_use_ unchanged).
    while (!waiters_.empty()) {
        auto waiter = std::move(waiters_.front());
        waiters_.pop_front();
        if (waiter->granted.done()) continue;
        if (waiter->cancel_timer) waiter->cancel_timer();
        waiter->granted.set_value(true);
        return;
    }
    if (in_use_ > 0) --in_use_;
}

}  // namespace toolport::pipeline
