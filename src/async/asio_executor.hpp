// AsioExecutor: the Executor interface over an asio::io_context. Only network code
// includes this header (it pulls in Asio).
#pragma once

#include <memory>

#include <boost/asio/io_context.hpp>

#include "async/executor.hpp"

namespace toolport {

class AsioExecutor final : public Executor {
public:
    explicit AsioExecutor(boost::asio::io_context& io);
    ~AsioExecutor() override;
    AsioExecutor(const AsioExecutor&) = delete;
    AsioExecutor& operator=(const AsioExecutor&) = delete;

    void post(std::function<void()> fn) override;
    std::function<void()> schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) override;
    boost::asio::io_context& io() { return io_; }

private:
    // What schedule_after schedules from the loop's thread: one Asio timer for all of them
    // (asio_executor.cpp).
    struct Timers;

    boost::asio::io_context& io_;
    std::shared_ptr<Timers> timers_;
};

}  // namespace toolport
