// InterceptorGuard: a guard that is an MCP server offering interceptors, the experimental
// extension of SEP-2624 (`interceptors/list`, `interceptor/invoke`), over stdio or
// Streamable HTTP (`guards.<name>.mcp`). Toolport is the invoker, on the server side of
// the tools/call it governs:
//
//  - before the call it receives the request: the validation pass, then (unless a
//    validator blocked) the mutation pass, over the payload {method: "tools/call",
//    params: {name, arguments}};
//  - after the call it emits the response: the mutation pass, then the validation pass,
//    over the CallToolResult.
//
// Discovery (interceptors/list) is done once per connection. The interceptors applied are
// those the configuration names (`interceptors: [...]`; one it names that the server does
// not offer fails the check), or else every one hooked on tools/call ("*" included) for
// the phase. Validators all run; one with valid: false and severity error (or none, or an
// unknown one) denies with its messages. Mutators run one after the other by priorityHint,
// then name; their changes are kept only when the whole pass succeeds. An interceptor in
// audit mode never blocks and its mutations are not applied. An invocation that fails
// (error reply, timeout, a result that does not echo its name, type and phase) blocks
// unless its effective failOpen is true: the guard's failure_mode when set, else the
// interceptor's own failOpen, else false.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "async/completion.hpp"
#include "pipeline/guard.hpp"

namespace toolport {
class AsioExecutor;
}
namespace toolport::client {
class McpClient;
}

namespace toolport::guards {

// One interceptor as interceptors/list describes it, reduced to what tools/call needs.
struct InterceptorInfo {
    std::string name;
    bool mutation = false;
    bool audit = false;
    std::optional<bool> fail_open;
    bool request = false;   // hooked on tools/call in the request phase
    bool response = false;  // ... in the response phase
    double priority_request = 0;
    double priority_response = 0;
};

// The interceptors of an interceptors/list result; those of an unknown type or mode are
// left out, as the SEP asks. Throws GuardFailure when the result has no interceptors array.
std::vector<InterceptorInfo> parse_interceptors(const Json& list_result);

class InterceptorGuard final : public pipeline::Guard, public std::enable_shared_from_this<InterceptorGuard> {
public:
    InterceptorGuard(AsioExecutor& executor, pipeline::GuardSettings settings);
    ~InterceptorGuard() override;

    // Connects in the background, so the first call does not wait for a child to start.
    void start();
    Task<pipeline::GuardVerdict> check(const pipeline::GuardInput& input,
                                       const pipeline::GuardCallLimits& limits) override;
    void terminate() override;

private:
    // The connection and its interceptors, connecting when there is none.
    Task<std::shared_ptr<client::McpClient>> connection(std::chrono::milliseconds wait);
    Task<void> connect(std::chrono::milliseconds wait);
    Task<Json> invoke(client::McpClient& client, const InterceptorInfo& interceptor, const pipeline::GuardInput& input,
                      const Json& payload, const pipeline::GuardCallLimits& limits);
    bool fails_open(const InterceptorInfo& interceptor) const;
    // Every validator over `payload`: the denial's reason, if one denies. Throws
    // GuardFailure when one fails and may not fail open (after all have run).
    Task<std::optional<std::string>> validation_pass(client::McpClient& client,
                                                     const std::vector<InterceptorInfo>& validators,
                                                     const pipeline::GuardInput& input, const Json& payload,
                                                     const pipeline::GuardCallLimits& limits);
    // The mutators in order: the payload they leave, when they changed it. Throws
    // GuardFailure when one fails and may not fail open (nothing of the pass is kept).
    Task<std::optional<Json>> mutation_pass(client::McpClient& client, const std::vector<InterceptorInfo>& mutators,
                                            const pipeline::GuardInput& input, const Json& payload,
                                            const pipeline::GuardCallLimits& limits);

    AsioExecutor& executor_;
    pipeline::GuardSettings settings_;
    std::shared_ptr<client::McpClient> client_;
    std::vector<InterceptorInfo> interceptors_;
    bool connecting_ = false;
    std::vector<Completion<bool>> waiting_;
    // After a failed connection: not tried again before this (each call fails at once).
    std::chrono::steady_clock::time_point retry_at_{};
    std::string last_error_;
    bool terminated_ = false;
};

}  // namespace toolport::guards
