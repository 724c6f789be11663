// The HTTP rules of the stateless revision (2026-07-28): requests mirror their method and
// name in Mcp-Method / Mcp-Name headers, tool arguments marked x-mcp-header in
// Mcp-Param-<Name>, and the MCP-Protocol-Version header matches the version in _meta.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "server/stateless.hpp"

namespace toolport {

// Views of the request's header values: valid while the request is (the check is made
// while the endpoint answers it).
struct StatelessHeaders {
    std::string_view protocol_version;
    bool has_protocol_version = false;
    std::string_view method;
    bool has_method = false;
    std::string_view name;
    bool has_name = false;
    std::vector<std::pair<std::string_view, std::string_view>> params;  // Mcp-Param-<Name>: value
};

struct HeaderProblem {
    int http_status = 400;
    Json body;  // the JSON-RPC error to answer with
};

// The first rule `headers` break for `request`, if any.
std::optional<HeaderProblem> check_stateless_headers(const StatelessHeaders& headers, const protocol::Request& request,
                                                     const StatelessMeta& meta, const McpServer& server);

}  // namespace toolport
