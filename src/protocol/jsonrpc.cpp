#include "protocol/jsonrpc.hpp"

#include <fmt/format.h>

#include "protocol/json_reader.hpp"

namespace toolport::protocol {

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

ParsedPayload parse_payload(std::string_view bytes, const ParseLimits& limits) {
    ParsedPayload out;
    Json value;
    try {
        value = parse_json_keeping_ids(bytes, limits.max_depth);
    } catch (const JsonTooDeep&) {
        // The reader stopped at the limit; the message names the document's whole depth.
        out.fatal = ProtocolError{nullptr, error_code::kInvalidRequest,
                                  fmt::format("Invalid Request: JSON nesting depth {} exceeds the limit of {}",
                                              max_nesting_depth(bytes), limits.max_depth)};
        return out;
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
        if (value.size() > limits.max_batch_size) {
            out.fatal = ProtocolError{
                nullptr, error_code::kInvalidRequest,
                fmt::format("Invalid Request: a batch may hold at most {} messages; this one has {} \u2014 send it "
                            "in smaller batches",
                            limits.max_batch_size, value.size())};
            return out;
        }
        out.items.reserve(value.size());
        for (auto& element : value) out.items.push_back(classify(std::move(element)));
        return out;
    }
    out.items.push_back(classify(std::move(value)));
    return out;
}

// Every message is built member by member in the order its keys sort, each placed at the
// end of the object with the end as hint: no lookup at all (operator[] with a C-string key
// looked each one up first, measuring the key at every comparison, then assigned it), and
// no initializer list (which copies every member into a temporary array first, then checks
// that it looks like an object).
Json make_response(const RequestId& id, Json result) {
    Json j = Json::object();
    auto& members = j.get_ref<Json::object_t&>();
    members.emplace_hint(members.end(), "id", id);
    members.emplace_hint(members.end(), "jsonrpc", "2.0");
    members.emplace_hint(members.end(), "result", std::move(result));
    return j;
}

Json make_error(const RequestId& id, int code, std::string_view message, Json data) {
    Json err = Json::object();
    auto& fields = err.get_ref<Json::object_t&>();
    fields.emplace_hint(fields.end(), "code", code);
    if (!data.is_null()) fields.emplace_hint(fields.end(), "data", std::move(data));
    fields.emplace_hint(fields.end(), "message", std::string(message));
    Json j = Json::object();
    auto& members = j.get_ref<Json::object_t&>();
    members.emplace_hint(members.end(), "error", std::move(err));
    members.emplace_hint(members.end(), "id", id);
    members.emplace_hint(members.end(), "jsonrpc", "2.0");
    return j;
}

Json make_request(const RequestId& id, std::string_view method, Json params) {
    Json j = Json::object();
    auto& members = j.get_ref<Json::object_t&>();
    members.emplace_hint(members.end(), "id", id);
    members.emplace_hint(members.end(), "jsonrpc", "2.0");
    members.emplace_hint(members.end(), "method", std::string(method));
    if (!params.is_null()) members.emplace_hint(members.end(), "params", std::move(params));
    return j;
}

Json make_notification(std::string_view method, Json params) {
    Json j = Json::object();
    auto& members = j.get_ref<Json::object_t&>();
    members.emplace_hint(members.end(), "jsonrpc", "2.0");
    members.emplace_hint(members.end(), "method", std::string(method));
    if (!params.is_null()) members.emplace_hint(members.end(), "params", std::move(params));
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
