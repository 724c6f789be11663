#include "async/asio_executor.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace toolport {

// Every request an MCP client sends and every tool call the pipeline runs schedules a
// timeout that is almost always cancelled: an Asio timer of its own for each cost an
// allocation, a place in the reactor's timer queue, and on cancellation a completion
// through the loop's queue, thousands of instructions per call. Scheduled from the loop's
// thread, they go into one ordered map instead, with one Asio timer armed for the
// earliest; cancelling erases the entry. While any entry is left, the timer is armed (as
// each entry's own timer was outstanding work of the io_context before), and when the
// last is cancelled the timer is too, so io_context::run() returns as it did.
//
// The loop's thread arms the timer and runs the callbacks; cancel functions may be called
// from any thread (the map is locked), and one that empties the map from another thread
// leaves the timer to the loop (posted).
struct AsioExecutor::Timers : std::enable_shared_from_this<AsioExecutor::Timers> {
    using Clock = std::chrono::steady_clock;
    using Key = std::pair<Clock::time_point, std::uint64_t>;

    explicit Timers(boost::asio::io_context& io) : io(io), timer(io) {}

    boost::asio::io_context& io;
    std::mutex mutex;
    std::map<Key, std::function<void()>> due;  // by deadline, then by order of scheduling
    std::uint64_t next = 0;
    // The deadline the timer waits for (max: no wait pending). Loop thread only.
    Clock::time_point armed = Clock::time_point::max();
    boost::asio::steady_timer timer;

    // Loop thread: waits for the earliest entry, if it is earlier than the wait pending;
    // with no entry left, the pending wait is cancelled.
    void arm() {
        Clock::time_point earliest = Clock::time_point::max();
        {
            std::lock_guard lock(mutex);
            if (!due.empty()) earliest = due.begin()->first.first;
        }
        arm_for(earliest);
    }

    // arm() once the earliest deadline is known (max: none left).
    void arm_for(Clock::time_point earliest) {
        if (earliest == Clock::time_point::max()) {
            if (armed != Clock::time_point::max()) {
                armed = Clock::time_point::max();
                timer.cancel();
            }
            return;
        }
        if (earliest >= armed) return;
        armed = earliest;
        timer.expires_at(earliest);  // cancels the wait pending, if any
        timer.async_wait([weak = weak_from_this(), earliest](const boost::system::error_code& ec) {
            auto self = weak.lock();
            // Aborted: re-armed for an earlier deadline, or nothing left to wait for.
            if (!self || ec || self->armed != earliest) return;
            self->armed = Clock::time_point::max();
            self->fire();
        });
    }

    // Loop thread, at the timer: runs what was due when it fired, one at a time and outside
    // the lock (a callback may schedule or cancel; one scheduled now waits for the next
    // turn), then waits for what is left, also when a callback throws (out of
    // io_context::run(), as from a timer of its own; the others stay scheduled).
    void fire() {
        auto keep = shared_from_this();
        struct Rearm {
            Timers& timers;
            ~Rearm() {
                try {
                    timers.arm();
                } catch (...) {  // nothing to do about it in a destructor
                }
            }
        } rearm{*this};
        const auto now = Clock::now();
        for (;;) {
            std::function<void()> fn;
            {
                std::lock_guard lock(mutex);
                if (due.empty() || due.begin()->first.first > now) break;
                fn = std::move(due.begin()->second);
                due.erase(due.begin());
            }
            fn();
        }
    }

    std::function<void()> add(std::chrono::milliseconds delay, std::function<void()> fn) {
        Key key;
        Clock::time_point earliest;
        {
            std::lock_guard lock(mutex);
            key = Key{Clock::now() + delay, ++next};
            due.emplace(key, std::move(fn));
            earliest = due.begin()->first.first;
        }
        arm_for(earliest);
        return [weak = weak_from_this(), key]() {
            auto self = weak.lock();
            if (!self) return;
            std::function<void()> dropped;  // destroyed outside the lock
            bool emptied = false;
            {
                std::lock_guard lock(self->mutex);
                auto it = self->due.find(key);
                if (it == self->due.end()) return;
                dropped = std::move(it->second);
                self->due.erase(it);
                emptied = self->due.empty();
            }
            if (!emptied) return;  // the timer wakes up for nothing at worst, and re-arms
            if (self->io.get_executor().running_in_this_thread()) self->arm();
            else
                boost::asio::post(self->io, [weak]() {
                    if (auto s = weak.lock()) s->arm();
                });
        };
    }
};

AsioExecutor::AsioExecutor(boost::asio::io_context& io) : io_(io), timers_(std::make_shared<Timers>(io)) {}

AsioExecutor::~AsioExecutor() {
    // Callbacks still scheduled are dropped with the executor, outside the lock.
    std::map<Timers::Key, std::function<void()>> left;
    {
        std::lock_guard lock(timers_->mutex);
        left.swap(timers_->due);
    }
}

void AsioExecutor::post(std::function<void()> fn) { boost::asio::post(io_, std::move(fn)); }

std::function<void()> AsioExecutor::schedule_after(std::chrono::milliseconds delay, std::function<void()> fn) {
    if (io_.get_executor().running_in_this_thread()) return timers_->add(delay, std::move(fn));
    // Off the loop's thread (before it runs, or from a worker): a timer of its own.
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
