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

#include <atomic>
#include <map>
#include <memory>
#include <string>

#include "providers/context/context_pack.hpp"
#include "providers/context/skills/skill_catalog.hpp"

namespace toolport::context {

class SkillsExtension {
public:
    explicit SkillsExtension(ContextPack& pack);

    // Declares the extension and its methods and lists the skills' SKILL.md resources.
    void serve(providers::SourceContext& context);
    // The library changed (called from any thread): the listed resources are brought up
    // to date on the event loop.
    void library_changed();

private:
    void sync_resources();

    ContextPack& pack_;
    SkillCatalog catalog_;
    Registry* registry_ = nullptr;
    Executor* executor_ = nullptr;
    std::map<std::string, std::string> listed_;  // SKILL.md URI → its description
    std::atomic<bool> sync_posted_{false};
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace toolport::context
