#include "async/asio_executor.hpp"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace toolport {

void AsioExecutor::post(std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); }

std::function<void()> AsioExecutor::schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) {
    auto timer = std::make_shared<boost::asio::steady_timer>(io_, delay);
    timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code& ec) {
        if (!ec) fn();
    });
    std::weak_ptr<boost::asio::steady_timer> weak = timer;
    return [weak]() {
        if (auto t = weak.lock()) t->cancel();
    };
}

}  // namespace toolport
