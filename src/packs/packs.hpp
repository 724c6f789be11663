// Built-in packs: named bundles of tools, resources and prompts that `--packs` switches on.
#pragma once

#include <string>
#include <vector>

namespace toolport {

class McpServer;

std::vector<std::string> known_packs();
// Registers pack `name` on `server`; returns false when no pack has that name.
bool install_pack(const std::string& name, McpServer& server);

namespace packs {
// The tools, resources and prompts the official MCP conformance suite drives.
void install_conformance(McpServer& server);
}  // namespace packs

}  // namespace toolport
