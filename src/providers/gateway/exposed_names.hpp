// The names under which the gateway serves its upstreams' tools and prompts. Clients
// accept ^[a-zA-Z0-9_-]{1,64}$ (Claude, OpenAI, Bedrock cap at 64), upstreams send
// anything MCP allows (dots, 128 characters), and two upstreams may both have `search`.
//
//   conditional (default): an upstream's name is used as it is unless an upstream
//                configured before it, or another source of this server, has the same
//                one; then it gets its prefix: "github_search" stays "search" when github
//                is configured first, gitlab's is "gitlab_search". A name never changes
//                because an upstream configured later lists it too: no upstream can
//                rename another's tools by what it lists.
//   always:      every name gets its prefix.
//   never:       no prefixes; on a collision the upstream configured first keeps the
//                name and the others' entry is left out (with a warning).
//
// Names that still meet after that (two originals of one upstream that differ only in
// characters made safe, a prefixed name equal to another upstream's plain one) are kept
// by the upstream configured first; the others end in "_" + 6 hex digits of a hash of the
// upstream's prefix and its own name. A name longer than 64 characters is cut and ends in
// such a hash too. The result depends on the set of names and the configuration order,
// never on the order the names came in.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "providers/gateway/gateway_settings.hpp"

namespace toolport::gateway {

struct NameRequest {
    std::string prefix;      // the upstream's prefix
    std::string original;    // the upstream's own name
    int upstream_order = 0;  // the upstream's place in the configuration (0: first)
    std::string upstream;    // its name, for messages ("": the prefix)
};

// One exposed name per request, index for index; "" for one left out (`never` mode
// collisions). `reserved`: names other sources of the server already use.
// `yielded_to`, when given, gets for each request the index of the request of an earlier
// upstream that kept the name it wanted (the reason it was prefixed or left out), or
// kNoCollision.
constexpr std::size_t kNoCollision = static_cast<std::size_t>(-1);
std::vector<std::string> expose_names(const std::vector<NameRequest>& requests, PrefixMode mode,
                                      const std::string& separator, const std::set<std::string>& reserved,
                                      std::vector<std::size_t>* yielded_to = nullptr);

}  // namespace toolport::gateway
