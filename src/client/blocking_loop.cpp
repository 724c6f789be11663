#include "client/blocking_loop.hpp"

#include <stdexcept>

#include <boost/asio/io_context.hpp>

#include "async/asio_executor.hpp"

namespace toolport::client {

struct BlockingLoop::Impl {
    boost::asio::io_context io{1};
    AsioExecutor executor{io};
};

BlockingLoop::BlockingLoop() : impl_(std::make_unique<Impl>()) {}
BlockingLoop::~BlockingLoop() = default;

AsioExecutor& BlockingLoop::asio_executor() { return impl_->executor; }
Executor& BlockingLoop::executor() { return impl_->executor; }

void BlockingLoop::run_until(const bool& done) {
    impl_->io.restart();
    while (!done) {
        if (impl_->io.run_one() == 0 && !done) {
            throw std::logic_error("the event loop ran out of work before the awaited task finished");
        }
    }
}

void BlockingLoop::poll() {
    impl_->io.restart();
    impl_->io.poll();
}

}  // namespace toolport::client
