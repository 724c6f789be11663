// The directories the context pack serves from — the pattern library and the projects
// roots — and the checks every path into them passes: ids made of plain names (no "..",
// no separators, no NUL, no control characters), and, once symlinks are resolved, a path
// that is still inside its root. Messages name paths relative to their root.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::context {

namespace fs = std::filesystem;

// One name of an id ("database", "rls-policy", "2025-10-15-auth"): VALIDATION_ERROR
// unless it is 1-255 bytes, not "." or "..", without '/', '\\', NUL or control
// characters, and does not start with '.' (hidden entries are never served).
void check_name(std::string_view value, std::string_view what);

// "category/name" → its two names, each checked.
struct SkillId {
    std::string category;
    std::string name;
    std::string str() const { return category + "/" + name; }
};
SkillId parse_skill_id(std::string_view id, std::string_view what = "skillId");

class Root {
public:
    // `label` names the root in messages ("pattern library", "projects root").
    Root(std::string label, fs::path path);

    const std::string& label() const { return label_; }
    // The root as configured, and resolved (symlinks followed; as configured while it
    // does not exist).
    const fs::path& path() const { return path_; }
    fs::path canonical() const;
    bool exists() const;

    // root/relative, with symlinks resolved, if it stays inside the root; else
    // VALIDATION_ERROR. The target need not exist.
    fs::path resolve(const fs::path& relative) const;
    // Whether an already resolved path lies inside (or is) the root.
    bool contains(const fs::path& resolved) const;
    // `p` relative to the root ("database/rls-policy.md"), for messages and results.
    std::string display(const fs::path& p) const;

private:
    std::string label_;
    fs::path path_;
};

// An absolute project directory given by a client (projectPath): it must exist and, with
// symlinks resolved, lie inside one of `roots`. Returns the resolved path; else
// VALIDATION_ERROR.
fs::path resolve_project_path(std::string_view project_path, const std::vector<Root>& roots);

// A project given by name (`project`): the first root with a directory of that name.
// SESSION_NOT_FOUND-style lookups are the caller's; this returns an empty path when no
// root has it.
fs::path find_project(std::string_view name, const std::vector<Root>& roots);

}  // namespace toolport::context
