// What a pin is made of, and how a listing compares with the pins of its source.
//
// A tool's pin is the SHA-256 of the RFC 8785 canonical form (util/canonical_json.hpp) of
//   {name, title, description, inputSchema, outputSchema, annotations, source}
// where `source` is the identity of where the definition came from: for a gateway upstream
// its command and arguments (or URL) and the serverInfo name and version it announced;
// for other sources their kind and location. A second digest leaves the name out: a tool
// served under another name keeps it, which is how a rename is told from a new tool.
// Resource templates and prompts are pinned the same way with their own fields.
//
// classify() compares a listing with the pins:
//   - a source with no pins yet: everything is first sight (trust on first use);
//   - same digest under the same name: pinned, nothing to say;
//   - the same definition (body digest) pinned under another name: renamed (two tools
//     that swap names are each "renamed from" the other);
//   - a pinned name with another digest: changed (which parts, in one line);
//   - a name the pinned source never had: added.
// A pin whose tool is gone stays: a tool that comes back is judged against it.
#pragma once

#include <string>
#include <vector>

#include "providers/tool_declaration.hpp"
#include "stores/pin_store.hpp"

namespace toolport::pins {

using stores::PinMap;
using stores::PinRecord;

// The record of `definition` (an object without "name"; it is added) of `kind` under
// `name`: digests computed, time and approver left empty.
PinRecord make_pin(std::string kind, std::string name, Json definition);

// A tool's definition as pinned (the Tool object's fields, and `identity` as "source").
Json tool_definition(const providers::ToolDeclaration& tool, const Json& identity);

enum class Finding { pinned, first_sight, changed, renamed, added };
std::string_view finding_name(Finding finding);

struct Classified {
    PinRecord current;
    Finding finding = Finding::pinned;
    std::string detail;  // changed / renamed / added: one line for logs and errors
};

// `current` (one source's listing) against `pinned` (that source's pins).
std::vector<Classified> classify(const PinMap& pinned, const std::vector<PinRecord>& current);

// The parts of two definitions that differ, e.g. "description, inputSchema changed";
// a changed source identity is spelled out (its fields are the operator's, not the
// upstream's prose).
std::string describe_difference(const Json& before, const Json& after);

}  // namespace toolport::pins
