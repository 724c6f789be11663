// Upstreams from the JSON file other MCP clients keep their servers in, so a user can put
// Toolport in front of what they already run: `toolport serve --import FILE`.
//
//   Claude Desktop / Cursor / Windsurf:  {"mcpServers": {"name": {"command", "args", "env"}
//                                                      or {"url", "headers", "type"?}}}
//   VS Code (.vscode/mcp.json):           {"servers": {"name": {"type": "stdio"|"http"|"sse", ...}}}
//
// ${env:NAME} and ${NAME} in values are taken from the environment; a VS Code
// ${input:...} (which VS Code asks the user for) cannot be, and the server is refused
// with the reason. Names are made valid upstream names (other characters become '_').
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace toolport::gateway {

// The `upstreams:` mapping for the servers in `text` (JSON), as the configuration file
// would give it. `origin` names the file in messages. Throws providers::SettingsError.
nlohmann::json upstreams_from_mcp_servers(const std::string& text, const std::string& origin);

}  // namespace toolport::gateway
