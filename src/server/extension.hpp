// What a protocol extension (SEP-2133) adds to the server: methods of its own, declared
// with McpServer::add_extension (or SourceContext::add_extension from a source).
#pragma once

#include <functional>
#include <string>

#include "server/request_context.hpp"

namespace toolport {

// A method an extension adds (SEP-2133), e.g. the Skills extension's skills/list. The
// handler returns the result; an RpcError becomes a JSON-RPC error.
struct ExtensionMethod {
    std::function<Task<Json>(RequestContext&)> handler;
    // Its results carry the list-caching attributes (ttlMs, cacheScope) from 2026-07-28.
    bool cacheable = false;
    // The source whose extension it is (McpServer::add_extension): served only to callers
    // that see the source. Empty: the server's own.
    std::string source = {};
};

}  // namespace toolport
