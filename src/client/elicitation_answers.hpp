// How a client without a person at hand (the command line, scripts) answers a server's
// elicitation/create: accept with the defaults the requested schema gives (SEP-1034),
// decline, or cancel. The same answers serve the stateless revision, where the questions
// come as inputRequests of an input_required result.
//
//   McpClient::RequestHandler handler = elicitation_request_handler(ElicitationPolicy::accept_defaults);
//   options.on_input_required = input_request_answerer(ElicitationPolicy::accept_defaults);
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "client/mcp_client.hpp"

namespace toolport::client {

enum class ElicitationPolicy {
    accept_defaults,  // accept, with each field's default; decline when a required field has none
    decline,
    cancel,
};

// "defaults", "decline", "cancel"; nullopt for anything else.
std::optional<ElicitationPolicy> parse_elicitation_policy(std::string_view text);

// The ElicitResult for elicitation/create `params` ({message, requestedSchema} in form
// mode; URL mode is declined: nobody is there to open it). With accept_defaults the
// content holds every property of requestedSchema whose "default" fits its type (string,
// with an enum its members only; integer; number; boolean; an array of strings for
// multi-select); the answer is a decline when a required property has no usable default.
Json answer_elicitation(const Json& params, ElicitationPolicy policy);

// The capabilities a client answering this way declares: {"elicitation": {"form": {}}}.
Json elicitation_capabilities();

// Answers the server's elicitation/create requests (any other method: -32601).
McpClient::RequestHandler elicitation_request_handler(ElicitationPolicy policy);

// Answers the inputRequests of an input_required result: each elicitation/create as
// answer_elicitation does; any other question (sampling, roots) fails the request with a
// ClientError naming it.
std::function<Task<Json>(const Json& input_requests)> input_request_answerer(ElicitationPolicy policy);

}  // namespace toolport::client
