#include "transports/io_threads.hpp"

#include <algorithm>

#include <pthread.h>
#include <sched.h>

#include <spdlog/spdlog.h>

#include "async/control_signal.hpp"

namespace toolport {

void run_polling(boost::asio::io_context& loop, std::chrono::microseconds spin) {
    using clock = std::chrono::steady_clock;
    auto last_work = clock::now();
    while (!loop.stopped()) {
        if (loop.poll() > 0) {
            last_work = clock::now();
            continue;
        }
        if (clock::now() - last_work < spin) {
            sched_yield();
            continue;
        }
        loop.run_one();
        last_work = clock::now();
    }
}

IoThreads::IoThreads(std::size_t count) {
    loops_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        loops_.push_back(std::make_unique<boost::asio::io_context>(1));
        guards_.push_back(boost::asio::make_work_guard(*loops_.back()));
    }
    for (std::size_t i = 0; i < count; ++i) {
        threads_.emplace_back([loop = loops_[i].get(), i] {
            pthread_setname_np(pthread_self(), ("toolport-io" + std::to_string(i)).c_str());
            for (;;) {
                try {
                    run_polling(*loop);
                    return;
                } catch (const std::exception& e) {
                    // A connection's coroutine threw: that connection is gone, the loop goes on.
                    spdlog::error("HTTP I/O thread {}: {}", i, e.what());
                } catch (const ControlSignal& e) {
                    spdlog::error("HTTP I/O thread {}: {}", i, e.what());
                }
            }
        });
    }
}

IoThreads::~IoThreads() { stop(); }

boost::asio::io_context& IoThreads::next() {
    return *loops_[next_.fetch_add(1, std::memory_order_relaxed) % loops_.size()];
}

void IoThreads::stop() {
    for (auto& guard : guards_) guard.reset();
    for (auto& loop : loops_) loop->stop();
    for (auto& thread : threads_) {
        if (thread.joinable()) thread.join();
    }
}

std::size_t IoThreads::automatic() {
    // The engine keeps a core of its own; on two cores or fewer the hand-over between
    // threads costs more than it frees (measured: bench/README.md).
    auto cores = static_cast<std::size_t>(std::thread::hardware_concurrency());
    return cores <= 2 ? 0 : std::min<std::size_t>(cores - 1, 4);
}

}  // namespace toolport
