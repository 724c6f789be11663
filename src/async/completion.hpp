// Completion<T>: a one-shot value (or error) that a coroutine can await and that plain
// callback code can fulfil. This is how callback-style events (a client's response to a
// server-to-client request, a timer, a socket read in a transport) wake a Task.
//
// Completions are shared (copyable handles); fulfilling twice is ignored, so racing
// sources (a response versus a cancellation) need no extra coordination.
#pragma once

#include <coroutine>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include "async/control_signal.hpp"

namespace toolport {

// Thrown into an awaiting coroutine when the work it waits for is cancelled. A control
// signal, not a std::exception (see control_signal.hpp).
struct OperationCancelled : ControlSignal {
    OperationCancelled() : ControlSignal("operation cancelled") {}
    explicit OperationCancelled(const std::string& why) : ControlSignal(why) {}
};

template <typename T>
class Completion {
    struct State {
        std::optional<T> value;
        std::exception_ptr error;
        std::coroutine_handle<> waiter;
        bool done = false;
    };

public:
    Completion() : state_(std::make_shared<State>()) {}

    bool done() const noexcept { return state_->done; }

    void set_value(T value) {
        if (state_->done) return;
        state_->value.emplace(std::move(value));
        finish();
    }
    void set_error(std::exception_ptr error) {
        if (state_->done) return;
        state_->error = std::move(error);
        finish();
    }

    // Awaitable interface. Resumes the waiter inline from set_value/set_error: callers that
    // fulfil from deep inside other code should post first if re-entrancy matters.
    bool await_ready() const noexcept { return state_->done; }
    void await_suspend(std::coroutine_handle<> h) noexcept { state_->waiter = h; }
    T await_resume() {
        if (state_->error) std::rethrow_exception(state_->error);
        return std::move(*state_->value);
    }

private:
    void finish() {
        state_->done = true;
        // Keep the state alive while the resumed coroutine runs and maybe drops its copy.
        auto keep = state_;
        if (auto w = std::exchange(keep->waiter, {})) w.resume();
    }

    std::shared_ptr<State> state_;
};

}  // namespace toolport
