// BlockingLoop: an event loop (an Asio io_context, hidden here) for a thread that waits on
// it: SyncClient runs it until each call is done. The only client file besides the
// network transports that includes Asio.
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <utility>

#include "async/task.hpp"

namespace toolport {
class AsioExecutor;
class Executor;
}  // namespace toolport

namespace toolport::client {

class BlockingLoop {
public:
    BlockingLoop();
    ~BlockingLoop();
    BlockingLoop(const BlockingLoop&) = delete;
    BlockingLoop& operator=(const BlockingLoop&) = delete;

    AsioExecutor& asio_executor();
    Executor& executor();

    // Runs handlers until `done` is true. Throws std::logic_error when nothing is left to
    // run before that (the awaited work can then never finish).
    void run_until(const bool& done);
    // Runs whatever is ready, without waiting.
    void poll();

    // Starts `task` and runs the loop until it is done: its value, or its exception
    // rethrown. The outcome is kept off the caller's stack: when run_until throws, the task
    // may still finish later and must not write into a frame that is gone.
    template <typename T>
    T run(Task<T> task) {
        struct Outcome {
            bool done = false;
            std::exception_ptr error;
            std::optional<T> value;
        };
        auto outcome = std::make_shared<Outcome>();
        spawn(std::move(task), [outcome](std::optional<T> value, std::exception_ptr error) {
            outcome->value = std::move(value);
            outcome->error = error;
            outcome->done = true;
        });
        run_until(outcome->done);
        if (outcome->error) std::rethrow_exception(outcome->error);
        return std::move(*outcome->value);
    }
    void run(Task<void> task) {
        auto outcome = std::make_shared<std::pair<bool, std::exception_ptr>>();
        spawn(std::move(task), [outcome](std::exception_ptr error) {
            outcome->second = error;
            outcome->first = true;
        });
        run_until(outcome->first);
        if (outcome->second) std::rethrow_exception(outcome->second);
    }

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toolport::client
