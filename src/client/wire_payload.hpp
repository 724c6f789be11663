// Reading what a server put on the wire (a stdio line, an HTTP JSON body, the data of an
// SSE event) into JSON-RPC message values. Shared by the stdio and HTTP transports.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::client {

struct WirePayload {
    std::vector<nlohmann::json> messages;  // a batch array yields its members, in order
    std::string error;                     // set (and messages empty) when the text is not usable JSON
};

// A reply's result.content and result.structuredContent are read as raw JSON
// (protocol/raw_json.hpp: checked, kept as text). Never throws. Nesting deeper than 128 levels is refused before parsing (a hostile server
// must not exhaust the stack).
WirePayload decode_wire_payload(std::string_view text);

}  // namespace toolport::client
