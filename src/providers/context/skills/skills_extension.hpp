// Serves the pattern library through the MCP Skills extension (SEP-2640):
//
//   capabilities.extensions["io.modelcontextprotocol/skills"] = {directoryRead: true}
//   skills/list                 every skill's entry (paged; an entry is never split)
//   skills/get                  one skill's entry by its SKILL.md URI (-32602 when unknown)
//   resources/directory/read    the children of skill://<category>, a skill, or a folder of one
//   resources/read              every file of a skill (skill://<category>/<name>/...)
//   resources/list              each skill's SKILL.md, kept current as the library changes
//                               (notifications/resources/list_changed)
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "providers/context/context_pack.hpp"
#include "providers/context/patterns/search_index.hpp"
#include "providers/context/skills/skill_catalog.hpp"
#include "server/registry.hpp"

namespace toolport::context {

class SkillsExtension {
public:
    explicit SkillsExtension(ContextPack& pack);

    // Declares the extension and its methods and lists the skills' SKILL.md resources.
    void serve(providers::SourceContext& context);
    // The index applied `changes` (called from any thread, with the index locked): the
    // listed resources are brought up to date on the event loop, by what changed alone.
    void library_changed(IndexChanges changes);

private:
    // Applies the changes gathered so far to the registry (on the event loop).
    void apply_pending();

    ContextPack& pack_;
    SkillCatalog catalog_;
    Registry* registry_ = nullptr;
    Executor* executor_ = nullptr;
    std::string source_;     // the context pack's source name: its resources' and methods'
    ResourceReader reader_;  // reads any file of a skill (the templates' and the listed SKILL.md files')
    std::map<std::string, std::string> listed_;  // SKILL.md URI → its description

    // Changes not yet applied: pattern id → its new state (nullopt: gone); with
    // pending_complete_, the whole library (what is not in it is gone).
    std::mutex pending_mutex_;
    std::map<std::string, std::optional<PatternHit>> pending_;
    bool pending_complete_ = false;
    bool apply_posted_ = false;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace toolport::context
