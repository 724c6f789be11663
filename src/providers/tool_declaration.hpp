// Declaring a tool: what a source fills in (name, description, schemas, hints, handler)
// and nothing it has to remember (which source it is, compiling the schemas).
//
//   context.add_tool({
//       .name = "search_tango_contracts",
//       .description = "Search federal contract awards ...",
//       .input_schema = contracts_input_schema(),
//       .output_schema = contracts_output_schema(),
//       .annotations = {.read_only = true, .open_world = true},
//       .handler = [this](RequestContext& ctx, const Json& args) { return search_contracts(ctx, args); },
//       .service = "tango",
//   });
//
// The schemas are compiled when the tool is declared: a schema that does not compile stops
// the source at start with the tool's name, instead of failing its first call.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

#include "server/registry.hpp"

namespace toolport::providers {

// A source could not start (a schema that does not compile, a bad tool name, settings it
// cannot use). The message names the source and what is wrong.
struct SourceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// The behaviour hints of MCP's ToolAnnotations; unset hints are not sent.
struct ToolAnnotations {
    std::optional<bool> read_only;    // readOnlyHint: changes nothing (results may be cached)
    std::optional<bool> destructive;  // destructiveHint: may delete or overwrite
    std::optional<bool> idempotent;   // idempotentHint: repeating it changes nothing more
    std::optional<bool> open_world;   // openWorldHint: reaches a world outside the server

    // The annotations object, with `title` when given; null when nothing is set.
    Json to_json(const std::string& title) const;
};

struct ToolDeclaration {
    std::string name;         // 1-128 of [A-Za-z0-9_.-], as the specification recommends
    std::string title;        // optional display name
    std::string description;  // what, from where, limits, related tools: models read it
    Json input_schema = Json{{"type", "object"}};
    Json output_schema;  // null: the tool returns no structuredContent
    ToolAnnotations annotations;
    ToolHandler handler;
    // The downstream service it calls (rate limits and circuit breakers are per service);
    // empty for tools that call nothing outside the process.
    std::string service;
    Json execution;  // {taskSupport?}
    Json meta;       // _meta of the Tool object
    Json icons;      // [{src, mimeType?, sizes?, theme?}] (2025-11-25); null: none
    // Adjusts a result the pipeline serves from its cache (optional; see ToolSpec).
    std::function<void(ToolResult& result)> on_cache_hit;
    // Renders the pipeline's refusals in the tool's own result shape (see ToolSpec).
    std::function<ToolResult(const ToolError& error)> on_error;
    // Awaits RequestContext::pace_downstream_request before each request (see ToolSpec).
    bool paces_downstream = false;
    // The input schema is still checked when the tool is declared, but compiled for
    // validation only when the tool is first called (the validation stage keeps it then).
    // For sources with hundreds of tools of which a session calls a few (REST catalogs,
    // OpenAPI documents): a compiled schema costs a few KiB, a 1,000-tool catalog megabytes.
    bool compile_on_first_call = false;
};

// The registry entry for `declaration`, registered by source `source`. Throws SourceError
// for a bad name, a missing handler or a schema that does not compile.
ToolSpec make_tool_spec(ToolDeclaration declaration, const std::string& source);

}  // namespace toolport::providers
