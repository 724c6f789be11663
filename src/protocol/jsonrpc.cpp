#include "protocol/jsonrpc.hpp"

#include <fmt/format.h>

namespace toolport::protocol {

namespace {

ProtocolError invalid(const Json& object, std::string message) {
    RequestId id = nullptr;
    if (object.is_object()) {
        auto it = object.find("id");
        if (it != object.end() && is_valid_id(*it)) id = *it;
    }
    return ProtocolError{std::move(id), error_code::kInvalidRequest, std::move(message)};
}

const char* type_name(const Json& v) {
    switch (v.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::boolean: return "boolean";
        case Json::value_t::string: return "string";
        case Json::value_t::array: return "array";
        case Json::value_t::object: return "object";
        case Json::value_t::discarded: return "invalid";
        default: return "number";
    }
}

}  // namespace

std::size_t max_nesting_depth(std::string_view bytes) {
    std::size_t depth = 0, deepest = 0;
    bool in_string = false, escaped = false;
    for (char c : bytes) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        switch (c) {
            case '"': in_string = true; break;
            case '[':
            case '{':
                if (++depth > deepest) deepest = depth;
                break;
            case ']':
            case '}':
                if (depth > 0) --depth;
                break;
            default: break;
        }
    }
    return deepest;
}

std::variant<Message, ProtocolError> classify(Json value) {
    if (!value.is_object()) {
        return ProtocolError{nullptr, error_code::kInvalidRequest,
                             fmt::format("Invalid Request: a JSON-RPC message must be an object, got {}",
                                         type_name(value))};
    }
    auto version = value.find("jsonrpc");
    if (version == value.end() || !version->is_string() || *version != "2.0") {
        return invalid(value, "Invalid Request: \"jsonrpc\" must be exactly \"2.0\"");
    }
    auto id_it = value.find("id");
    const bool has_id = id_it != value.end();
    // A null id is legal only on an error response (about a request whose id was unreadable).
    const bool null_id_error = has_id && id_it->is_null() && value.contains("error") && !value.contains("method");
    if (has_id && !is_valid_id(*id_it) && !null_id_error) {
        return ProtocolError{nullptr, error_code::kInvalidRequest,
                             fmt::format("Invalid Request: \"id\" must be a string or a number, got {}",
                                         type_name(*id_it))};
    }

    auto method_it = value.find("method");
    if (method_it != value.end()) {
        if (!method_it->is_string()) {
            return invalid(value, "Invalid Request: \"method\" must be a string");
        }
        Json params = nullptr;
        if (auto p = value.find("params"); p != value.end()) {
            if (!p->is_object() && !p->is_array() && !p->is_null()) {
                return invalid(value, "Invalid Request: \"params\" must be an object");
            }
            params = std::move(*p);
        }
        std::string method = method_it->get<std::string>();
        if (has_id) return Message{Request{std::move(*id_it), std::move(method), std::move(params)}};
        return Message{Notification{std::move(method), std::move(params)}};
    }

    auto result_it = value.find("result");
    auto error_it = value.find("error");
    const bool has_result = result_it != value.end();
    const bool has_error = error_it != value.end();
    if (has_result && has_error) {
        return invalid(value, "Invalid Request: a response carries \"result\" or \"error\", not both");
    }
    if (has_result) {
        if (!has_id) return invalid(value, "Invalid Request: a response needs an \"id\"");
        return Message{Response{std::move(*id_it), std::move(*result_it)}};
    }
    if (has_error) {
        const Json& err = *error_it;
        if (!err.is_object() || !err.contains("code") || !err["code"].is_number_integer() ||
            !err.contains("message") || !err["message"].is_string()) {
            return invalid(value, "Invalid Request: \"error\" must be an object with integer \"code\" and string \"message\"");
        }
        ErrorResponse e;
        e.id = has_id ? std::move(*id_it) : Json(nullptr);
        e.code = err["code"].get<int>();
        e.message = err["message"].get<std::string>();
        if (auto d = err.find("data"); d != err.end()) e.data = *d;
        return Message{std::move(e)};
    }
    return invalid(value, "Invalid Request: missing \"method\" (or \"result\"/\"error\" for a response)");
}

ParsedPayload parse_payload(std::string_view bytes, const ParseLimits& limits) {
    ParsedPayload out;
    if (auto depth = max_nesting_depth(bytes); depth > limits.max_depth) {
        out.fatal = ProtocolError{nullptr, error_code::kInvalidRequest,
                                  fmt::format("Invalid Request: JSON nesting depth {} exceeds the limit of {}",
                                              depth, limits.max_depth)};
        return out;
    }
    Json value;
    try {
        value = parse_json_keeping_ids(bytes);
    } catch (const Json::exception& e) {
        // Syntax errors, invalid UTF-8, and numbers out of range (1e999) all land here;
        // the last one is thrown by nlohmann even when asked not to throw.
        std::string detail = e.what();
        // nlohmann prefixes "[json.exception.parse_error.101] "; keep the readable part.
        if (auto pos = detail.find("] "); pos != std::string::npos) detail = detail.substr(pos + 2);
        out.fatal = ProtocolError{nullptr, error_code::kParseError, "Parse error: " + detail};
        return out;
    }
    if (value.is_array()) {
        out.is_batch = true;
        if (value.empty()) {
            out.fatal = ProtocolError{nullptr, error_code::kInvalidRequest, "Invalid Request: empty batch"};
            return out;
        }
        out.items.reserve(value.size());
        for (auto& element : value) out.items.push_back(classify(std::move(element)));
        return out;
    }
    out.items.push_back(classify(std::move(value)));
    return out;
}

Json make_response(const RequestId& id, Json result) {
    Json j = Json::object();
    j["jsonrpc"] = "2.0";
    j["id"] = id;
    j["result"] = std::move(result);
    return j;
}

Json make_error(const RequestId& id, int code, std::string_view message, Json data) {
    Json err = {{"code", code}, {"message", std::string(message)}};
    if (!data.is_null()) err["data"] = std::move(data);
    Json j = Json::object();
    j["jsonrpc"] = "2.0";
    j["id"] = id;
    j["error"] = std::move(err);
    return j;
}

Json make_request(const RequestId& id, std::string_view method, Json params) {
    Json j = {{"jsonrpc", "2.0"}, {"id", id}, {"method", std::string(method)}};
    if (!params.is_null()) j["params"] = std::move(params);
    return j;
}

Json make_notification(std::string_view method, Json params) {
    Json j = {{"jsonrpc", "2.0"}, {"method", std::string(method)}};
    if (!params.is_null()) j["params"] = std::move(params);
    return j;
}

Json to_json(const Message& message) {
    return std::visit(
        [](const auto& m) -> Json {
            using M = std::decay_t<decltype(m)>;
            if constexpr (std::is_same_v<M, Request>) return make_request(m.id, m.method, m.params);
            else if constexpr (std::is_same_v<M, Notification>) return make_notification(m.method, m.params);
            else if constexpr (std::is_same_v<M, Response>) return make_response(m.id, m.result);
            else return make_error(m.id, m.code, m.message, m.data);
        },
        message);
}

}  // namespace toolport::protocol
