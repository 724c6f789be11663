// Sessions of an McpServer driven on a ManualExecutor: opened for a caller and initialized,
// each request run until its reply is in. For fixtures that test what a caller sees and may
// call (views, scopes) through the session's own methods.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "manual_executor.hpp"
#include "server/session.hpp"

namespace toolport::test_support {

class SessionDriver {
public:
    // Neither is copied: both must outlive the driver.
    SessionDriver(ManualExecutor& exec, McpServer& server) : exec_(exec), server_(server) {}
    SessionDriver(const SessionDriver&) = delete;
    SessionDriver& operator=(const SessionDriver&) = delete;

    // A session for `caller`, past initialize and notifications/initialized.
    std::shared_ptr<ServerSession> open(CallerIdentity caller) {
        auto heard = std::make_shared<std::vector<nlohmann::json>>();
        auto session = server_.open_session(
            [this, heard](const nlohmann::json& m, const protocol::RequestId*) {
                if (m.contains("id") && !m.contains("method")) replies_[m["id"].dump()] = m;
                else if (m.contains("method") && !m.contains("id")) heard->push_back(m);
            },
            std::move(caller));
        heard_[session.get()] = heard;
        initialized_[session.get()] = call(*session, 0, "initialize",
                                           {{"protocolVersion", "2025-11-25"},
                                            {"capabilities", nlohmann::json::object()},
                                            {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
        session->receive(std::get<protocol::Message>(
            protocol::classify(nlohmann::json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})));
        exec_.run();
        return session;
    }

    // The reply to request `id` (null if none came).
    nlohmann::json call(ServerSession& session, int id, const std::string& method, nlohmann::json params) {
        session.receive(
            std::get<protocol::Message>(protocol::classify(protocol::make_request(id, method, std::move(params)))));
        exec_.run();
        return replies_[nlohmann::json(id).dump()];
    }

    // tools/call's result (a JSON-RPC error fails the test).
    nlohmann::json tool_call(ServerSession& session, int id, const std::string& name, nlohmann::json arguments) {
        auto reply = call(session, id, "tools/call", {{"name", name}, {"arguments", std::move(arguments)}});
        EXPECT_TRUE(reply.contains("result")) << reply.dump();
        return reply["result"];
    }

    // The notifications `session` was sent so far (without an id), in order.
    std::vector<nlohmann::json>& heard(const ServerSession& session) { return *heard_.at(&session); }
    // The methods of those notifications.
    std::vector<std::string> heard_methods(const ServerSession& session) {
        std::vector<std::string> methods;
        for (const auto& m : heard(session)) methods.push_back(m["method"]);
        return methods;
    }
    // The reply to the session's initialize.
    const nlohmann::json& initialize_reply(const ServerSession& session) { return initialized_.at(&session); }

private:
    ManualExecutor& exec_;
    McpServer& server_;
    std::map<std::string, nlohmann::json> replies_;
    std::map<const ServerSession*, std::shared_ptr<std::vector<nlohmann::json>>> heard_;
    std::map<const ServerSession*, nlohmann::json> initialized_;
};

}  // namespace toolport::test_support
