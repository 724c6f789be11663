// Reading a catalog's answers: one page of tool definitions in any of the three formats
// (OpenAI function, bare {name, description, parameters}, MCP Tool), and where the next
// page is. Pure functions over JSON: the source does the requests.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "providers/rest/catalog_settings.hpp"

namespace toolport::rest {

// The answer is not a catalog page (success false, no tool array, not an object). The
// message is safe to log (the API's own message, cut and sanitized).
struct CatalogError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One tool as the catalog defines it, before repair and naming.
struct CatalogTool {
    std::string name;         // the catalog's own name (AgentPMT: the product id), sent back on calls
    std::string title;        // display name: MCP `title`, or the description's part before " — "
    std::string description;  // without the display-name prefix
    Json input_schema;        // as sent (may be null or non-standard)
    Json output_schema;       // MCP format only
    Json annotations;         // MCP format only
};

struct CatalogPage {
    std::vector<CatalogTool> tools;
    // Entries that are not tool definitions (no name, wrong types): one line each.
    std::vector<std::string> skipped;
    bool has_next = false;  // page pagination
    std::string next_url;   // next pagination: "" at the end
};

// The value at a dotted path ("details.has_next_page", "response.data.output"; "" is the
// value itself); nullptr when any step is missing.
const Json* find_path(const Json& value, std::string_view dotted_path);
inline Json* find_path(Json& value, std::string_view dotted_path) {
    return const_cast<Json*>(find_path(static_cast<const Json&>(value), dotted_path));
}

// Reads one page, taking the schemas out of `answer` (a catalog of 1,000 tools is
// megabytes of parse tree: moved, not copied). Throws CatalogError when the answer
// refuses (success false) or has no tool array where the settings say.
CatalogPage parse_catalog_page(Json answer, const ListSettings& list);

// One entry in `format` (automatic: by its shape), its schemas moved out; nullopt with
// `why` when it is not a tool.
std::optional<CatalogTool> parse_catalog_tool(Json& entry, ToolFormat format, std::string& why);

}  // namespace toolport::rest
