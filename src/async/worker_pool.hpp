// WorkerPool: a few threads for work that blocks (fsync, reading a directory tree, SQLite)
// so the event loop keeps serving while it runs. A coroutine awaits the result; it is
// resumed on the loop thread, never on a worker.
//
//   WorkerPool pool(2);
//   auto notes = co_await pool.run(executor, ctx.cancel_token(), [path] { return read_notes(path); });
//
// A pool of 0 threads runs the work inline (unit tests on a ManualExecutor, whose post
// is not thread-safe). Exceptions thrown by the work are rethrown in the awaiting
// coroutine.
//
// Work can get stuck in a system call no one can interrupt (a read of a FIFO, a lock
// another process holds, a hung network filesystem). With a cancel token the call does
// not wait for it: when the token fires (the call's deadline, the client gone) the awaiting
// coroutine gets OperationCancelled at once, the work is abandoned (its result, if it ever
// comes, is dropped), and while it stays stuck a spare thread stands in for its worker, so
// the pool keeps its number of free threads (at most `max_spares` spares at a time; a
// thread retires when its stuck work ends and it is no longer needed). The work must
// therefore own what it uses (capture by value) or use only what outlives the pool.
//
// Threads are detached and share the pool's state, so destroying the pool never waits for
// a stuck thread: it lets queued work finish and waits for busy threads at most
// `shutdown_grace`, then leaves the rest to end with the process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "async/executor.hpp"
#include "async/task.hpp"

namespace toolport {

class WorkerPool {
public:
    static constexpr std::size_t kDefaultMaxSpares = 8;
    static constexpr std::chrono::milliseconds kDefaultShutdownGrace{1500};

    explicit WorkerPool(std::size_t threads, std::size_t max_spares = kDefaultMaxSpares,
                        std::chrono::milliseconds shutdown_grace = kDefaultShutdownGrace);
    ~WorkerPool();
    WorkerPool(const WorkerPool&) = delete;
    WorkerPool& operator=(const WorkerPool&) = delete;

    // The threads wanted (the pool's size), and those alive now (spares and threads still
    // stuck in abandoned work included).
    std::size_t threads() const { return size_; }
    std::size_t live_threads() const;
    // Threads running work whose caller gave up on it.
    std::size_t stuck_threads() const;

    // Runs `fn` on a worker; the caller waits however long it takes.
    template <typename Fn>
    auto run(Executor& loop, Fn fn) -> Task<std::invoke_result_t<Fn&>> {
        return run_impl(loop, nullptr, std::move(fn));
    }
    // Runs `fn` on a worker; throws OperationCancelled as soon as `cancel` fires, whether
    // or not the work has ended (see above).
    template <typename Fn>
    auto run(Executor& loop, CancelToken& cancel, Fn fn) -> Task<std::invoke_result_t<Fn&>> {
        return run_impl(loop, &cancel, std::move(fn));
    }

private:
    template <typename T>
    struct Slot {
        std::optional<std::conditional_t<std::is_void_v<T>, bool, T>> value;
        std::exception_ptr error;
    };

    struct Job {
        // Runs the work and returns what hands its result to the loop; the pool calls that
        // only while it exists (the loop may be gone after it).
        std::function<std::function<void()>()> work;
        enum class State { queued, running, finished } state = State::queued;
        bool abandoned = false;
    };
    struct Shared;

    template <typename Fn>
    auto run_impl(Executor& loop, CancelToken* cancel, Fn fn) -> Task<std::invoke_result_t<Fn&>> {
        using T = std::invoke_result_t<Fn&>;
        if (size_ == 0) co_return fn();
        if (cancel && cancel->cancelled()) throw OperationCancelled(cancel->reason());
        Completion<Slot<T>> done;
        auto job = std::make_shared<Job>();
        job->work = [&loop, done, fn = std::move(fn)]() mutable -> std::function<void()> {
            Slot<T> slot;
            try {
                if constexpr (std::is_void_v<T>) fn();
                else slot.value.emplace(fn());
            } catch (...) {
                slot.error = std::current_exception();
            }
            // Back to the loop thread before anyone is resumed.
            return [&loop, done, slot = std::make_shared<Slot<T>>(std::move(slot))]() mutable {
                loop.post([done, slot]() mutable { done.set_value(std::move(*slot)); });
            };
        };
        submit(job);
        CancelToken::CallbackId registration = 0;
        if (cancel) {
            // Holds the shared state, not the pool: the token may fire after the pool is gone.
            registration = cancel->on_cancel([shared = shared_, job, done, &loop, cancel]() mutable {
                abandon(shared, job);
                // Resume from the loop, not from inside whoever fired the token.
                loop.post([done, why = cancel->reason()]() mutable {
                    done.set_error(std::make_exception_ptr(OperationCancelled(why)));
                });
            });
        }
        std::optional<Slot<T>> slot;
        try {
            slot.emplace(co_await done);
        } catch (...) {
            if (cancel) cancel->remove(registration);
            throw;
        }
        if (cancel) cancel->remove(registration);
        if (slot->error) std::rethrow_exception(slot->error);
        if constexpr (!std::is_void_v<T>) co_return std::move(*slot->value);
    }

    void submit(const std::shared_ptr<Job>& job);
    // The caller gave up on `job`: dropped if still queued; if running, its thread counts
    // as stuck and a spare may start.
    static void abandon(const std::shared_ptr<Shared>& shared, const std::shared_ptr<Job>& job);

    std::size_t size_;
    std::chrono::milliseconds shutdown_grace_;
    std::shared_ptr<Shared> shared_;
};

}  // namespace toolport
