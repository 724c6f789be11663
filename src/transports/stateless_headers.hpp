// The HTTP rules of the stateless revision (2026-07-28): requests mirror their method and
// name in Mcp-Method / Mcp-Name headers, tool arguments marked x-mcp-header in
// Mcp-Param-<Name>, and the MCP-Protocol-Version header matches the version in _meta.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "server/stateless.hpp"

namespace toolport {

struct StatelessHeaders {
    std::string protocol_version;
    bool has_protocol_version = false;
    std::string method;
    bool has_method = false;
    std::string name;
    bool has_name = false;
    std::vector<std::pair<std::string, std::string>> params;  // Mcp-Param-<Name>: value
};

struct HeaderProblem {
    int http_status = 400;
    Json body;  // the JSON-RPC error to answer with
};

// The first rule `headers` break for `request`, if any.
std::optional<HeaderProblem> check_stateless_headers(const StatelessHeaders& headers, const protocol::Request& request,
                                                     const StatelessMeta& meta, const McpServer& server);

}  // namespace toolport
