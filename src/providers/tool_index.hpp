// A searchable catalog of tools: BM25 over names (with their words apart), titles and
// descriptions, and parameter names, in an in-memory SQLite FTS5 table (the ranking the
// context pack's pattern library uses). The gateway's search_tools and the operator
// console's tool list search with it, so one query ranks the same in both.
//
//   ToolIndex index;
//   index.replace(tools);                                  // rebuilt: about a millisecond per few hundred
//   for (auto& hit : index.search("weather forecast", 10, visible)) ...
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "server/registry.hpp"

namespace toolport::providers {

class ToolIndex {
public:
    ToolIndex();  // throws SourceError when SQLite cannot open an in-memory database
    ~ToolIndex();
    ToolIndex(const ToolIndex&) = delete;
    ToolIndex& operator=(const ToolIndex&) = delete;

    // Indexes exactly these tools (by name).
    void replace(const std::map<std::string, std::shared_ptr<const ToolSpec>>& tools);

    struct Hit {
        std::string name;
        double score = 0;  // higher is better
    };
    using Visible = std::function<bool(const std::string& name)>;
    // Whether `query` has a word to match (else search finds nothing, whatever the tools).
    static bool searchable(const std::string& query);
    // Best first, at most `limit`, only names `visible` accepts; nothing for a query
    // without a word to match (the caller lists by name then).
    std::vector<Hit> search(const std::string& query, std::size_t limit, const Visible& visible) const;

private:
    struct Db;
    std::unique_ptr<Db> db_;
};

}  // namespace toolport::providers
