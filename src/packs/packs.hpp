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
// Tools that misbehave on demand (sleep, fail, huge results), for the pipeline's tests.
void install_testing(McpServer& server);
// The testing pack exists only when the environment says TOOLPORT_TEST_PACK=1.
bool testing_pack_enabled();
}  // namespace packs

}  // namespace toolport
