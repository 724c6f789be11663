// classify(): one parsed JSON value → a JSON-RPC message, or the error naming what is wrong.
#include <climits>

#include <fmt/format.h>

#include "protocol/jsonrpc.hpp"
#include "util/json_release.hpp"

namespace toolport::protocol {

namespace {

// What a member held, for error messages: the type and, for scalars, the value (strings
// JSON-escaped and cut short: the peer chose them).
std::string describe(const Json& v) {
    switch (v.type()) {
        case Json::value_t::null: return "null";
        case Json::value_t::boolean: return v.get<bool>() ? "boolean true" : "boolean false";
        case Json::value_t::array: return "array";
        case Json::value_t::object: return "object";
        case Json::value_t::binary:
            if (is_big_integer_id(v)) return "number " + std::string(big_integer_id_digits(v));
            return "binary";
        case Json::value_t::string: {
            const auto& text = v.get_ref<const std::string&>();
            constexpr std::size_t kShown = 40;
            Json shown = text.size() > kShown ? text.substr(0, kShown) + "..." : text;
            return "string " + shown.dump(-1, ' ', true, Json::error_handler_t::replace);
        }
        case Json::value_t::discarded: return "invalid";
        default: return "number " + v.dump();
    }
}

bool fits_int(const Json& code) {
    if (code.is_number_unsigned()) return code.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX);
    const auto n = code.get<std::int64_t>();
    return n >= INT_MIN && n <= INT_MAX;
}

// Why an "error" member is not an error object, or an empty string when it is one.
std::string error_object_problem(const Json& error) {
    if (!error.is_object()) {
        return "\"error\" must be an object with an integer \"code\" and a string \"message\", got " + describe(error);
    }
    auto code = error.find("code");
    if (code == error.end()) return "\"error\" needs an integer \"code\"; it has none";
    if (!code->is_number_integer()) return "\"error\" needs an integer \"code\", got " + describe(*code);
    if (!fits_int(*code)) return "\"error\" needs a \"code\" that fits in 32 bits, got " + describe(*code);
    auto message = error.find("message");
    if (message == error.end()) return "\"error\" needs a string \"message\"; it has none";
    if (!message->is_string()) return "\"error\" needs a string \"message\", got " + describe(*message);
    return {};
}

}  // namespace

std::variant<Message, ProtocolError> classify(Json value) {
    // What is left of the message once its parts are moved out is freed without nlohmann's
    // heap stack (util/json_release.hpp), on every way out.
    struct Release {
        Json& value;
        ~Release() { util::release_json(value); }
    } release{value};
    if (!value.is_object()) {
        return ProtocolError{nullptr, error_code::kInvalidRequest,
                             "Invalid Request: a JSON-RPC message must be an object, got " + describe(value)};
    }
    // The members that matter, found in one pass over the few a message has (a lookup per
    // name measured a C-string key at every comparison; this is every message's path).
    Json* id_member = nullptr;
    Json* version = nullptr;
    Json* method_member = nullptr;
    Json* result_member = nullptr;
    Json* error_member = nullptr;
    Json* params_member = nullptr;
    for (auto& [key, member] : value.get_ref<Json::object_t&>()) {
        if (key == std::string_view("id")) id_member = &member;
        else if (key == std::string_view("jsonrpc")) version = &member;
        else if (key == std::string_view("method")) method_member = &member;
        else if (key == std::string_view("result")) result_member = &member;
        else if (key == std::string_view("error")) error_member = &member;
        else if (key == std::string_view("params")) params_member = &member;
    }
    // The id first: every later error carries it, when it is one.
    const bool has_id = id_member != nullptr;
    const bool usable_id = has_id && is_valid_id(*id_member);
    auto invalid = [&](std::string_view problem) -> std::variant<Message, ProtocolError> {
        return ProtocolError{usable_id ? *id_member : Json(nullptr), error_code::kInvalidRequest,
                             fmt::format("Invalid Request: {}", problem)};
    };

    if (!version) return invalid("\"jsonrpc\" must be exactly \"2.0\"; it is missing");
    if (!version->is_string() || version->get_ref<const std::string&>() != "2.0") {
        return invalid("\"jsonrpc\" must be exactly \"2.0\", got " + describe(*version));
    }

    const bool has_method = method_member != nullptr;
    const bool has_result = result_member != nullptr;
    const bool has_error = error_member != nullptr;
    if (has_method && (has_result || has_error)) {
        return invalid(fmt::format(
            "a message with \"method\" is a request or a notification and must not carry \"{}\"; only a response "
            "does",
            has_result ? "result" : "error"));
    }
    // A null id is legal only on an error response (about a request whose id was unreadable).
    if (has_id && !usable_id && !(id_member->is_null() && has_error && !has_result)) {
        return invalid(fmt::format("\"id\" must be a string or a number{}, got {}", has_error ? " (or null)" : "",
                                   describe(*id_member)));
    }

    if (has_method) {
        if (!method_member->is_string()) return invalid("\"method\" must be a string, got " + describe(*method_member));
        Json params = nullptr;
        if (params_member) {
            // JSON-RPC 2.0 §4.2: params, when present, MUST be structured (null is not).
            if (!params_member->is_object() && !params_member->is_array()) {
                return invalid("\"params\" must be an object or an array (or absent), got " + describe(*params_member));
            }
            params = std::move(*params_member);
        }
        std::string method = std::move(method_member->get_ref<std::string&>());
        if (has_id) return Message{Request{std::move(*id_member), std::move(method), std::move(params)}};
        return Message{Notification{std::move(method), std::move(params)}};
    }

    if (has_result && has_error) return invalid("a response carries \"result\" or \"error\", not both");
    if (has_result) {
        if (!has_id) return invalid("a response needs an \"id\"; this one with \"result\" has none");
        return Message{Response{std::move(*id_member), std::move(*result_member)}};
    }
    if (has_error) {
        if (auto problem = error_object_problem(*error_member); !problem.empty()) return invalid(problem);
        Json& error = *error_member;
        ErrorResponse e;
        e.id = has_id ? std::move(*id_member) : Json(nullptr);
        e.code = error["code"].get<int>();
        e.message = std::move(error["message"].get_ref<std::string&>());
        if (auto data = error.find("data"); data != error.end()) e.data = std::move(*data);
        return Message{std::move(e)};
    }
    return invalid("missing \"method\" (or \"result\"/\"error\" for a response)");
}

}  // namespace toolport::protocol
