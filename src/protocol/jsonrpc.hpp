// JSON-RPC 2.0 framing: parsing one wire payload into messages and building replies.
//
// Contract: parse_payload never throws. Whatever the bytes are (truncated, invalid UTF-8,
// absurdly deep, the wrong shape) it returns either messages or a ready-made error
// response that names what was wrong, so a transport can always answer and move on.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "protocol/json_text.hpp"
#include "protocol/request_id.hpp"

namespace toolport::protocol {

namespace error_code {
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
// MCP-specific codes.
inline constexpr int kResourceNotFound = -32002;  // 2024-11-05 .. 2025-11-25
inline constexpr int kUrlElicitationRequired = -32042;
// A request that ended without its result because the client cancelled it (the code LSP
// uses); only sent where a transport must still answer the HTTP request that carried it.
inline constexpr int kRequestCancelled = -32800;
inline constexpr int kHeaderMismatch = -32020;                   // 2026-07-28
inline constexpr int kMissingRequiredClientCapability = -32021;  // 2026-07-28
inline constexpr int kUnsupportedProtocolVersion = -32022;       // 2026-07-28
}  // namespace error_code

struct Request {
    RequestId id;
    std::string method;
    Json params;  // object or array, or null when absent
};

struct Notification {
    std::string method;
    Json params;
};

struct Response {
    RequestId id;
    Json result;
};

struct ErrorResponse {
    RequestId id;  // may be null when the request's id could not be read
    int code = 0;
    std::string message;
    Json data;
};

using Message = std::variant<Request, Notification, Response, ErrorResponse>;

// What the peer sent when it was malformed: the error to send back (id null unless the id
// could be recovered from an otherwise broken message).
struct ProtocolError {
    RequestId id;
    int code = 0;
    std::string message;
};

struct ParseLimits {
    std::size_t max_depth = 64;  // nesting of arrays/objects
    // Members of one batch. Each member may start a request, so this bounds the work one
    // payload can queue; a larger batch is refused as a whole.
    std::size_t max_batch_size = 1000;
};

struct ParsedPayload {
    bool is_batch = false;
    // One entry per message; a malformed member of a batch yields a ProtocolError entry.
    std::vector<std::variant<Message, ProtocolError>> items;
    // Set when the payload as a whole could not be read (then `items` is empty).
    std::optional<ProtocolError> fatal;
};

// Ids keep their exact value, even integers beyond 64 bits (request_id.hpp).
ParsedPayload parse_payload(std::string_view bytes, const ParseLimits& limits = {});

// Classifies one already-parsed JSON value as a JSON-RPC message, checking the type of
// every member: "jsonrpc" "2.0"; "id" a string or a number (or a big integer id; null only
// on an error response); "method" a string; "params" absent, an object or an array;
// "result" only on a response; "error" an object with an integer "code" and a string
// "message". A message with "method" must not carry "result" or "error". The error names
// the member and what it held, and carries the id when the id itself is usable.
std::variant<Message, ProtocolError> classify(Json value);

// Wire builders. serialize() (json_text.hpp) writes them.
Json make_response(const RequestId& id, Json result);
Json make_error(const RequestId& id, int code, std::string_view message, Json data = nullptr);
Json make_request(const RequestId& id, std::string_view method, Json params);
Json make_notification(std::string_view method, Json params);
Json to_json(const Message& message);

// Depth of the deepest array/object nesting, scanning raw bytes (strings skipped).
std::size_t max_nesting_depth(std::string_view bytes);

}  // namespace toolport::protocol
