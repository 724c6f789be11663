// Client transports for McpClient's unit tests: one that records what passes through
// another transport, and one whose "server" is a function of each message sent (for what
// a well-behaved server never does, or a server of a kind Toolport is not).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "async/executor.hpp"
#include "client/client_transport.hpp"
#include "util/json.hpp"

namespace toolport::test_support {

using client::ClientTransport;

// Wraps a transport and records every message in both directions.
class RecordingTransport final : public ClientTransport {
public:
    RecordingTransport(std::unique_ptr<ClientTransport> inner, std::vector<Json>& sent, std::vector<Json>& received);
    Task<void> open(Handlers handlers) override;
    Task<void> send(Json message) override;
    void abandon(const protocol::RequestId& id) override { inner_->abandon(id); }
    void use_protocol_version(const std::string& version) override { inner_->use_protocol_version(version); }
    void handshake_done() override { inner_->handshake_done(); }
    void use_stateless_revision(const std::string& version) override { inner_->use_stateless_revision(version); }
    bool notifications_reach_server() const override { return inner_->notifications_reach_server(); }
    Task<void> close() override;
    void terminate() override { inner_->terminate(); }
    std::string describe() const override { return inner_->describe(); }

private:
    std::unique_ptr<ClientTransport> inner_;
    std::vector<Json>& sent_;
    std::vector<Json>& received_;
};

// A transport whose "server" is a function of each sent message: its replies are
// delivered from the loop, as a socket's would be.
class ScriptedTransport final : public ClientTransport {
public:
    using Script = std::function<std::vector<Json>(const Json& sent)>;
    ScriptedTransport(Executor& exec, Script script) : exec_(exec), script_(std::move(script)) {}
    Task<void> open(Handlers handlers) override;
    Task<void> send(Json message) override;
    Task<void> close() override;
    std::string describe() const override { return "the scripted server"; }
    // The server goes away (on_closed, and later sends fail).
    void die(const std::string& reason);
    // Hands the client a message the script did not produce (a notification, say).
    void push(Json message);

    int closes = 0;
    bool closed_by_server = false;

private:
    Executor& exec_;
    Script script_;
    std::shared_ptr<Handlers> handlers_;
};

}  // namespace toolport::test_support
