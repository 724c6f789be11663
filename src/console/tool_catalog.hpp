// GET api/tools: the whole served catalog with each tool's schemas, annotations, scopes,
// task support and its calls since the start; searched with the BM25 index the gateway's
// search_tools uses (providers/tool_index.hpp), filtered by profile and source.
#pragma once

#include <memory>
#include <string>

#include "observability/call_series.hpp"
#include "providers/tool_index.hpp"
#include "util/json.hpp"

namespace toolport {
class McpServer;
}

namespace toolport::console {

class ToolCatalog {
public:
    // Watches `server`'s registry (the index is rebuilt on the first search after a change).
    explicit ToolCatalog(McpServer& server, const observability::CallStats* stats = &observability::call_stats());
    ~ToolCatalog();
    ToolCatalog(const ToolCatalog&) = delete;
    ToolCatalog& operator=(const ToolCatalog&) = delete;

    struct Query {
        std::string q;        // words to rank by; empty: every tool by name
        std::string profile;  // a gateway profile's tools only
        std::string source;   // one source's tools only
    };
    // {"tools": [...], "profiles": [...], "sources": [...]}.
    Json list(const Query& query);

private:
    McpServer& server_;
    const observability::CallStats* stats_;
    std::unique_ptr<providers::ToolIndex> index_;
    int listener_ = -1;
    bool stale_ = true;
};

}  // namespace toolport::console
