// AsioExecutor: the Executor interface over an asio::io_context. Only network code
// includes this header (it pulls in Asio).
#pragma once

#include <boost/asio/io_context.hpp>

#include "async/executor.hpp"

namespace toolport {

class AsioExecutor final : public Executor {
public:
    explicit AsioExecutor(boost::asio::io_context& io) : io_(io) {}
    void post(std::function<void()> fn) override;
    std::function<void()> schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) override;
    boost::asio::io_context& io() { return io_; }

private:
    boost::asio::io_context& io_;
};

}  // namespace toolport
