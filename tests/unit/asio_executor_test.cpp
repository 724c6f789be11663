// AsioExecutor::schedule_after: what the loop's thread schedules shares one Asio timer
// (asio_executor.cpp); the callbacks still run in deadline order, cancelled ones never,
// and io_context::run() still returns once nothing is scheduled.
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <gtest/gtest.h>

#include "async/asio_executor.hpp"

namespace toolport {
namespace {

using namespace std::chrono_literals;

TEST(AsioExecutorTimers, RunInDeadlineOrderAndSkipCancelled) {
    boost::asio::io_context io;
    AsioExecutor executor(io);
    std::vector<std::string> ran;
    boost::asio::post(io, [&] {
        executor.schedule_after(30ms, [&] { ran.push_back("30"); });
        auto cancel = executor.schedule_after(20ms, [&] { ran.push_back("20 (cancelled)"); });
        executor.schedule_after(10ms, [&] {
            ran.push_back("10");
            // Scheduled from a callback, earlier than what is left.
            executor.schedule_after(1ms, [&] { ran.push_back("10+1"); });
        });
        executor.schedule_after(10ms, [&] { ran.push_back("10 again"); });
        executor.schedule_after(0ms, [&] { ran.push_back("0"); });
        cancel();
        cancel();  // twice: nothing more
    });
    io.run();
    EXPECT_EQ(ran, (std::vector<std::string>{"0", "10", "10 again", "10+1", "30"}));
}

TEST(AsioExecutorTimers, NeverInline) {
    boost::asio::io_context io;
    AsioExecutor executor(io);
    bool ran = false;
    bool inline_run = false;
    boost::asio::post(io, [&] {
        executor.schedule_after(0ms, [&] { ran = true; });
        inline_run = ran;
    });
    io.run();
    EXPECT_TRUE(ran);
    EXPECT_FALSE(inline_run);
}

TEST(AsioExecutorTimers, RunReturnsOnceTheLastIsCancelled) {
    // A request's timeout is cancelled when its answer comes: a loop run until its work is
    // done must not wait for that deadline.
    boost::asio::io_context io;
    AsioExecutor executor(io);
    bool fired = false;
    boost::asio::post(io, [&] {
        auto first = executor.schedule_after(60s, [&] { fired = true; });
        auto second = executor.schedule_after(30s, [&] { fired = true; });
        boost::asio::post(io, [first, second] {
            second();
            first();
        });
    });
    const auto start = std::chrono::steady_clock::now();
    io.run();
    EXPECT_FALSE(fired);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(AsioExecutorTimers, AThrowingCallbackLeavesTheOthersScheduled) {
    boost::asio::io_context io;
    AsioExecutor executor(io);
    std::vector<std::string> ran;
    boost::asio::post(io, [&] {
        executor.schedule_after(1ms, [] { throw std::runtime_error("callback failed"); });
        executor.schedule_after(1ms, [&] { ran.push_back("same deadline"); });
        executor.schedule_after(20ms, [&] { ran.push_back("later"); });
    });
    EXPECT_THROW(io.run(), std::runtime_error);
    io.restart();
    io.run();
    EXPECT_EQ(ran, (std::vector<std::string>{"same deadline", "later"}));
}

TEST(AsioExecutorTimers, CancelledFromAnotherThread) {
    boost::asio::io_context io;
    AsioExecutor executor(io);
    bool fired = false;
    std::function<void()> cancel;
    boost::asio::post(io, [&] { cancel = executor.schedule_after(60s, [&] { fired = true; }); });
    io.run_one();  // schedules it, on the loop's thread
    std::thread other([&] { cancel(); });
    other.join();
    io.restart();
    const auto start = std::chrono::steady_clock::now();
    io.run();  // the loop cancels its timer: nothing left
    EXPECT_FALSE(fired);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);
}

TEST(AsioExecutorTimers, ScheduledOffTheLoopThread) {
    // Before the loop runs (no thread is in it): a timer of its own, as before.
    boost::asio::io_context io;
    AsioExecutor executor(io);
    std::vector<int> ran;
    executor.schedule_after(5ms, [&] { ran.push_back(5); });
    auto cancel = executor.schedule_after(1ms, [&] { ran.push_back(1); });
    cancel();
    io.run();
    EXPECT_EQ(ran, std::vector<int>{5});
}

TEST(AsioExecutorTimers, DroppedWithTheExecutor) {
    boost::asio::io_context io;
    bool fired = false;
    {
        AsioExecutor executor(io);
        boost::asio::post(io, [&] { executor.schedule_after(1ms, [&] { fired = true; }); });
        io.run_one();
    }
    io.restart();
    io.run();
    EXPECT_FALSE(fired);
}

}  // namespace
}  // namespace toolport
