#include "providers/context/roots.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "providers/context/envelope.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

[[noreturn]] void invalid(const std::string& message, const std::string& suggestion = {}) {
    throw ContextError(ErrorCode::validation_error, message, suggestion);
}

bool is_within(const fs::path& inner, const fs::path& outer) {
    auto i = inner.begin();
    for (auto o = outer.begin(); o != outer.end(); ++o, ++i) {
        if (o->empty()) continue;  // a trailing separator
        if (i == inner.end() || *i != *o) return false;
    }
    return true;
}

}  // namespace

void check_name(std::string_view value, std::string_view what) {
    const std::string shown = util::sanitize_for_message(value, 80);
    if (value.empty()) invalid(fmt::format("{} is empty", what));
    if (value.size() > 255) invalid(fmt::format("{} is longer than 255 bytes", what));
    if (value == "." || value == "..") invalid(fmt::format("{} \"{}\" is not a name", what, shown));
    if (value.front() == '.')
        invalid(fmt::format("{} \"{}\" starts with '.' (hidden entries are not served)", what, shown));
    for (unsigned char c : value) {
        if (c == '/' || c == '\\') invalid(fmt::format("{} \"{}\" contains a path separator", what, shown));
        if (c < 0x20 || c == 0x7f) invalid(fmt::format("{} contains a NUL or control character", what));
    }
}

SkillId parse_skill_id(std::string_view id, std::string_view what) {
    const auto slash = id.find('/');
    if (slash == std::string_view::npos || id.find('/', slash + 1) != std::string_view::npos) {
        invalid(fmt::format("{} \"{}\" is not of the form \"category/name\"", what, util::sanitize_for_message(id, 80)),
                "Use an id from searchPatterns, e.g. \"database/rls-policy-generator\".");
    }
    SkillId out{std::string(id.substr(0, slash)), std::string(id.substr(slash + 1))};
    check_name(out.category, fmt::format("the category of {}", what));
    check_name(out.name, fmt::format("the name of {}", what));
    return out;
}

Root::Root(std::string label, fs::path path) : label_(std::move(label)), path_(std::move(path)) {}

bool Root::exists() const {
    std::error_code ec;
    return fs::is_directory(path_, ec);
}

fs::path Root::canonical() const {
    std::error_code ec;
    auto resolved = fs::weakly_canonical(path_, ec);
    return ec ? path_.lexically_normal() : resolved;
}

fs::path Root::resolve(const fs::path& relative) const {
    if (relative.is_absolute()) invalid(fmt::format("an absolute path is not allowed in the {}", label_));
    const fs::path base = canonical();
    std::error_code ec;
    fs::path resolved = fs::weakly_canonical(base / relative, ec);
    if (ec) resolved = (base / relative).lexically_normal();
    if (!is_within(resolved, base)) {
        invalid(fmt::format("{} leads outside the {} (a \"..\" or a symlink out of it)",
                            util::sanitize_for_message(relative.generic_string(), 120), label_));
    }
    return resolved;
}

bool Root::contains(const fs::path& resolved) const { return is_within(resolved, canonical()); }

std::string Root::display(const fs::path& p) const {
    const fs::path base = canonical();
    if (is_within(p, base)) {
        auto rel = p.lexically_relative(base);
        return rel.empty() || rel == "." ? std::string(".") : rel.generic_string();
    }
    return p.filename().generic_string();  // never a full path
}

// A client's absolute path in a message: only its last name (the rest says where the
// machine keeps things, which messages never do).
static std::string shown_path(const fs::path& given) {
    const std::string name = given.filename().empty() ? given.parent_path().filename().string()
                                                      : given.filename().string();
    return "…/" + util::sanitize_for_message(name, 80);
}

std::string root_problem(const Root& root) {
    std::error_code ec;
    const auto status = fs::status(root.path(), ec);
    if (ec || !fs::exists(status)) return "does not exist";
    if (!fs::is_directory(status)) return "is not a directory";
    fs::directory_iterator it(root.path(), ec);
    if (ec) return "cannot be read: " + ec.message();
    return {};
}

void check_projects_roots(const std::vector<Root>& roots) {
    std::string why;
    for (const auto& root : roots) {
        const std::string problem = root_problem(root);
        if (problem.empty()) return;
        if (why.empty()) why = problem;
    }
    throw ContextError(ErrorCode::filesystem_error,
                       fmt::format("the projects root {}", why.empty() ? "is not configured" : why),
                       "Ask the operator to create it or to point packs.context.projects_root (or "
                       "$TOOLPORT_CONTEXT_PROJECTS) at the folder that holds the projects.");
}

std::vector<Project> list_projects(const std::vector<Root>& roots) {
    std::vector<Project> out;
    std::set<std::string> seen;
    for (const auto& root : roots) {
        std::vector<Project> here;
        std::error_code ec;
        for (fs::directory_iterator it(root.path(), ec), end; !ec && it != end; it.increment(ec)) {
            const std::string name = it->path().filename().string();
            std::error_code type_ec;
            if (name.empty() || name[0] == '.' || it->is_symlink(type_ec) || !it->is_directory(type_ec)) continue;
            here.push_back({root.canonical() / name, name});
        }
        std::sort(here.begin(), here.end(), [](const Project& a, const Project& b) { return a.name < b.name; });
        for (auto& p : here) {
            if (seen.insert(p.name).second) out.push_back(std::move(p));
        }
    }
    return out;
}

std::string projects_hint(const std::vector<Root>& roots) {
    const auto projects = list_projects(roots);
    if (projects.empty()) return "There is no project under the projects root yet: create its folder there first.";
    std::string names;
    std::size_t shown = 0;
    for (const auto& p : projects) {
        if (shown == 12) {
            names += fmt::format(", … ({} more)", projects.size() - shown);
            break;
        }
        names += (shown++ == 0 ? "" : ", ") + util::sanitize_for_message(p.name, 80);
    }
    return fmt::format(
        "Pass project as one of: {} (listProjects lists them), or as the absolute path of a folder "
        "inside the projects root.",
        names);
}

Project resolve_project(std::string_view project, const std::vector<Root>& roots) {
    check_projects_roots(roots);
    if (project.empty()) invalid("project is required", projects_hint(roots));
    if (project.find('\0') != std::string_view::npos) invalid("project contains a NUL byte", projects_hint(roots));
    const fs::path given{std::string(project)};
    if (given.is_absolute()) {
        std::error_code ec;
        const fs::path resolved = fs::canonical(given, ec);
        for (const auto& root : roots) {
            if (ec || !root.contains(resolved) || resolved == root.canonical()) continue;
            if (!fs::is_directory(resolved, ec)) break;
            return {resolved, root.display(resolved)};
        }
        if (!ec && fs::is_directory(resolved, ec)) {
            bool is_root = false;
            for (const auto& root : roots) is_root = is_root || resolved == root.canonical();
            invalid(fmt::format("project {} is {}", shown_path(given),
                                is_root ? "the projects root itself, not a project in it"
                                        : "not inside the projects root"),
                    projects_hint(roots));
        }
        invalid(fmt::format("project {} is not an existing directory", shown_path(given)), projects_hint(roots));
    }
    // A name, or a relative path of names ("group/app"), under a root.
    fs::path relative;
    for (const auto& part : given) {
        const std::string name = part.string();
        if (name.empty()) continue;  // a trailing separator
        try {
            check_name(name, "project");
        } catch (const ContextError& e) {
            invalid(e.what(), projects_hint(roots));
        }
        relative /= part;
    }
    for (const auto& root : roots) {
        fs::path dir;
        try {
            dir = root.resolve(relative);  // a symlink out of the root is refused here
        } catch (const ContextError& e) {
            invalid(e.what(), projects_hint(roots));
        }
        std::error_code ec;
        if (fs::is_directory(dir, ec)) return {dir, root.display(dir)};
    }
    invalid(fmt::format("no project named {} under the projects root", util::sanitize_for_message(project, 100)),
            projects_hint(roots));
}

}  // namespace toolport::context
