#include "providers/tool_set.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "providers/source.hpp"
#include "server/registry.hpp"

namespace toolport::providers {

namespace {

// Everything a client sees of the tool, plus where its calls go. Compared as text: cheap
// next to compiling the schema again.
std::string fingerprint(const SyncedTool& tool) {
    const auto& d = tool.declaration;
    Json shown = {{"t", d.title},
                  {"d", d.description},
                  {"i", d.input_schema},
                  {"o", d.output_schema},
                  {"a", d.annotations.to_json(d.title)},
                  {"e", d.execution},
                  {"m", d.meta},
                  {"s", d.service}};
    return shown.dump() + '\n' + tool.target;
}

}  // namespace

ToolSetChanges ToolSet::replace(std::vector<SyncedTool> tools) {
    ToolSetChanges changes;
    std::map<std::string, std::string> next;
    context_.registry().batch([&] {
        for (auto& tool : tools) {
            const std::string name = tool.declaration.name;
            if (next.count(name)) {
                spdlog::warn("source {}: a second tool named \"{}\" left out", context_.source_name(), name);
                ++changes.refused;
                continue;
            }
            std::string print = fingerprint(tool);
            auto old = fingerprints_.find(name);
            if (old != fingerprints_.end() && old->second == print) {
                next.emplace(name, std::move(print));
                continue;
            }
            try {
                context_.add_tool(std::move(tool.declaration));
            } catch (const SourceError& e) {
                spdlog::warn("{}; the tool is left out", e.what());
                ++changes.refused;
                // A tool that was served before and is now refused goes away (counted below).
                continue;
            }
            ++(old == fingerprints_.end() ? changes.added : changes.changed);
            next.emplace(name, std::move(print));
        }
        for (const auto& [name, print] : fingerprints_) {
            if (next.count(name)) continue;
            if (context_.remove_tool(name)) ++changes.removed;
        }
    });
    fingerprints_ = std::move(next);
    return changes;
}

}  // namespace toolport::providers
