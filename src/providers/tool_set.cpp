#include "providers/tool_set.hpp"

#include <set>

#include <spdlog/spdlog.h>

#include "providers/pin_definition.hpp"
#include "providers/pin_guard.hpp"
#include "providers/source.hpp"
#include "server/tool_error.hpp"
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

ToolSet::ToolSet(SourceContext& context) : context_(context) {
    if (auto* guard = context_.pins(); guard && guard->policy(context_.source_name()) != pins::PinPolicy::off) {
        guard_ = guard;
        guard_alive_ = guard->alive();
        watch_ = guard->watch(context_.source_name(), [this] {
            auto changes = install(last_);
            if (changes.any()) {
                spdlog::info("source {}: pins changed: {} tools served ({} added, {} changed, {} removed, {} withheld)",
                             context_.source_name(), size(), changes.added, changes.changed, changes.removed,
                             withheld_.size());
            }
        });
    }
}

ToolSet::~ToolSet() {
    // The guard may be gone already (this set kept alive by work queued on the loop).
    if (watch_ && !guard_alive_.expired()) guard_->unwatch(watch_);
}

ToolSetChanges ToolSet::replace(std::vector<SyncedTool> tools, bool listed) {
    if (watch_) last_ = tools;  // a copy: handlers and all, for install_again
    listed_ = listed;
    return install(std::move(tools));
}

ToolSetChanges ToolSet::install(std::vector<SyncedTool> tools) {
    // The pins' verdict first: the withheld tools are not registered.
    std::set<std::string> withheld;
    if (watch_) {
        std::vector<stores::PinRecord> records;
        std::set<std::string> names;
        for (const auto& tool : tools) {
            const auto& d = tool.declaration;
            if (!names.insert(d.name).second) continue;  // a second of a name is refused below
            records.push_back(pins::make_pin(pins::kToolKind, d.name, pins::tool_definition(d, identity_)));
        }
        auto screening = context_.pins()->screen(context_.source_name(), pins::kToolKind, records, listed_);
        for (auto& w : screening.withheld) {
            context_.withhold_tool(w.name, ToolErrorCode::tool_quarantined, std::move(w.message),
                                   std::move(w.suggestion));
            withheld.insert(w.name);
        }
    }
    for (const auto& name : withheld_) {
        if (!withheld.count(name)) context_.release_withheld(name);
    }
    withheld_ = withheld;
    ToolSetChanges changes;
    std::map<std::string, std::string> next;
    context_.registry().batch([&] {
        for (auto& tool : tools) {
            const std::string name = tool.declaration.name;
            if (withheld.count(name)) continue;  // removed below if it was served
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
