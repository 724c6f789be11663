// await_asio: runs an Asio coroutine (asio::awaitable<T>) on an io_context and awaits its
// value, or its exception, from a toolport Task. This is the one bridge from the network
// code's Asio coroutines to the Task world; only network code includes it (it pulls in Asio).
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
