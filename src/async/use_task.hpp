// use_task: an Asio completion token for code that runs in a toolport Task. Inside a Task,
//
//   auto [ec, n] = co_await net::async_write(socket, buffers, use_task);
//
// starts the operation with a completion handler that resumes the Task itself, and gives
// the handler's arguments as a tuple (as asio::as_tuple does: errors are values, never
// thrown). A few Beast functions still declare their result the C++11 way and take no
// token but a handler; for those, resume_with<Args...>(start) calls start(handler) when the
// Task suspends:
//
//   auto [ec] = co_await resume_with<beast::error_code>([&](auto handler) {
//       stream.async_handshake(ssl::stream_base::client, std::move(handler));
//   });
//
// Only network code includes it (it pulls in Asio).
//
// Why not an asio::awaitable crossed over with await_asio: every crossing co_spawns an Asio
// coroutine, and the co_spawn, its dispatch through any_io_executor and the awaitable
// thread's handlers cost some 7,700 instructions per crossing, more than the reads and
// writes they carry (callgrind, a gateway's call to its HTTP upstream). Here an operation
// costs its handler and nothing else; the Task's frame comes from the frame pool.
//
// Like any Asio handler, the resumption runs on a thread that runs the I/O object's
// io_context, never inside the call that starts the operation. The Task must not be
// destroyed while it waits (Tasks never are: the awaiting coroutine owns them); if the
// io_context is destroyed with the operation pending, the handler is dropped and the Task
// is never resumed, as a Completion nobody fulfils.
#pragma once

#include <coroutine>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/asio/async_result.hpp>

namespace toolport {

struct UseTask {};
inline constexpr UseTask use_task{};

namespace detail {

// The completion handler: stores the results in the awaiter (in the waiting frame) and
// resumes the frame.
template <typename... Results>
struct TaskResumer {
    std::optional<std::tuple<Results...>>* out;
    std::coroutine_handle<> waiter;

    template <typename... Args>
    void operator()(Args&&... args) {
        out->emplace(std::forward<Args>(args)...);
        waiter.resume();
    }
};

// What `co_await operation(..., use_task)` awaits: the operation's initiation and its
// arguments (decay-copied, as Asio's deferred and use_awaitable keep them), started when
// the Task suspends.
template <typename Initiation, typename ResultTuple, typename... InitArgs>
class AsioOperation;

template <typename Initiation, typename... Results, typename... InitArgs>
class AsioOperation<Initiation, std::tuple<Results...>, InitArgs...> {
public:
    template <typename I, typename... A>
    explicit AsioOperation(I&& initiation, A&&... args)
        : initiation_(std::forward<I>(initiation)), args_(std::forward<A>(args)...) {}

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> waiter) {
        // Nothing of this awaiter is touched after the initiation: the handler may run (and
        // the frame move on) on another thread as soon as the operation is started.
        std::apply(
            [this, waiter](auto&... args) {
                std::move(initiation_)(TaskResumer<Results...>{&result_, waiter}, std::move(args)...);
            },
            args_);
    }
    std::tuple<Results...> await_resume() { return std::move(*result_); }

private:
    Initiation initiation_;
    std::tuple<InitArgs...> args_;
    std::optional<std::tuple<Results...>> result_;
};

// resume_with's awaiter: `start(handler)` when the Task suspends.
template <typename Start, typename... Results>
class HandlerCall {
public:
    explicit HandlerCall(Start start) : start_(std::move(start)) {}

    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> waiter) { start_(TaskResumer<Results...>{&result_, waiter}); }
    std::tuple<Results...> await_resume() { return std::move(*result_); }

private:
    Start start_;
    std::optional<std::tuple<Results...>> result_;
};

}  // namespace detail

template <typename... Results, typename Start>
detail::HandlerCall<Start, Results...> resume_with(Start start) {
    return detail::HandlerCall<Start, Results...>(std::move(start));
}

}  // namespace toolport

namespace boost::asio {

template <typename R, typename... Args>
class async_result<toolport::UseTask, R(Args...)> {
public:
    template <typename Initiation, typename... InitArgs>
    static auto initiate(Initiation&& initiation, toolport::UseTask, InitArgs&&... args) {
        return toolport::detail::AsioOperation<std::decay_t<Initiation>, std::tuple<std::decay_t<Args>...>,
                                               std::decay_t<InitArgs>...>(std::forward<Initiation>(initiation),
                                                                          std::forward<InitArgs>(args)...);
    }
};

}  // namespace boost::asio
