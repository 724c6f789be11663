#include "scripted_client_transports.hpp"

namespace toolport::test_support {

RecordingTransport::RecordingTransport(std::unique_ptr<ClientTransport> inner, std::vector<Json>& sent,
                                       std::vector<Json>& received)
    : inner_(std::move(inner)), sent_(sent), received_(received) {}

Task<void> RecordingTransport::open(Handlers handlers) {
    auto record = [this](auto on_message) {
        return [this, on_message](Json m, auto&&... rest) {
            received_.push_back(m);
            on_message(std::move(m), rest...);
        };
    };
    handlers.on_message = record(std::move(handlers.on_message));
    if (handlers.on_message_about) handlers.on_message_about = record(std::move(handlers.on_message_about));
    return inner_->open(std::move(handlers));
}

Task<void> RecordingTransport::send(Json message) {
    sent_.push_back(message);
    return inner_->send(std::move(message));
}

Task<void> RecordingTransport::close() { return inner_->close(); }

Task<void> ScriptedTransport::open(Handlers handlers) {
    handlers_ = std::make_shared<Handlers>(std::move(handlers));
    co_return;
}

Task<void> ScriptedTransport::send(Json message) {
    if (closed_by_server) throw client::TransportError("the scripted server is gone");
    for (auto& reply : script_(message)) push(std::move(reply));
    co_return;
}

Task<void> ScriptedTransport::close() {
    ++closes;
    co_return;
}

void ScriptedTransport::die(const std::string& reason) {
    closed_by_server = true;
    handlers_->on_closed(reason);
}

void ScriptedTransport::push(Json message) {
    exec_.post([h = handlers_, message = std::move(message)]() { h->on_message(message); });
}

}  // namespace toolport::test_support
