// IoThreads: extra event loops, one thread each, that carry the HTTP connections' socket
// work (reading and parsing requests, writing replies, TCP send/receive in the kernel) beside
// the engine's own loop. The engine (sessions, tools, the pipeline) stays on its one thread;
// a connection hands each parsed request to it and gets the reply back. Only network code
// includes this header (it pulls in Asio).
//
// Lifetime: create it before the engine's io_context and destroy it after (work queued on the
// engine refers to connections on these loops). Call stop() once the engine loop has ended.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace toolport {

// Runs `loop` until it is stopped, looking for work without sleeping for `spin` after the
// last handler ran. Waking a sleeping thread from another core costs an inter-processor
// interrupt (tens of µs in a VM); a busy server hands every request between its threads,
// so it keeps them awake while requests come, and sleeps when they stop.
void run_polling(boost::asio::io_context& loop, std::chrono::microseconds spin = std::chrono::microseconds(50));

class IoThreads {
public:
    explicit IoThreads(std::size_t count);
    ~IoThreads();
    IoThreads(const IoThreads&) = delete;
    IoThreads& operator=(const IoThreads&) = delete;

    std::size_t size() const { return loops_.size(); }
    // The loop for the next connection (round robin).
    boost::asio::io_context& next();
    // Stops every loop and joins its thread; pending work stays queued (and is destroyed
    // with the loops). Idempotent.
    void stop();

    // The number of I/O threads "auto" means on this machine: one per core but the engine's,
    // at most 4 (past that the single engine thread is the limit), none on two cores.
    static std::size_t automatic();

private:
    using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
    std::vector<std::unique_ptr<boost::asio::io_context>> loops_;
    std::vector<Guard> guards_;
    std::vector<std::thread> threads_;
    std::atomic<std::size_t> next_{0};
};

}  // namespace toolport
