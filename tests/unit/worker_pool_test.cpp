// WorkerPool: work runs off the loop and its result (or error) comes back on it; work
// stuck in a system call (here: a read of a pipe nobody writes to) does not hold its
// caller past the cancellation, does not leave the pool without free threads, and does
// not hold up the pool's destruction.
#include "async/worker_pool.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include "async/asio_executor.hpp"

using namespace toolport;
using namespace std::chrono_literals;

namespace {

// A pipe whose read end blocks until something is written (or the write end closes).
struct Pipe {
    int fds[2] = {-1, -1};
    Pipe() {
        if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    }
    ~Pipe() {
        release();
        if (fds[0] >= 0) ::close(fds[0]);
    }
    // Wakes every reader blocked on it (EOF).
    void release() {
        if (fds[1] >= 0) ::close(fds[1]);
        fds[1] = -1;
    }
    int read_end() const { return fds[0]; }
};

class WorkerPoolTest : public ::testing::Test {
protected:
    template <typename T>
    struct Outcome {
        bool done = false;
        std::optional<T> value;
        std::exception_ptr error;
    };

    // Starts `task` on the loop; the outcome fills in as the loop runs.
    template <typename T>
    std::shared_ptr<Outcome<T>> start(Task<T> task) {
        auto outcome = std::make_shared<Outcome<T>>();
        spawn(std::move(task), [outcome](std::optional<T> value, std::exception_ptr error) {
            outcome->value = std::move(value);
            outcome->error = error;
            outcome->done = true;
        });
        return outcome;
    }

    // Runs the loop until `done` holds (or 10 s pass); a worker posts from its thread, so
    // an idle loop is restarted rather than left.
    template <typename Pred>
    bool pump(Pred done) {
        const auto until = std::chrono::steady_clock::now() + 10s;
        io.restart();
        while (!done() && std::chrono::steady_clock::now() < until) {
            if (io.stopped()) io.restart();
            io.run_one_for(10ms);
        }
        return done();
    }

    template <typename Pred>
    static bool eventually(Pred holds) {
        const auto until = std::chrono::steady_clock::now() + 10s;
        while (!holds() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(5ms);
        return holds();
    }

    // A job that blocks until `pipe` is released.
    static auto blocked_on(const Pipe& pipe) {
        return [fd = pipe.read_end()] {
            char c;
            return ::read(fd, &c, 1) == 0;  // EOF: released
        };
    }

    boost::asio::io_context io;
    AsioExecutor executor{io};
};

TEST_F(WorkerPoolTest, ResultsAndErrorsComeBackToTheLoopThread) {
    WorkerPool pool(2);
    const auto loop_thread = std::this_thread::get_id();
    auto value = start(pool.run(executor, [] { return std::this_thread::get_id(); }));
    auto failed = start(pool.run(executor, []() -> int { throw std::invalid_argument("bad"); }));
    ASSERT_TRUE(pump([&] { return value->done && failed->done; }));
    ASSERT_TRUE(value->value);
    EXPECT_NE(*value->value, loop_thread);  // ran on a worker
    ASSERT_TRUE(failed->error);
    EXPECT_THROW(std::rethrow_exception(failed->error), std::invalid_argument);
    EXPECT_EQ(pool.threads(), 2u);
    EXPECT_EQ(pool.live_threads(), 2u);
}

TEST_F(WorkerPoolTest, ACancelledCallEndsAtOnceAndSparesStandInForStuckThreads) {
    WorkerPool pool(2);
    Pipe pipe;
    CancelToken first_token, second_token;
    auto first = start(pool.run(executor, first_token, blocked_on(pipe)));
    auto second = start(pool.run(executor, second_token, blocked_on(pipe)));
    // Both threads are blocked now; a third job only queues.
    CancelToken third_token;
    auto queued = start(pool.run(executor, third_token, [] { return 3; }));
    std::this_thread::sleep_for(50ms);
    io.restart();
    io.poll();
    ASSERT_FALSE(first->done || second->done || queued->done);

    // The calls' deadline: each answers at once though its thread is still blocked.
    first_token.cancel("deadline");
    second_token.cancel("deadline");
    ASSERT_TRUE(pump([&] { return first->done && second->done; }));
    ASSERT_TRUE(first->error);
    EXPECT_THROW(std::rethrow_exception(first->error), OperationCancelled);
    EXPECT_THROW(std::rethrow_exception(second->error), OperationCancelled);
    EXPECT_EQ(pool.stuck_threads(), 2u);

    // Spares took the stuck threads' places: the queued job and new ones run.
    ASSERT_TRUE(pump([&] { return queued->done; }));
    EXPECT_EQ(queued->value, 3);
    auto later = start(pool.run(executor, [] { return 4; }));
    ASSERT_TRUE(pump([&] { return later->done; }));
    EXPECT_EQ(later->value, 4);
    EXPECT_EQ(pool.live_threads(), 4u);

    // Unblocked at last: the stuck work's results are dropped and the spares retire.
    pipe.release();
    EXPECT_TRUE(eventually([&] { return pool.stuck_threads() == 0 && pool.live_threads() == 2u; }))
        << pool.stuck_threads() << " stuck, " << pool.live_threads() << " live";
    io.restart();
    io.poll();
    EXPECT_TRUE(first->error);  // still the cancellation, not the late result
}

TEST_F(WorkerPoolTest, QueuedWorkWhoseCallerGaveUpNeverRuns) {
    WorkerPool pool(1);
    Pipe pipe;
    CancelToken blocker_token;
    auto blocker = start(pool.run(executor, blocker_token, blocked_on(pipe)));
    std::atomic<bool> ran{false};
    CancelToken token;
    auto queued = start(pool.run(executor, token, [&ran] {
        ran = true;
        return 1;
    }));
    token.cancel("client cancelled");
    ASSERT_TRUE(pump([&] { return queued->done; }));
    EXPECT_TRUE(queued->error);
    pipe.release();
    ASSERT_TRUE(pump([&] { return blocker->done; }));
    EXPECT_EQ(blocker->value, true);
    // The one thread is free again and ran nothing else in between.
    auto after = start(pool.run(executor, [] { return 2; }));
    ASSERT_TRUE(pump([&] { return after->done; }));
    EXPECT_FALSE(ran);
    EXPECT_EQ(pool.stuck_threads(), 0u);
}

TEST_F(WorkerPoolTest, SparesAreBounded) {
    WorkerPool pool(1, /*max_spares=*/2);
    Pipe pipe;
    std::atomic<int> started{0};
    auto job = [&started, fd = pipe.read_end()] {
        ++started;
        char c;
        return ::read(fd, &c, 1) == 0;
    };
    std::vector<std::unique_ptr<CancelToken>> tokens;
    std::vector<std::shared_ptr<Outcome<bool>>> calls;
    for (int i = 0; i < 6; ++i) {
        tokens.push_back(std::make_unique<CancelToken>());
        calls.push_back(start(pool.run(executor, *tokens.back(), job)));
        // The first three find a thread (the pool's, then a spare each) and get stuck; the
        // rest wait in the queue, and leave it when their callers give up.
        if (i < 3) ASSERT_TRUE(eventually([&] { return started == i + 1; })) << i;
        tokens.back()->cancel("deadline");
        ASSERT_TRUE(pump([&] { return calls.back()->done; }));
    }
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(started, 3);
    EXPECT_EQ(pool.live_threads(), 3u);  // the one thread and at most two spares
    EXPECT_EQ(pool.stuck_threads(), 3u);
    pipe.release();
    EXPECT_TRUE(eventually([&] { return pool.stuck_threads() == 0 && pool.live_threads() == 1u; }));
}

TEST_F(WorkerPoolTest, DestructionDoesNotWaitForAThreadStuckInASystemCall) {
    Pipe pipe;
    auto pool = std::make_unique<WorkerPool>(1, 8, 200ms);
    CancelToken token;
    auto stuck = start(pool->run(executor, token, blocked_on(pipe)));  // not cancelled before the pool goes
    ASSERT_TRUE(eventually([&] { return pool->live_threads() == 1u; }));
    std::this_thread::sleep_for(20ms);
    // Destroyed on another thread, so that a destructor that waits for ever fails the test
    // instead of hanging it.
    std::promise<void> destroyed;
    auto gone = destroyed.get_future();
    std::thread([&pool, &destroyed] {
        pool.reset();
        destroyed.set_value();
    }).detach();
    const bool returned = gone.wait_for(10s) == std::future_status::ready;
    pipe.release();  // lets the thread end either way
    if (!returned) gone.wait();
    EXPECT_TRUE(returned) << "the pool's destructor waited for the stuck thread";
    // The late result is dropped, not posted to the loop.
    std::this_thread::sleep_for(50ms);
    io.restart();
    io.poll();
    EXPECT_FALSE(stuck->done);
    // The caller's token may still fire after the pool is gone: its call ends cancelled.
    token.cancel("session closed");
    ASSERT_TRUE(pump([&] { return stuck->done; }));
    EXPECT_TRUE(stuck->error);
}

}  // namespace
