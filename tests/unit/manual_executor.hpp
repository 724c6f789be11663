// ManualExecutor: a deterministic event loop for tests. Nothing runs until the test calls
// run() or advance(); timers fire in virtual time.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>

#include "async/executor.hpp"

namespace toolport::test_support {

class ManualExecutor final : public Executor {
public:
    void post(std::function<void()> fn) override { queue_.push_back(std::move(fn)); }

    std::function<void()> schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) override {
        auto alive = std::make_shared<bool>(true);
        timers_.emplace(now_ + delay, Timer{std::move(fn), alive});
        return [alive]() { *alive = false; };
    }

    Clock::time_point now() const override { return Clock::time_point(now_); }
    bool posts_from_any_thread() const override { return false; }

    // Runs posted work until nothing is left (timers excluded).
    void run() {
        while (!queue_.empty()) {
            auto fn = std::move(queue_.front());
            queue_.pop_front();
            fn();
        }
    }

    // Moves virtual time forward, firing due timers in order, running posted work between.
    void advance(std::chrono::milliseconds by) {
        auto until = now_ + by;
        run();
        while (!timers_.empty() && timers_.begin()->first <= until) {
            auto it = timers_.begin();
            now_ = it->first;
            Timer t = std::move(it->second);
            timers_.erase(it);
            if (*t.alive) t.fn();
            run();
        }
        now_ = until;
    }

    std::size_t pending_timers() const {
        std::size_t n = 0;
        for (const auto& [at, t] : timers_) n += *t.alive ? 1 : 0;
        return n;
    }

private:
    struct Timer {
        std::function<void()> fn;
        std::shared_ptr<bool> alive;
    };
    std::chrono::steady_clock::duration now_{};
    std::deque<std::function<void()>> queue_;
    std::multimap<std::chrono::steady_clock::duration, Timer> timers_;
};

}  // namespace toolport::test_support
