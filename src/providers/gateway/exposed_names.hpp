// The names under which the gateway serves its upstreams' tools and prompts. Clients
// accept ^[a-zA-Z0-9_-]{1,64}$ (Claude, OpenAI, Bedrock cap at 64), upstreams send
// anything MCP allows (dots, 128 characters), and two upstreams may both have `search`.
//
//   conditional (default): an upstream's name is used as it is unless another upstream,
//                or another source of this server, has the same one; then every holder
//                of the name gets its prefix: "github_search", "gitlab_search".
//   always:      every name gets its prefix.
//   never:       no prefixes; on a collision the upstream listed first keeps the name and
//                the others' entry is left out (with a warning).
//
// A name longer than 64 characters is cut and ends in "_" + 6 hex digits of a hash of the
// upstream's prefix and its own name, so it stays the same on every listing whatever the
// order. The result depends only on the set of names, never on the order they came in.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "providers/gateway/gateway_settings.hpp"

namespace toolport::gateway {

struct NameRequest {
    std::string prefix;    // the upstream's prefix
    std::string original;  // the upstream's own name
    int upstream_order = 0;  // the upstream's place in the configuration (for `never`)
};

// One exposed name per request, index for index; "" for one left out (`never` mode
// collisions). `reserved`: names other sources of the server already use.
std::vector<std::string> expose_names(const std::vector<NameRequest>& requests, PrefixMode mode,
                                      const std::string& separator, const std::set<std::string>& reserved);

}  // namespace toolport::gateway
