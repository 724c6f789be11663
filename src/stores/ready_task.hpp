// run_now(compute): does synchronous store work at the call and hands back a Task that
// delivers its result (or its exception) at the co_await, as a real asynchronous store
// would. Doing it at the call means reference arguments are read while surely alive.
#pragma once

#include <exception>
#include <optional>
#include <type_traits>
#include <utility>

#include "async/task.hpp"

namespace toolport::stores {

namespace detail {
template <typename T>
Task<T> settled(std::optional<T> value, std::exception_ptr error) {
    if (error) std::rethrow_exception(error);
    co_return std::move(*value);
}
inline Task<void> settled_void(std::exception_ptr error) {
    if (error) std::rethrow_exception(error);
    co_return;
}
}  // namespace detail

template <typename Compute>
auto run_now(Compute&& compute) -> Task<std::invoke_result_t<Compute>> {
    using T = std::invoke_result_t<Compute>;
    std::exception_ptr error;
    if constexpr (std::is_void_v<T>) {
        try {
            compute();
        } catch (...) {
            error = std::current_exception();
        }
        return detail::settled_void(error);
    } else {
        std::optional<T> value;
        try {
            value.emplace(compute());
        } catch (...) {
            error = std::current_exception();
        }
        return detail::settled<T>(std::move(value), error);
    }
}

}  // namespace toolport::stores
