// Upstream (upstream.hpp): its lifetime (start, stop) and the state /health reports. The
// rest, by concern:
//   upstream_connection.cpp  connecting (stdio, Streamable HTTP, legacy SSE), listing the
//                            catalog, re-listing, reconnecting with backoff, pings;
//   upstream_callers.cpp     what the upstream says or asks, routed to the client call it
//                            belongs to; credentials (auth:) and each caller's own connection;
//   upstream_tasks.cpp       a tool call run upstream as a task (either task model);
//   upstream_forwarding.cpp  forwarding a client's request: calls, resources, prompts,
//                            completions, subscriptions.
#include "providers/gateway/upstream.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "auth/upstream_credentials.hpp"
#include "client/mcp_client.hpp"
#include "http_client/http_client.hpp"
#include "observability/metrics.hpp"
#include "providers/gateway/upstream_internal.hpp"
#include "async/asio_executor.hpp"

namespace toolport::gateway {

using namespace std::chrono_literals;

namespace upstream_detail {

std::chrono::milliseconds until(std::chrono::steady_clock::time_point when) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(when - std::chrono::steady_clock::now());
    return std::max(left, 0ms);
}

}  // namespace upstream_detail

using upstream_detail::until;

Upstream::Upstream(UpstreamSettings settings, AsioExecutor& executor)
    : settings_(std::move(settings)), secrets_(settings_.secrets()), executor_(executor) {
    if (settings_.registry) configured_ = settings_;
    output_ = std::make_shared<UpstreamOutputGuard>(settings_.name, settings_.output_limits,
                                                    [&executor](std::chrono::milliseconds delay,
                                                                std::function<void()> fn) {
                                                        return executor.schedule_after(delay, std::move(fn));
                                                    });
    // login: the OAuthAuthorizer of each connection attempt does the token requests.
    if (settings_.auth && settings_.auth->type != auth::UpstreamAuthSettings::Type::login) {
        token_http_ = std::make_unique<http_client::HttpClient>(executor_);
        credentials_ = std::make_shared<auth::UpstreamCredentials>("upstream " + settings_.name, *settings_.auth,
                                                                   *token_http_);
    }
}

Upstream::~Upstream() { stop(); }

void Upstream::start() { connect_now(); }

void Upstream::stop() {
    if (state() == State::stopped) return;
    set_state(State::stopped);
    ++generation_;
    if (cancel_timer_) std::exchange(cancel_timer_, nullptr)();
    if (cancel_ping_) std::exchange(cancel_ping_, nullptr)();
    // Ends the connection at once, even if a coroutine that will never resume (the loop
    // may have stopped) still holds the client: a stdio child and its process group are
    // killed and reaped now. Requests still waiting fail with a ClientError.
    if (client_) client_->terminate();
    client_.reset();
    if (cancel_sweep_) std::exchange(cancel_sweep_, nullptr)();
    auto callers = std::move(caller_connections_);
    caller_connections_.clear();
    for (auto& [key, connection] : callers) {
        if (connection.client) connection.client->terminate();
        for (auto& waiter : connection.waiters) {
            waiter.set_error(std::make_exception_ptr(client::TransportError("the gateway is stopping")));
        }
    }
}

Upstream::State Upstream::state() const {
    std::lock_guard lock(state_mutex_);
    return state_;
}

void Upstream::set_state(State state, std::string detail) {
    {
        std::lock_guard lock(state_mutex_);
        state_ = state;
        detail_ = std::move(detail);
    }
    observability::metrics().set("toolport_upstream_up", {{"upstream", name()}}, state == State::connected ? 1 : 0);
}

std::string Upstream::describe_state() const {
    std::lock_guard lock(state_mutex_);
    switch (state_) {
        case State::connecting: return "connecting";
        case State::connected: return fmt::format("connected ({})", protocol_version_);
        case State::reconnecting: {
            auto wait = until(next_attempt_);
            return fmt::format("reconnecting in {:.1f} s: {}", wait.count() / 1000.0, detail_);
        }
        case State::stopped: return "stopped";
    }
    return "unknown";
}

}  // namespace toolport::gateway
