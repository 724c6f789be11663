// BlockingLoop: an event loop (an Asio io_context, hidden here) for a thread that waits on
// it: SyncClient runs it until each call is done. The only client file besides the
// network transports that includes Asio.
#pragma once

#include <memory>

namespace toolport {
class AsioExecutor;
class Executor;
}  // namespace toolport

namespace toolport::client {

class BlockingLoop {
public:
    BlockingLoop();
    ~BlockingLoop();
    BlockingLoop(const BlockingLoop&) = delete;
    BlockingLoop& operator=(const BlockingLoop&) = delete;

    AsioExecutor& asio_executor();
    Executor& executor();

    // Runs handlers until `done` is true. Throws std::logic_error when nothing is left to
    // run before that (the awaited work can then never finish).
    void run_until(const bool& done);
    // Runs whatever is ready, without waiting.
    void poll();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace toolport::client
