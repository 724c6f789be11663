// Tool search mode (`gateway.tool_search: true`): instead of hundreds of upstream tools,
// the gateway serves two: `search_tools` (the aggregated catalog ranked by BM25 over
// names, descriptions and parameter names — SQLite FTS5, the ranking the context pack's
// pattern library uses) and `call_tool` (calls a tool found that way). A client that
// takes only its first 40 tools (Cursor) can still reach every one, and a model's
// context holds two schemas instead of the whole catalog.
//
// A tool called through call_tool runs through the pipeline as itself: its own schema
// validation, its upstream's breaker, budget and deadline. A caller in a view (a gateway
// profile, chosen by URL path or token) finds and calls only that view's tools.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "providers/source.hpp"
#include "providers/tool_index.hpp"
#include "providers/tool_set.hpp"

namespace toolport::gateway {

class ToolSearch {
public:
    explicit ToolSearch(providers::SourceContext& context);
    ~ToolSearch();

    // Registers search_tools and call_tool.
    void declare();
    static std::vector<std::string> meta_tool_names() { return {"search_tools", "call_tool"}; }

    // A tool that pinning withholds (providers/pin_guard.hpp): not found by search_tools,
    // and call_tool of it answers MCP_TOOL_QUARANTINED with `message` and `suggestion`.
    struct Withheld {
        providers::SyncedTool tool;
        std::string message;
        std::string suggestion;
    };

    // The searchable tools: every upstream's, as they would otherwise be served (each
    // declaration's service is its upstream), and those withheld from them. Declarations
    // that do not compile are left out with a warning.
    void replace(std::vector<std::vector<providers::SyncedTool>> tools, std::vector<Withheld> withheld = {});
    std::shared_ptr<const ToolSpec> tool(const std::string& name) const;

    struct Hit {
        std::string name;
        double score = 0;
    };
    // Which tools a caller may see (its profile's, McpServer::visible).
    using Visible = std::function<bool(const ToolSpec& tool)>;
    // Best first, only tools `visible` accepts; an empty query lists them by name.
    std::vector<Hit> search(const std::string& query, std::size_t limit, const Visible& visible) const;
    // How many of the tools `visible` accepts.
    std::size_t count(const Visible& visible) const;

private:
    void rebuild_index();

    providers::SourceContext& context_;
    std::map<std::string, std::shared_ptr<const ToolSpec>> tools_;
    // Withheld tools by name: the stand-in's spec (whose view judges who may hear of it)
    // and what a call is answered.
    struct Held {
        std::shared_ptr<const ToolSpec> spec;
        std::string message;
        std::string suggestion;
    };
    std::map<std::string, Held> withheld_;
    providers::ToolIndex index_;
};

}  // namespace toolport::gateway
