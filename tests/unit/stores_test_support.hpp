// Helper for the local store tests: finishing a Task that needs no event loop.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <optional>
#include <stdexcept>

#include "async/task.hpp"

namespace toolport::test_support {
// Internal linkage: clang 14 cannot build coroutine frames with inline (COMDAT) linkage
// under -fsanitize=function, which spawn() with a lambda from an inline function would make.
namespace {

// For tasks that complete without any event loop (the local stores).
template <typename T>
T finish_now(Task<T> task) {
    std::optional<T> value;
    std::exception_ptr error;
    bool done = false;
    spawn(std::move(task), [&](std::optional<T> v, std::exception_ptr e) {
        value = std::move(v);
        error = e;
        done = true;
    });
    if (!done) throw std::logic_error("the task did not complete synchronously");
    if (error) std::rethrow_exception(error);
    return std::move(*value);
}

inline void finish_now(Task<void> task) {
    std::exception_ptr error;
    bool done = false;
    spawn(std::move(task), [&](std::exception_ptr e) {
        error = e;
        done = true;
    });
    if (!done) throw std::logic_error("the task did not complete synchronously");
    if (error) std::rethrow_exception(error);
}

}  // namespace
}  // namespace toolport::test_support
