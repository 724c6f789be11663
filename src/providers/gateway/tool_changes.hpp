// What changed in an upstream's tool between two listings, in one bounded line for the
// log. An upstream that rewrites a tool's description or schema while it is served (a
// prompt injection, a silent change of behaviour) is worth a warning that says which part
// changed, never a dump of what the upstream sent: each changed part is named with the
// first hex digits of its SHA-256 before and after and its size, and a changed text with
// a short, sanitized excerpt from where it starts to differ.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace toolport::gateway {

// "" when nothing a client sees changed; else e.g.
// `description changed (sha256 1a2b3c4d -> 5e6f7a8b, 57 -> 312 bytes, from byte 40: "...")`,
// parts separated by "; ". At most about 1.5 KB whatever the tool holds.
std::string describe_tool_change(const nlohmann::json& before, const nlohmann::json& after);

}  // namespace toolport::gateway
