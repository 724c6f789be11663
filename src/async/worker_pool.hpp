// WorkerPool: a few threads for work that blocks (fsync, reading a directory tree, SQLite)
// so the event loop keeps serving while it runs. A coroutine awaits the result; it is
// resumed on the loop thread, never on a worker.
//
//   WorkerPool pool(2);
//   auto notes = co_await pool.run(executor, [path] { return read_notes(path); });
//
// A pool of 0 threads runs the work inline (unit tests on a ManualExecutor, whose post
// is not thread-safe). Exceptions thrown by the work are rethrown in the awaiting
// coroutine.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "async/completion.hpp"
#include "async/executor.hpp"
#include "async/task.hpp"

namespace toolport {

class WorkerPool {
public:
    explicit WorkerPool(std::size_t threads);
    ~WorkerPool();  // finishes queued work, then joins
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    std::size_t threads() const { return workers_.size(); }

    template <typename Fn>
    auto run(Executor& loop, Fn fn) -> Task<std::invoke_result_t<Fn&>> {
        using T = std::invoke_result_t<Fn&>;
        if (workers_.empty()) co_return fn();
        Completion<Slot<T>> done;
        submit([&loop, done, fn = std::move(fn)]() mutable {
            Slot<T> slot;
            try {
                if constexpr (std::is_void_v<T>) fn();
                else slot.value.emplace(fn());
            } catch (...) {
                slot.error = std::current_exception();
            }
            // Back to the loop thread before anyone is resumed.
            loop.post([done, slot = std::move(slot)]() mutable { done.set_value(std::move(slot)); });
        });
        Slot<T> slot = co_await done;
        if (slot.error) std::rethrow_exception(slot.error);
        if constexpr (!std::is_void_v<T>) co_return std::move(*slot.value);
    }

private:
    template <typename T>
    struct Slot {
        std::optional<std::conditional_t<std::is_void_v<T>, bool, T>> value;
        std::exception_ptr error;
    };

    void submit(std::function<void()> job);
    void work();

    std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<std::function<void()>> jobs_;
    bool stopping_ = false;
    std::vector<std::thread> workers_;
};

}  // namespace toolport
