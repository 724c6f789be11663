// await_asio: runs an Asio coroutine (asio::awaitable<T>) on an io_context and awaits its
// value, or its exception, from a toolport Task: the bridge for a whole Asio coroutine.
// Each crossing co_spawns one (a dispatch, any_io_executor work and the awaitable thread's
// handlers, ~7,700 instructions): code on a hot path awaits single Asio operations from
// its Task with use_task (use_task.hpp) instead, as the HTTP client does. Only network code
// includes it (it pulls in Asio).
#pragma once

#include <exception>
#include <utility>

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>

#include "async/completion.hpp"
#include "async/task.hpp"

namespace toolport {

template <typename T>
Task<T> await_asio(boost::asio::io_context& io, boost::asio::awaitable<T> operation) {
    Completion<T> done;
    boost::asio::co_spawn(io, std::move(operation), [done](std::exception_ptr error, T value) mutable {
        if (error) done.set_error(error);
        else done.set_value(std::move(value));
    });
    co_return co_await done;
}

}  // namespace toolport
