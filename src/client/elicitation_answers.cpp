#include "client/elicitation_answers.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "protocol/jsonrpc.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

bool fits(const Json& definition, const Json& value) {
    const std::string type = definition.value("type", std::string());
    if (type == "string") {
        if (!value.is_string()) return false;
        auto choices = definition.find("enum");
        if (choices != definition.end() && choices->is_array()) {
            return std::find(choices->begin(), choices->end(), value) != choices->end();
        }
        return true;
    }
    if (type == "integer") return value.is_number_integer() || value.is_number_unsigned();
    if (type == "number") return value.is_number();
    if (type == "boolean") return value.is_boolean();
    if (type == "array") {
        if (!value.is_array()) return false;
        for (const auto& item : value) {
            if (!item.is_string()) return false;
        }
        return true;
    }
    return false;
}

Json with_action(const char* action) { return Json{{"action", action}}; }

}  // namespace

std::optional<ElicitationPolicy> parse_elicitation_policy(std::string_view text) {
    if (text == "defaults") return ElicitationPolicy::accept_defaults;
    if (text == "decline") return ElicitationPolicy::decline;
    if (text == "cancel") return ElicitationPolicy::cancel;
    return std::nullopt;
}

Json answer_elicitation(const Json& params, ElicitationPolicy policy) {
    if (policy == ElicitationPolicy::decline) return with_action("decline");
    if (policy == ElicitationPolicy::cancel) return with_action("cancel");
    if (!params.is_object() || params.value("mode", std::string("form")) != "form") return with_action("decline");
    const Json schema = params.value("requestedSchema", Json::object());
    const Json properties = schema.is_object() ? schema.value("properties", Json::object()) : Json::object();
    Json content = Json::object();
    if (properties.is_object()) {
        for (const auto& [name, definition] : properties.items()) {
            if (!definition.is_object()) continue;
            auto value = definition.find("default");
            if (value != definition.end() && fits(definition, *value)) content[name] = *value;
        }
    }
    const Json required = schema.is_object() ? schema.value("required", Json::array()) : Json::array();
    if (required.is_array()) {
        for (const auto& name : required) {
            if (!name.is_string() || !content.contains(name.get<std::string>())) return with_action("decline");
        }
    }
    return Json{{"action", "accept"}, {"content", std::move(content)}};
}

Json elicitation_capabilities() { return Json{{"elicitation", {{"form", Json::object()}}}}; }

namespace {

// Coroutines of their own (parameters copied into the frame), not capturing lambdas.
Task<Json> answer_request(std::string method, Json params, ElicitationPolicy policy) {
    if (method != "elicitation/create") {
        throw RpcError(protocol::error_code::kMethodNotFound, "Method not found: " + method);
    }
    co_return answer_elicitation(params, policy);
}

Task<Json> answer_inputs(Json input_requests, ElicitationPolicy policy) {
    Json answers = Json::object();
    for (const auto& [key, question] : input_requests.items()) {
        const std::string method = question.is_object() && question.contains("method") && question["method"].is_string()
                                       ? question["method"].get<std::string>()
                                       : std::string();
        if (method != "elicitation/create") {
            throw ClientError(fmt::format("the server asks {} ({}), which this client cannot answer",
                                          util::sanitize_for_message(key, 60),
                                          method.empty() ? "no method" : util::sanitize_for_message(method, 60)));
        }
        answers[key] = answer_elicitation(question.value("params", Json::object()), policy);
    }
    co_return answers;
}

}  // namespace

McpClient::RequestHandler elicitation_request_handler(ElicitationPolicy policy) {
    return [policy](const ServerRequest& request) { return answer_request(request.method, request.params, policy); };
}

std::function<Task<Json>(const Json& input_requests)> input_request_answerer(ElicitationPolicy policy) {
    return [policy](const Json& input_requests) { return answer_inputs(input_requests, policy); };
}

}  // namespace toolport::client
