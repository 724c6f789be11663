// Guards: external checks a tool call passes through, configured under `guards:` and
// attached per source or per tool (`sources.<name>.guards`, `tools.<name>.guards`). Before
// the call a guard sees the arguments, after it the result; it allows, denies with a
// reason, or allows with a replacement (redacted arguments, a sanitized result).
//
// This header holds what the pipeline needs of a guard: the question (GuardInput), the
// answer (GuardVerdict), the interface (Guard), the settings shared by every kind, and the
// concurrency limit. The kinds that reach a real service (an HTTP webhook, an MCP server
// with SEP-2624 interceptors) live in src/guards/, above the MCP client they use; the
// stage that runs them is stages/guard.hpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "async/completion.hpp"
#include "async/task.hpp"
#include "util/json.hpp"

namespace toolport {
class CancelToken;
class Executor;
struct CallerIdentity;
namespace observability {
struct TraceContext;
}
}  // namespace toolport

namespace toolport::pipeline {

enum class GuardPhase { before, after };
std::string_view to_string(GuardPhase phase);

// What a guard failure (unreachable, too slow, a reply that is no verdict) does to the
// call: `closed` refuses it, `open` lets it proceed with a warning.
enum class FailureMode { open, closed };

// The question put to a guard.
struct GuardInput {
    GuardPhase phase;
    const std::string& tool;
    const std::string& source;
    const Json& arguments;         // the arguments (after: those the tool ran with)
    const Json* result = nullptr;  // after: the tool's result, as a CallToolResult
    const CallerIdentity& caller;
    Json request_id;  // the JSON-RPC id of the tools/call
};

struct GuardVerdict {
    bool allow = true;
    std::string reason;      // deny: why, in the guard's words
    std::string suggestion;  // deny: what the agent can do instead
    // allow: what to use instead of the arguments (before) or the result (after).
    std::optional<Json> replacement;
    // How long the guard lets this verdict be reused for the same input (0: not at all).
    std::chrono::seconds cacheable_for{0};

    Json to_json() const;
    // Throws std::exception for JSON that to_json() did not write.
    static GuardVerdict from_json(const Json& json);
};

// A guard gave no verdict. The message says why, without secrets (no header values, no
// query strings).
struct GuardFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The bounds of one check.
struct GuardCallLimits {
    std::chrono::steady_clock::time_point deadline;
    std::chrono::milliseconds timeout{0};
    CancelToken* cancel = nullptr;  // the call's: a cancelled call stops its checks
    // The call's span, when tracing records it: a webhook's request is a span under it.
    const observability::TraceContext* trace = nullptr;
};

class Guard {
public:
    virtual ~Guard() = default;
    // Throws GuardFailure, or OperationCancelled when limits.cancel fires.
    virtual Task<GuardVerdict> check(const GuardInput& input, const GuardCallLimits& limits) = 0;
    // Ends its connections now (shutdown); checks after this fail.
    virtual void terminate() {}
};

// How a guard is reached and used (`guards.<name>`).
struct GuardSettings {
    std::string name;
    std::chrono::milliseconds timeout{2000};
    // Unset: closed, except for an MCP interceptor whose author declared failOpen.
    std::optional<FailureMode> failure_mode;
    std::size_t max_concurrency = 64;
    // Verdicts the guard marks cacheable are kept up to this long (0: never).
    std::chrono::seconds cache_verdicts{0};
    bool before = true;  // checks arguments
    bool after = true;   // checks results

    struct Webhook {
        std::string url;
        std::vector<std::pair<std::string, std::string>> headers;  // values may be secrets
        std::string bearer_token;
        std::size_t max_response_bytes = 1u << 20;
    };
    struct Interceptors {
        // stdio: the program and its arguments; or Streamable HTTP: url.
        std::vector<std::string> argv;
        std::map<std::string, std::string> env;
        std::string url;
        std::vector<std::pair<std::string, std::string>> headers;
        std::string bearer_token;
        // The interceptors to apply, by name; empty: every one hooked on tools/call.
        std::vector<std::string> names;
        // Passed as each invocation's `config`.
        Json config;
    };
    std::optional<Webhook> webhook;
    std::optional<Interceptors> interceptors;
};

// At most `limit` checks of one guard at once; a check beyond waits for a slot until its
// deadline. Runs on the event loop thread.
class GuardLimiter {
public:
    GuardLimiter(Executor& executor, std::size_t limit) : executor_(executor), limit_(limit) {}
    // True once a slot is taken (give it back with release()); false when `wait` passed
    // first.
    Task<bool> acquire(std::chrono::milliseconds wait);
    void release();
    std::size_t in_use() const { return in_use_; }
    std::size_t waiting() const { return waiters_.size(); }

private:
    struct Waiter {
        Completion<bool> granted;
        std::function<void()> cancel_timer;
    };
    Executor& executor_;
    std::size_t limit_;
    std::size_t in_use_ = 0;
    std::deque<std::shared_ptr<Waiter>> waiters_;
};

}  // namespace toolport::pipeline
