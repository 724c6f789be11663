// What an MCP client call can fail with. Every failure is a ClientError, so a caller that
// only wants a message catches that one type; the subclasses say what went wrong.
//
//   JsonRpcError    the server answered with a JSON-RPC error (code, message, data)
//   TransportError  the server could not be reached or went away (refused connection,
//                   dead child process, HTTP error status, session ended)
//   RequestTimeout  no answer within the request's timeout (the server was told to stop)
//   ResponseTooLarge  a response over the transport's max_message_bytes: refused on its
//                   Content-Length before reading, or cut off while reading (a
//                   TransportError; the pipeline answers it as MCP_RESPONSE_TOO_LARGE)
//
// A request cancelled through its CancelToken ends with OperationCancelled
// (async/completion.hpp), like everywhere else in Toolport.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace toolport::client {

using Json = nlohmann::json;

struct ClientError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct JsonRpcError : ClientError {
    JsonRpcError(int code, std::string message, Json data = nullptr)
        : ClientError(message), code(code), message(std::move(message)), data(std::move(data)) {}
    int code;
    std::string message;
    Json data;  // null when the error carried none
};

struct TransportError : ClientError {
    using ClientError::ClientError;
};

struct ResponseTooLarge : TransportError {
    ResponseTooLarge(const std::string& message, std::size_t size, std::size_t limit, bool read_so_far)
        : TransportError(message), size(size), limit(limit), read_so_far(read_so_far) {}
    std::size_t size;   // the announced size, or what was read before stopping
    std::size_t limit;
    bool read_so_far;   // true: stopped while reading (the whole response is larger)
};

struct RequestTimeout : ClientError {
    RequestTimeout(const std::string& method, std::chrono::milliseconds after)
        : ClientError("no answer to " + method + " within " + std::to_string(after.count()) + " ms"),
          timeout(after) {}
    std::chrono::milliseconds timeout;
};

}  // namespace toolport::client
