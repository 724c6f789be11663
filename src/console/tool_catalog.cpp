#include "console/tool_catalog.hpp"

#include <cmath>
#include <set>

#include "server/server.hpp"

namespace toolport::console {

namespace {

Json rounded(const std::optional<double>& ms) {
    if (!ms) return nullptr;
    return std::round(*ms * 1000.0) / 1000.0;
}

std::string task_support(const ToolSpec& tool) {
    if (tool.execution.is_object()) {
        auto it = tool.execution.find("taskSupport");
        if (it != tool.execution.end() && it->is_string()) return it->get<std::string>();
    }
    return "forbidden";
}

}  // namespace

ToolCatalog::ToolCatalog(McpServer& server, const observability::CallStats* stats)
    : server_(server), stats_(stats), index_(std::make_unique<providers::ToolIndex>()) {
    listener_ = server_.registry().add_listener([this](CatalogKind kind) {
        if (kind == CatalogKind::tools) stale_ = true;
    });
}

ToolCatalog::~ToolCatalog() { server_.registry().remove_listener(listener_); }

Json ToolCatalog::list(const Query& query) {
    const auto& tools = server_.registry().tools();
    auto keep = [&](const ToolSpec& tool) {
        return (query.source.empty() || tool.source == query.source) &&
               (query.profile.empty() || server_.in_view(query.profile, tool));
    };
    // Ranked by the words of `q`, else every tool by name.
    std::vector<std::shared_ptr<const ToolSpec>> chosen;
    if (providers::ToolIndex::searchable(query.q)) {
        if (stale_) {
            index_->replace(tools);
            stale_ = false;
        }
        auto hits = index_->search(query.q, tools.size(), [&](const std::string& name) {
            auto it = tools.find(name);
            return it != tools.end() && keep(*it->second);
        });
        for (const auto& hit : hits) chosen.push_back(tools.at(hit.name));
    } else {
        for (const auto& [name, tool] : tools) {
            if (keep(*tool)) chosen.push_back(tool);
        }
    }
    Json list = Json::array();
    for (const auto& tool : chosen) {
        Json entry = {{"name", tool->name},
                      {"title", tool->title},
                      {"source", tool->source},
                      {"description", tool->description},
                      {"inputSchema", tool->input_schema},
                      {"outputSchema", tool->output_schema},
                      {"annotations", tool->annotations.is_null() ? Json::object() : tool->annotations},
                      {"scopes", server_.tool_scopes(*tool)},
                      {"task_support", task_support(*tool)}};
        const auto* totals = stats_ ? stats_->find_tool(tool->name) : nullptr;
        const auto counts = totals ? totals->read() : observability::StepCounts{};
        entry["calls"] = counts.calls;
        entry["errors"] = counts.errors;
        entry["p50_ms"] = rounded(observability::LatencyBins::quantile(counts.latency, 0.5));
        entry["p99_ms"] = rounded(observability::LatencyBins::quantile(counts.latency, 0.99));
        list.push_back(std::move(entry));
    }
    Json profiles = Json::array();
    for (const auto& view : server_.view_names()) {
        Json names = Json::array();
        for (const auto& [name, tool] : tools) {
            if (server_.in_view(view, *tool)) names.push_back(name);
        }
        profiles.push_back({{"name", view}, {"tools", std::move(names)}});
    }
    std::set<std::string> sources;
    for (const auto& [name, tool] : tools) {
        if (!tool->source.empty()) sources.insert(tool->source);
    }
    return {{"tools", std::move(list)}, {"profiles", std::move(profiles)}, {"sources", sources}};
}

}  // namespace toolport::console
