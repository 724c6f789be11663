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

// A project as every context tool addresses it (`project`): its name under a projects root
// ("demo-app"; "group/app" for one further down), or its absolute path where that lies
// inside a projects root (what a local client has open). Both work over HTTP; a path
// outside every root is refused, whatever it is.
struct Project {
    fs::path dir;      // resolved (symlinks followed)
    std::string name;  // relative to its root: what results show, and what a later call may pass
};

// Resolves `project` (VALIDATION_ERROR: empty, not a name or an absolute path, outside every
// root, no such directory, or the root itself; FILESYSTEM_ERROR when no projects root can
// be read). Messages show no server path, and the suggestion names the projects there are.
Project resolve_project(std::string_view project, const std::vector<Root>& roots);

// The projects: each root's directories (not hidden, not symlinks), by name, first root
// first; a name an earlier root has is not listed again (resolve_project finds that one).
std::vector<Project> list_projects(const std::vector<Root>& roots);

// FILESYSTEM_ERROR when no projects root can be read: there is nothing to address or list.
void check_projects_roots(const std::vector<Root>& roots);

// "Projects here: demo-app, shop (listProjects lists them)." for a suggestion: at most a
// dozen names, or what to do when there is none.
std::string projects_hint(const std::vector<Root>& roots);

// Why a root cannot be served ("does not exist", "is not a directory", "cannot be read:
// Permission denied"), empty when it can. No path: callers name the root by its setting.
std::string root_problem(const Root& root);

}  // namespace toolport::context
