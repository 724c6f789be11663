// Internal to the conformance pack: helpers shared by its files.
#pragma once

#include "server/registry.hpp"
#include "server/request_context.hpp"

namespace toolport::packs::conformance {

// A tool with an empty-object input schema.
ToolSpec simple_tool(std::string name, std::string description, ToolHandler handler);

// Adds the tool (or prompt) "test_dynamic_*" when absent and removes it when present, so
// each call changes the catalogue and a list_changed notification goes out.
void toggle_dynamic_tool(Registry& registry);
void toggle_dynamic_prompt(Registry& registry);

void add_stateless_tools(Registry& registry);

}  // namespace toolport::packs::conformance
