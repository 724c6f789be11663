// drive_on(io, task): runs a coroutine on a test's io_context until it finishes, for
// tests of code that does real network I/O on loopback (HTTP clients, token endpoints,
// authorization flows). Returns the task's value or rethrows its error; a task that goes
// quiet for 10 s fails the test instead of hanging it.
#pragma once

#include <chrono>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "async/task.hpp"

namespace toolport::test_support {

template <typename T>
T drive_on(boost::asio::io_context& io, Task<T> task) {
    // Shared with the completion callback: a task that never finishes must not write into
    // this (by then dead) stack frame later.
    struct Outcome {
        bool done = false;
        std::optional<T> value;
        std::exception_ptr error;
    };
    auto outcome = std::make_shared<Outcome>();
    spawn(std::move(task), [outcome](std::optional<T> value, std::exception_ptr error) {
        outcome->value = std::move(value);
        outcome->error = error;
        outcome->done = true;
    });
    io.restart();
    while (!outcome->done && io.run_one_for(std::chrono::seconds(10)) > 0) {}
    EXPECT_TRUE(outcome->done) << "the task did not finish";
    if (outcome->error) std::rethrow_exception(outcome->error);
    if (!outcome->value) throw std::runtime_error("the task did not finish");
    return std::move(*outcome->value);
}

}  // namespace toolport::test_support
