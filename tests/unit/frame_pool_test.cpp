// The coroutine frame pool: blocks of every size class are usable and reused, frames may
// be freed on another thread than the one that made them, and Task coroutines still run
// and clean up when their frames come from the pool.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "async/frame_pool.hpp"
#include "async/task.hpp"

using namespace toolport;

namespace {

Task<int> add_one(int x) { co_return x + 1; }

Task<int> chain(int depth) {
    if (depth == 0) co_return 0;
    int below = co_await chain(depth - 1);
    co_return co_await add_one(below);
}

}  // namespace

TEST(FramePool, EverySizeIsUsableAndReused) {
    for (std::size_t size : {std::size_t{1}, std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{672},
                             std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{100000}}) {
        for (int round = 0; round < 3; ++round) {
            std::vector<void*> frames;
            for (int i = 0; i < 50; ++i) {
                void* f = detail::frame_alloc(size);
                std::memset(f, 0xab, size);  // the whole block is ours
                frames.push_back(f);
            }
            for (void* f : frames) detail::frame_free(f, size);
        }
    }
}

TEST(FramePool, FramesFreedOnAnotherThread) {
    constexpr int kFrames = 2000;
    std::vector<void*> frames;
    for (int i = 0; i < kFrames; ++i) frames.push_back(detail::frame_alloc(64 + static_cast<std::size_t>(i % 7) * 100));
    std::thread other([&frames] {
        for (int i = 0; i < kFrames; ++i) detail::frame_free(frames[i], 64 + static_cast<std::size_t>(i % 7) * 100);
        // Reused on this thread, then handed back; the thread's cache is freed at its exit.
        for (int i = 0; i < kFrames; ++i) frames[i] = detail::frame_alloc(200);
        for (int i = 0; i < kFrames; ++i) detail::frame_free(frames[i], 200);
    });
    other.join();
}

TEST(FramePool, TasksRunOnPooledFramesAcrossThreads) {
    for (int round = 0; round < 100; ++round) {
        std::optional<int> result;
        spawn(chain(20), [&result](std::optional<int> v, std::exception_ptr) { result = v; });
        ASSERT_EQ(result, 20);
    }
    // A task made here, run and destroyed on another thread.
    std::vector<Task<int>> tasks;
    for (int i = 0; i < 100; ++i) tasks.push_back(chain(3));
    std::thread other([&tasks] {
        int total = 0;
        for (auto& t : tasks) spawn(std::move(t), [&total](std::optional<int> v, std::exception_ptr) { total += *v; });
        EXPECT_EQ(total, 300);
        tasks.clear();
    });
    other.join();
}
