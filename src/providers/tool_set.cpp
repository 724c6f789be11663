#include "providers/tool_set.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "providers/source.hpp"
#include "server/registry.hpp"
#include "util/digest.hpp"

namespace toolport::providers {

namespace {

// Everything a client sees of the tool, plus where its calls go, as a SHA-256: cheap next
// to compiling the schema again, and 64 bytes a tool kept instead of the whole text.
std::string fingerprint(const SyncedTool& tool) {
    const auto& d = tool.declaration;
    // The parts one after another, each ended by a byte no JSON text or name contains.
    std::string text;
    for (const std::string& part : {d.title, d.description, d.service, tool.target}) {
        text += part;
        text += '\x1f';
    }
    for (const Json* part : {&d.input_schema, &d.output_schema, &d.execution, &d.meta, &d.icons}) {
        text += part->dump();
        text += '\x1f';
    }
    text += d.annotations.to_json(d.title).dump();
    return util::sha256_hex(text);
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
