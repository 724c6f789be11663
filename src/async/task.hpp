// Task<T>: a small lazy coroutine type used for every asynchronous handler in Toolport.
//
// Why our own instead of asio::awaitable: handlers (tools, resources, prompts, pipeline
// stages) are written all over the code base, and asio::awaitable would drag the whole of
// Asio into every one of those translation units. Task<T> is header-light; the few files
// that do network I/O bridge Asio completions into it through Completion<T>.
//
// Semantics: a Task does nothing until it is awaited (or started with spawn()). Awaiting
// resumes the awaiting coroutine when the task finishes (symmetric transfer, no recursion
// on the stack). Exceptions propagate to the awaiter.
#pragma once

#include <coroutine>
#include <exception>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "async/frame_pool.hpp"
#include "async/log_ids.hpp"

namespace toolport {

template <typename T>
class Task;

namespace detail {

// Frames come from the recycling pool (frame_pool.hpp): every call allocates a dozen.
struct TaskPromiseBase : PooledFrame {
    std::coroutine_handle<> continuation;
    std::exception_ptr error;
    // The request's ids, for log lines (log_ids.hpp): taken where the task is first awaited.
    LogIds log_ids;
    // What was current on the thread when the body last resumed, put back when it suspends:
    // a body resumed from inside another (a completion resolved, a task spawned) hands the
    // thread back with the other's ids.
    LogIds outer_ids;

    void enter() noexcept {
        outer_ids = detail::current_log_ids;
        detail::current_log_ids = log_ids;
    }

    // Every suspension and resumption of a Task's body passes here (await_transform).
    template <typename Awaiter>
    struct KeepingLogIds {
        Awaiter& inner;
        TaskPromiseBase& promise;
        bool await_ready() { return inner.await_ready(); }
        template <typename Promise>
        auto await_suspend(std::coroutine_handle<Promise> h) {
            // Read before: once suspended, the frame may be resumed and gone on another thread.
            const LogIds outer = promise.outer_ids;
            using Result = decltype(inner.await_suspend(h));
            if constexpr (std::is_void_v<Result>) {
                inner.await_suspend(h);
                detail::current_log_ids = outer;
            } else {
                // A handle (the awaited task, which makes its own current) or a bool.
                auto next = inner.await_suspend(h);
                detail::current_log_ids = outer;
                return next;
            }
        }
        decltype(auto) await_resume() {
            promise.enter();
            return inner.await_resume();
        }
    };
    template <typename Awaiter>
    KeepingLogIds<std::remove_reference_t<Awaiter>> await_transform(Awaiter&& awaiter) noexcept {
        return {awaiter, *this};
    }

    struct InitialAwaiter {
        TaskPromiseBase& promise;
        bool await_ready() noexcept { return false; }
        void await_suspend(std::coroutine_handle<>) noexcept {}
        void await_resume() noexcept { promise.enter(); }
    };
    InitialAwaiter initial_suspend() noexcept { return {*this}; }

    struct FinalAwaiter {
        bool await_ready() noexcept { return false; }
        template <typename Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> h) noexcept {
            detail::current_log_ids = h.promise().outer_ids;
            auto next = h.promise().continuation;
            return next ? next : std::noop_coroutine();
        }
        void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <typename T>
struct TaskPromise : TaskPromiseBase {
    std::optional<T> value;
    Task<T> get_return_object() noexcept;
    template <typename U>
    void return_value(U&& v) {
        value.emplace(std::forward<U>(v));
    }
};

template <>
struct TaskPromise<void> : TaskPromiseBase {
    Task<void> get_return_object() noexcept;
    void return_void() noexcept {}
};

}  // namespace detail

template <typename T = void>
class [[nodiscard]] Task {
public:
    using promise_type = detail::TaskPromise<T>;
    using Handle = std::coroutine_handle<promise_type>;

    Task() = default;
    explicit Task(Handle h) : handle_(h) {}
    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Task& operator=(Task&& other) noexcept {
        if (this != &other) {
            if (handle_) handle_.destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() {
        if (handle_) handle_.destroy();
    }

    bool await_ready() const noexcept { return !handle_ || handle_.done(); }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
        handle_.promise().continuation = awaiting;
        handle_.promise().log_ids = detail::current_log_ids;  // the awaiting body's
        return handle_;
    }
    T await_resume() {
        auto& p = handle_.promise();
        if (p.error) std::rethrow_exception(p.error);
        if constexpr (!std::is_void_v<T>) return std::move(*p.value);
    }

private:
    Handle handle_;
};

namespace detail {
template <typename T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
    return Task<T>{std::coroutine_handle<TaskPromise<T>>::from_promise(*this)};
}
inline Task<void> TaskPromise<void>::get_return_object() noexcept {
    return Task<void>{std::coroutine_handle<TaskPromise<void>>::from_promise(*this)};
}

// A fire-and-forget coroutine frame that frees itself when it ends.
struct Detached {
    struct promise_type : PooledFrame {
        Detached get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

template <typename T, typename OnDone>
Detached run_detached(Task<T> task, OnDone on_done) {
    std::exception_ptr error;
    if constexpr (std::is_void_v<T>) {
        try {
            co_await std::move(task);
        } catch (...) {
            error = std::current_exception();
        }
        on_done(error);
    } else {
        std::optional<T> value;
        try {
            value.emplace(co_await std::move(task));
        } catch (...) {
            error = std::current_exception();
        }
        on_done(std::move(value), error);
    }
}
}  // namespace detail

// Starts `task` now; `on_done(std::optional<T>, std::exception_ptr)` (or
// `on_done(std::exception_ptr)` for Task<void>) runs when it finishes.
template <typename T, typename OnDone>
void spawn(Task<T> task, OnDone on_done) {
    detail::run_detached(std::move(task), std::move(on_done));
}

}  // namespace toolport
