// What a pin is made of, and how a listing compares with the pins of its source.
//
// A tool's pin is the SHA-256 of the RFC 8785 canonical form (util/canonical_json.hpp) of
//   {name, title, description, inputSchema, outputSchema, annotations, source}
// where `source` is the identity of where the definition came from: for a gateway upstream
// its command and arguments (or URL) and the serverInfo name and version it announced;
// for other sources their kind and location. A second digest leaves the name out: a tool
// served under another name keeps it, which is how a rename is told from a new tool.
// Resource templates and prompts are pinned the same way with their own fields: a prompt
//   {name, title, description, arguments, source}
// and a resource template, named by its URI template,
//   {uriTemplate, name, title, description, mimeType, annotations, source}
// (its "name" is a part of the definition like its title; renamed means another uriTemplate).
// Each kind is judged against the pins of its kind only: a prompt and a tool of one name are
// two pins ("prompt:review", "tool:review").
//
// classify() compares a listing with the pins:
//   - a source with no pins of the kind yet, never seen listing that kind: everything is
//     first sight (trust on first use); a source seen listing none of the kind (its
//     "seen:<kind>" marker, pin_guard.hpp) has been seen, and what it lists later is added;
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

// The kinds of definitions pinned, as they appear in keys and messages.
inline constexpr const char* kToolKind = "tool";
inline constexpr const char* kPromptKind = "prompt";
inline constexpr const char* kTemplateKind = "template";
// The kind of the marker that says a source was seen listing none of a kind (its name is
// that kind): pin_guard.hpp.
inline constexpr const char* kSeenKind = "seen";

// The member of a `kind`'s definition that names it: "uriTemplate" for a resource
// template, "name" for the others. The body digest leaves it out.
std::string_view name_field(std::string_view kind);

// The record of `definition` (an object; its name_field is set to `name`) of `kind` under
// `name`: digests computed, time and approver left empty.
PinRecord make_pin(std::string kind, std::string name, Json definition);

// A tool's definition as pinned (the Tool object's fields, and `identity` as "source").
Json tool_definition(const providers::ToolDeclaration& tool, const Json& identity);
// A prompt's, from the Prompt object an upstream listed: title, description and its
// arguments (name, title, description, required: what a client is served).
Json prompt_definition(const Json& prompt, const Json& identity);
// A resource template's, from the ResourceTemplate object: name, title, description,
// mimeType, annotations (the uriTemplate is the record's name).
Json template_definition(const Json& resource_template, const Json& identity);

enum class Finding { pinned, first_sight, changed, renamed, added };
std::string_view finding_name(Finding finding);

struct Classified {
    PinRecord current;
    Finding finding = Finding::pinned;
    std::string detail;  // changed / renamed / added: one line for logs and errors
};

// `current` (one source's listing of one kind) against `pinned` (that source's pins of
// the kind). `seen`: the source was seen listing none of the kind, so an empty `pinned`
// is no first sight.
std::vector<Classified> classify(const PinMap& pinned, const std::vector<PinRecord>& current, bool seen = false);

// The parts of two definitions that differ, e.g. "description, inputSchema changed";
// a changed source identity is spelled out (its fields are the operator's, not the
// upstream's prose). `name_field` (the definition's name) is left out.
std::string describe_difference(const Json& before, const Json& after, std::string_view name_field = "name");

}  // namespace toolport::pins
