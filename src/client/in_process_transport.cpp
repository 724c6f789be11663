// The in-process transport: a ServerSession of an McpServer living in this process. No
// bytes, no sockets: JSON values are handed over on the server's executor. The command
// line's --config mode uses it, and so can tests.
#include <fmt/format.h>

#include "async/executor.hpp"
#include "client/client_transport.hpp"
#include "server/session.hpp"

namespace toolport::client {

namespace {

struct State {
    State(McpServer& s, CallerIdentity c) : server(s), server_alive(s.alive()), caller(std::move(c)) {}
    McpServer& server;
    std::shared_ptr<const bool> server_alive;  // false once the server is destroyed
    CallerIdentity caller;
    ClientTransport::Handlers handlers;
    std::shared_ptr<ServerSession> session;
    bool closed = false;

    bool usable() const { return session && !closed && *server_alive && !session->closed(); }
    void end_session() {
        closed = true;
        if (session && *server_alive) session->close();
        session.reset();
    }
};

class InProcessTransport final : public ClientTransport {
public:
    InProcessTransport(McpServer& server, CallerIdentity caller)
        : state_(std::make_shared<State>(server, std::move(caller))) {}
    ~InProcessTransport() override { state_->end_session(); }

    Task<void> open(Handlers handlers) override {
        if (state_->session) throw TransportError(describe() + ": the transport was already opened");
        if (!*state_->server_alive) throw TransportError(describe() + " is gone");
        state_->handlers = std::move(handlers);
        std::weak_ptr<State> weak = state_;
        Executor& executor = state_->server.executor();
        state_->session = state_->server.open_session(
            [weak, &executor](const Json& message, const protocol::RequestId*) {
                // Delivered from the loop, never from inside the session's own call stack,
                // as a socket would.
                executor.post([weak, message]() {
                    auto state = weak.lock();
                    if (state && !state->closed) state->handlers.on_message(message);
                });
            },
            state_->caller);
        co_return;
    }

    Task<void> send(Json message) override {
        if (!state_->usable()) throw TransportError(describe() + " is closed");
        auto parsed = protocol::classify(std::move(message));
        if (auto* error = std::get_if<protocol::ProtocolError>(&parsed)) {
            throw ClientError("the client built a malformed message: " + error->message);
        }
        state_->session->receive(std::get<protocol::Message>(std::move(parsed)));
        co_return;
    }

    Task<void> close() override {
        state_->end_session();
        co_return;
    }

    std::string describe() const override {
        return fmt::format("the in-process server \"{}\"", state_->server.options().name);
    }

private:
    std::shared_ptr<State> state_;
};

}  // namespace

std::unique_ptr<ClientTransport> make_in_process_transport(McpServer& server, const CallerIdentity& caller) {
    return std::make_unique<InProcessTransport>(server, caller);
}

}  // namespace toolport::client
