// Executor: the event loop as seen by code that must not include Asio.
//
// Toolport runs its protocol engine on one event-loop thread; everything that touches
// sessions runs there, so the engine needs no locks. Transports own the real loop
// (asio::io_context, see asio_executor.cpp); tests use ManualExecutor with a fake clock.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "async/completion.hpp"
#include "async/task.hpp"

namespace toolport {

class CancelToken;

class Executor {
public:
    using Clock = std::chrono::steady_clock;
    virtual ~Executor() = default;

    // Runs `fn` later on the loop thread (never inline).
    virtual void post(std::function<void()> fn) = 0;

    // Runs `fn` after `delay` unless the returned cancel function is called first.
    virtual std::function<void()> schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) = 0;

    virtual Clock::time_point now() const { return Clock::now(); }

    // Whether post may be called from another thread (a worker handing back its result).
    // A test's manual loop says no: work meant for a worker then runs inline.
    virtual bool posts_from_any_thread() const { return true; }

    // Awaitable pause. Throws OperationCancelled if `token` fires first.
    Task<void> sleep(std::chrono::milliseconds delay, CancelToken* token = nullptr);
};

}  // namespace toolport
