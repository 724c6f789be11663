// ToolSet: a source's tools kept equal to a list the source computes again and again (a
// REST catalog fetched anew, an OpenAPI document re-read). Only the tools whose
// declaration changed are compiled and replaced, and the whole change is one registry
// batch, so clients hear one notifications/tools/list_changed for a real change and none
// for a refresh that found the same tools.
//
//   ToolSet tools(context);
//   std::vector<SyncedTool> fresh = ...;               // from the catalog
//   auto changes = tools.replace(std::move(fresh));     // {added, changed, removed, refused}
//
// With pinning on (providers/pin_guard.hpp), replace() is where every listing of
// these sources is checked against the approved definitions: what the source's policy
// withholds is not registered but kept as a stand-in whose calls say why, and the guard
// asks for the last listing again (install_again) once an approval changes the verdict.
//
// A declaration the registry refuses (a schema that does not compile, a bad name) is
// left out with a warning naming the tool: one bad tool never stops the others.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "providers/tool_declaration.hpp"

namespace toolport::pins {
class PinGuard;
}

namespace toolport::providers {

class SourceContext;

struct SyncedTool {
    ToolDeclaration declaration;
    // What the handler calls that the declaration does not show (the catalog's original
    // name, the endpoint, the method): a change here replaces the tool too.
    std::string target;
};

struct ToolSetChanges {
    int added = 0;
    int changed = 0;
    int removed = 0;
    int refused = 0;  // declarations left out (warned)
    bool any() const { return added + changed + removed > 0; }
};

class ToolSet {
public:
    explicit ToolSet(SourceContext& context);
    ~ToolSet();
    ToolSet(const ToolSet&) = delete;
    ToolSet& operator=(const ToolSet&) = delete;

    // Where the definitions come from, pinned with each of them (a gateway upstream's
    // command or URL and serverInfo): a different origin is a change of every tool.
    void set_identity(Json identity) { identity_ = std::move(identity); }

    // Makes the source's tools exactly `tools` (later duplicates of a name are refused).
    // `listed`: `tools` is what the source listed (false: a gateway upstream that has not
    // answered a listing yet), so pinning may remember an empty one as seen.
    ToolSetChanges replace(std::vector<SyncedTool> tools, bool listed = true);
    std::size_t size() const { return fingerprints_.size(); }
    bool contains(const std::string& name) const { return fingerprints_.count(name) > 0; }
    // Tools of the last listing that pinning withholds.
    std::size_t withheld() const { return withheld_.size(); }

private:
    ToolSetChanges install(std::vector<SyncedTool> tools);

    SourceContext& context_;
    std::map<std::string, std::string> fingerprints_;  // tool name → what it was declared with
    Json identity_;
    // With pinning: the last listing (installed again after an approval) and the names
    // withheld from it.
    std::vector<SyncedTool> last_;
    std::set<std::string> withheld_;
    bool listed_ = false;  // until replace(): an install after an approval lists nothing new
    int watch_ = 0;
    pins::PinGuard* guard_ = nullptr;
    std::weak_ptr<bool> guard_alive_;
};

}  // namespace toolport::providers
