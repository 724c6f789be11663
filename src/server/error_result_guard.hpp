// The guarantee every tool result gives a schema-validating client (the TypeScript SDK
// 1.x, the MCP Inspector): an isError result carries either no structuredContent or one
// that matches the tool's declared outputSchema. Clients check an error result's
// structuredContent against the outputSchema too; one that does not match makes them
// throw "-32602 Structured content does not match the tool's output schema" and the
// error text, with its code and suggestion, never reaches the model.
//
// Applied where tool results leave the engine (tool_call_reply, ToolSpec::error_result),
// so it holds for every source: built-in packs, REST catalogs, OpenAPI operations and the
// gateway's pass-through of upstream results.
#pragma once

#include "server/content.hpp"

namespace toolport {

struct ToolSpec;

// Where a dropped structuredContent goes: result._meta["toolport/error"] (no client
// validates _meta against a schema), so its fields stay machine-readable.
inline constexpr const char* kDroppedErrorMetaKey = "toolport/error";

// Moves `result`'s structuredContent to _meta["toolport/error"] when it is an error result
// whose structuredContent does not validate against `tool`'s outputSchema (or that schema
// cannot be compiled); the text stays, and when there was none, the JSON becomes the text.
// With `report` (a result the source made: its own error shape does not fit its own
// schema) it is logged and counted (toolport_error_structured_content_dropped_total{tool});
// the engine's own error fields (ToolError) are moved for every tool whose success schema
// they do not fit, which is the design, not news. Returns whether it moved anything.
// Whether `structured` is valid against the tool's outputSchema (compiled here, leniently, for
// a tool whose schema is compiled lazily; a schema that does not compile: false).
bool matches_output_schema(const ToolSpec& tool, const Json& structured);

bool guard_error_result(const ToolSpec& tool, ToolResult& result, bool report = true);

}  // namespace toolport
