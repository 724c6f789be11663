#include "async/executor.hpp"

#include "async/cancel_token.hpp"

namespace toolport {

Task<void> Executor::sleep(std::chrono::milliseconds delay, CancelToken* token) {
    Completion<bool> woke;
    auto cancel_timer = schedule_after(delay, [woke]() mutable { woke.set_value(true); });
    CancelToken::CallbackId registration = 0;
    if (token) {
        registration = token->on_cancel([woke, cancel_timer, this]() mutable {
            cancel_timer();
            // Resume from the loop, not from inside whoever fired the token.
            post([woke]() mutable { woke.set_error(std::make_exception_ptr(OperationCancelled())); });
        });
    }
    try {
        co_await woke;
    } catch (...) {
        if (token) token->remove(registration);
        throw;
    }
    if (token) token->remove(registration);
}

}  // namespace toolport
