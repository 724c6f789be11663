// The URIs under which the gateway serves its upstreams' skills (the Skills extension,
// SEP-2640). A skill is its SKILL.md's URI minus "/SKILL.md" (its root) and every file of
// it lies under that root. An upstream's skill keeps its URIs unless an earlier source
// (the server's own skills, an upstream configured before it) has a skill of the same
// name; then its root gets the upstream's prefix as a first path segment:
//
//   skill://database/rls-policy/SKILL.md  →  skill://github/database/rls-policy/SKILL.md
//
// which keeps everything SEP-2640 asks of a skill URI (the skill:// scheme, the last
// segment its name, a reg-name authority) and is undone by the root it maps to. A URI of
// another scheme gets the prefix as the gateway's other resources do ("github+git://...").
// Nothing here knows about the server: gateway_skills.cpp serves it.
#pragma once

#include <optional>
#include <string>

#include "util/json.hpp"

namespace toolport::gateway {

// The root of the skill whose SKILL.md is `skill_md`: nullopt when it does not end in
// "/SKILL.md" after a scheme and at least one segment.
std::optional<std::string> skill_root(const std::string& skill_md);
// The last segment of a root: the skill's name by SEP-2640's rule.
std::string skill_root_name(const std::string& root);
// `root` in the namespace of the upstream with `prefix`.
std::string namespaced_skill_root(const std::string& prefix, const std::string& root);
// `uri` moved from under `from` to under `to` (equal to it, or below it after a "/"):
// nullopt when it is not under `from`.
std::optional<std::string> rebase_uri(const std::string& uri, const std::string& from, const std::string& to);
// A skill entry ({uri, frontmatter, resources}) with its URIs moved from `from` to `to`;
// the digests, sizes and frontmatter are left exactly as they came. A file the entry lists
// outside its own root is left as it is.
Json rebase_skill_entry(Json entry, const std::string& from, const std::string& to);

}  // namespace toolport::gateway
