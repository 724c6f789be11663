// Multi round-trip requests (MRTR, 2026-07-28): instead of sending a request to the
// client mid-call, the server answers `resultType: "input_required"` with the questions
// (`inputRequests`) and an opaque, signed `requestState`. The client retries the original
// request with `inputResponses` and the state; the handler runs again from the start and
// this time finds its answers.
//
// Answers from earlier rounds travel inside requestState (HMAC-SHA256 signed with the
// server's state key, so a client cannot forge or alter them), which makes the handler
// replay deterministic without the server keeping anything between rounds.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/control_signal.hpp"
#include "server/request_context.hpp"

namespace toolport {

class McpServer;

// Thrown by RequestContext::ask_client in the stateless revision when answers are missing.
// A control signal, not a std::exception: a handler's catch-all for failures cannot
// swallow it (see async/control_signal.hpp).
struct InputRequired : ControlSignal {
    InputRequired() : ControlSignal("input required") {}
    Json requests = Json::object();  // key -> {method, params}
    Json answered = Json::object();  // key -> answer, from this and earlier rounds
};

// Returns the answers for `requests` (numbered from `first_index`), or throws InputRequired.
std::vector<Json> collect_input_responses(RequestContext& ctx, const std::vector<ClientRequest>& requests,
                                          int first_index);

// The InputRequiredResult for `e`.
Json input_required_result(const InputRequired& e, RequestContext& ctx);

// requestState encoding (exposed for tests).
std::string seal_request_state(const std::string& key, const Json& state);
std::optional<Json> open_request_state(const std::string& key, const std::string& sealed);

}  // namespace toolport
