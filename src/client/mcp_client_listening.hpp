// McpClient's private state for notifications in the stateless revision (2026-07-28):
// there is no stream outside requests, so the client keeps one subscriptions/listen
// request open, asking for what the server declared (listChanged, resource updates of
// the URIs subscribed to). Changing what it asks for opens a new listen and cancels the
// old one once the new one is acknowledged, so no notification falls in between; what
// the old one still delivers after that is dropped, so none arrives twice.
// Shared by mcp_client.cpp and mcp_client_stateless.cpp only.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "client/mcp_client.hpp"

namespace toolport::client {

struct McpClient::Listening {
    // What the server declared it can notify about.
    bool tools_list_changed = false;
    bool prompts_list_changed = false;
    bool resources_list_changed = false;
    bool resource_subscriptions = false;
    // Whether anyone hears notifications (McpClient::on_notification was set).
    bool wanted = false;

    std::set<std::string> resource_uris;  // resources/subscribe'd, for resourceSubscriptions

    std::int64_t active = 0;         // the open listen request whose notifications are delivered
    std::int64_t replacing = 0;      // a newer one, not yet acknowledged
    std::set<std::int64_t> retired;  // cancelled by us; what still comes from them is dropped
    bool refused = false;            // the server answered listen with an error: not asked again
    int failures = 0;                // listens that ended unacknowledged in a row (back-off)
    std::function<void()> cancel_retry;

    void stop_retrying() {
        if (cancel_retry) std::exchange(cancel_retry, nullptr)();
    }
};

}  // namespace toolport::client
