// Internal to the conformance pack: helpers shared by its files.
#pragma once

#include "providers/source.hpp"
#include "server/request_context.hpp"

namespace toolport::providers::conformance {

// A tool with an empty-object input schema.
ToolDeclaration simple_tool(std::string name, std::string description, ToolHandler handler);

// Adds the tool (or prompt) "test_dynamic_*" when absent and removes it when present, so
// each call changes the catalogue and a list_changed notification goes out.
void toggle_dynamic_tool(SourceContext& context);
void toggle_dynamic_prompt(Registry& registry, const std::string& source);

void add_stateless_tools(SourceContext& context);
void add_task_tools(SourceContext& context);

}  // namespace toolport::providers::conformance
