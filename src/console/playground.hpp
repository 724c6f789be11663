// POST api/call: a tool called from the console, as the operator, through the real
// pipeline. Each call is a session of its own with the engine (McpServer::open_session,
// the operator's identity, elicitation offered), whose messages become the call's events:
// started, progress, elicitation, then one result or error. The operator cancels it or
// answers its questions through call/{id}/cancel and call/{id}/elicitation/{eid}.
// On the engine's loop.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "server/request_context.hpp"
#include "util/json.hpp"

namespace toolport {
class McpServer;
class OutStream;
class ServerSession;
}  // namespace toolport

namespace toolport::console {

class Playground {
public:
    explicit Playground(McpServer& server) : server_(server) {}
    ~Playground();
    Playground(const Playground&) = delete;
    Playground& operator=(const Playground&) = delete;

    // Starts `tool` with `arguments` as `caller`; its events go to `out` (already SSE text).
    // Returns the call's id.
    std::string start(const std::string& tool, Json arguments, CallerIdentity caller, std::shared_ptr<OutStream> out);
    // The client of call `id` left: the call is cancelled.
    void abandon(const std::string& id);
    // False when no such call runs.
    bool cancel(const std::string& id);
    enum class Answered { ok, no_call, no_question };
    Answered answer(const std::string& id, const std::string& elicitation_id, Json result);

private:
    struct Call {
        std::shared_ptr<ServerSession> session;
        std::shared_ptr<OutStream> out;
        std::map<std::string, Json> questions;  // elicitation id -> the engine's request id
        std::uint64_t next_question = 0;
        bool done = false;
    };
    void on_message(const std::string& id, const Json& message);
    void finish(const std::string& id);

    McpServer& server_;
    std::map<std::string, std::shared_ptr<Call>> calls_;
    std::shared_ptr<int> alive_ = std::make_shared<int>(0);  // work posted for later checks it
};

}  // namespace toolport::console
