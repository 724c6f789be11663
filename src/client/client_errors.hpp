// What an MCP client call can fail with: an RpcError when the server answered with a
// JSON-RPC error (code, message, data; protocol/rpc_error.hpp, the same type a server
// handler throws, so a gateway passes an upstream's error on as it caught it), and
// otherwise a ClientError, whose subclasses say what went wrong:
//
//   TransportError  the server could not be reached or went away (refused connection,
//                   dead child process, HTTP error status, session ended)
//   RequestTimeout  no answer within the request's timeout (the server was told to stop)
//   InputRequiredError  a stateless request the server answered with "input_required"
//                   that the client could not complete (no handler, or too many rounds)
//
// and ResponseTooLarge (not a ClientError): an answer over the transport's
// max_message_bytes, refused on its Content-Length before reading or cut off while
// reading. It is the HTTP client's type (http_client/response_too_large.hpp), used for
// every transport, so a caller catches one type.
//
// A request cancelled through its CancelToken ends with OperationCancelled
// (async/completion.hpp), like everywhere else in Toolport.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>

#include "http_client/response_too_large.hpp"
#include "protocol/rpc_error.hpp"
#include "util/json.hpp"

namespace toolport::client {

struct ClientError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

using protocol::RpcError;

struct TransportError : ClientError {
    using ClientError::ClientError;
};

using http_client::ResponseTooLarge;

// The server still wants answers (resultType "input_required", 2026-07-28) and the client
// gives up: the request had no RequestOptions::on_input_required, or the server kept
// asking for kMaxInputRounds rounds. Holds the server's last questions and state, so a
// caller can pass them on (e.g. a gateway to its own client).
struct InputRequiredError : ClientError {
    InputRequiredError(const std::string& message, Json input_requests, Json request_state)
        : ClientError(message), input_requests(std::move(input_requests)), request_state(std::move(request_state)) {}
    Json input_requests;  // {key: {"method": ..., "params": ...}}
    Json request_state;   // the server's requestState as sent (null when it sent none)
};

struct RequestTimeout : ClientError {
    RequestTimeout(const std::string& method, std::chrono::milliseconds after)
        : ClientError("no answer to " + method + " within " + std::to_string(after.count()) + " ms"), timeout(after) {}
    std::chrono::milliseconds timeout;
};

}  // namespace toolport::client
