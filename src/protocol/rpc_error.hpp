// RpcError: a JSON-RPC error, the one type for it on both sides of a connection.
//
// A server handler throws it to answer with exactly that error (-32602 for an unknown
// resource, -32021 for a missing client capability); a client request that the other side
// answered with an error ends with it, whichever side sent the request (McpClient's
// requests to a server, a ServerSession's sampling or elicitation request to its client).
// So a gateway passes an upstream's error on to its own client by rethrowing what it caught.
#pragma once

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace toolport::protocol {

struct RpcError : std::runtime_error {
    RpcError(int code, std::string message, nlohmann::json data = nullptr)
        : std::runtime_error(message), code(code), message(std::move(message)), data(std::move(data)) {}
    int code;
    std::string message;
    nlohmann::json data;  // null when the error carries none
    // True when the other side sent it, answering a request of ours (RpcPeer); false when
    // it was raised here to be sent. A tool whose sampling request the client refused
    // fails as a tool (isError), not with the client's error as if it were its own.
    bool from_peer = false;
};

}  // namespace toolport::protocol
