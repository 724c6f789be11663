#include "console/playground.hpp"

#include "async/executor.hpp"
#include "console/console_reply.hpp"
#include "protocol/json_writer.hpp"
#include "protocol/jsonrpc.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "transports/sse_stream.hpp"
#include "util/random.hpp"

namespace toolport::console {

namespace {
constexpr int kCallRequestId = 1;
// The protocol's writer, not Json::dump: a gateway's tools/call result keeps its upstream's
// content and structuredContent as raw JSON (protocol/raw_json.hpp), which only it writes as
// the JSON they hold (nlohmann would write them as binary byte arrays).
std::string dump(const Json& j) {
    std::string out;
    protocol::write_json(j, out);
    return out;
}
}  // namespace

Playground::~Playground() {
    for (auto& [id, call] : calls_) {
        call->done = true;
        call->out->end();
        call->session->close();
    }
}

std::string Playground::start(const std::string& tool, Json arguments, CallerIdentity caller,
                              std::shared_ptr<OutStream> out) {
    const std::string id = util::random_hex(12);
    auto call = std::make_shared<Call>();
    call->out = std::move(out);
    caller.session_id = "console-" + id;
    calls_[id] = call;
    call->session = server_.open_session([this, id](const Json& message,
                                                    const protocol::RequestId*) { on_message(id, message); },
                                         std::move(caller));
    call->out->push(sse_event("started", dump(Json{{"call_id", id}})), nullptr);
    // A client that offers elicitation, of the latest revision; then the call, with a
    // progress token so that progress is reported.
    call->session->receive(protocol::Request{0,
                                             "initialize",
                                             {{"protocolVersion", "2025-11-25"},
                                              {"capabilities", {{"elicitation", Json::object()}}},
                                              {"clientInfo", {{"name", "toolport-console"}, {"version", "1"}}}}});
    call->session->receive(protocol::Notification{"notifications/initialized", Json::object()});
    call->session->receive(protocol::Request{
        kCallRequestId,
        "tools/call",
        {{"name", tool}, {"arguments", std::move(arguments)}, {"_meta", {{"progressToken", "console-" + id}}}}});
    return id;
}

void Playground::on_message(const std::string& id, const Json& message) {
    auto it = calls_.find(id);
    if (it == calls_.end() || !message.is_object()) return;
    auto call = it->second;
    if (call->done) return;
    const auto method = message.value("method", std::string());
    const Json params = message.value("params", Json::object());
    if (method == "notifications/progress") {
        Json progress = {{"progress", params.value("progress", Json(nullptr))},
                         {"total", params.value("total", Json(nullptr))},
                         {"message", params.value("message", Json(nullptr))}};
        call->out->push(sse_event("progress", dump(progress)), nullptr);
        return;
    }
    if (method == "elicitation/create" && message.contains("id")) {
        const std::string question = std::to_string(++call->next_question);
        call->questions[question] = message["id"];
        call->out->push(sse_event("elicitation",
                                  dump(Json{{"elicitation_id", question},
                                            {"message", params.value("message", "")},
                                            {"requestedSchema", params.value("requestedSchema", Json::object())}})),
                        nullptr);
        return;
    }
    if (!method.empty() || !message.contains("id") || message["id"] != kCallRequestId) return;
    if (message.contains("result")) {
        call->out->push(sse_event("result", dump(message["result"])), nullptr);
    } else if (message.contains("error")) {
        const Json& error = message["error"];
        call->out->push(sse_event("error",
                                  dump(Json{{"code", error.value("code", 0)}, {"message", error.value("message", "")}})),
                        nullptr);
    } else {
        return;
    }
    // Closed once this delivery is over (the session is in the middle of sending).
    call->done = true;
    server_.executor().post([this, alive = std::weak_ptr<int>(alive_), id] {
        if (alive.lock()) finish(id);
    });
}

void Playground::finish(const std::string& id) {
    auto it = calls_.find(id);
    if (it == calls_.end()) return;
    auto call = it->second;
    calls_.erase(it);
    call->done = true;
    call->out->end();
    call->session->close();
}

void Playground::abandon(const std::string& id) { cancel(id); }

bool Playground::cancel(const std::string& id) {
    auto it = calls_.find(id);
    if (it == calls_.end() || it->second->done) return false;
    auto call = it->second;
    call->session->receive(
        protocol::Notification{"notifications/cancelled",
                               {{"requestId", kCallRequestId}, {"reason", "cancelled by the operator"}}});
    // A cancelled request gets no response: its end is said here.
    if (!call->done) {
        call->done = true;
        call->out->push(sse_event("error", dump(Json{{"code", protocol::error_code::kRequestCancelled},
                                                     {"message", "Request cancelled: cancelled by the operator"}})),
                        nullptr);
        server_.executor().post([this, alive = std::weak_ptr<int>(alive_), id] {
            if (alive.lock()) finish(id);
        });
    }
    return true;
}

Playground::Answered Playground::answer(const std::string& id, const std::string& elicitation_id, Json result) {
    auto it = calls_.find(id);
    if (it == calls_.end() || it->second->done) return Answered::no_call;
    auto call = it->second;
    auto q = call->questions.find(elicitation_id);
    if (q == call->questions.end()) return Answered::no_question;
    Json request_id = q->second;
    call->questions.erase(q);
    call->session->receive(protocol::Response{std::move(request_id), std::move(result)});
    return Answered::ok;
}

}  // namespace toolport::console
