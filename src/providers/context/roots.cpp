#include "providers/context/roots.hpp"

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
    if (value.front() == '.') invalid(fmt::format("{} \"{}\" starts with '.' (hidden entries are not served)", what, shown));
    for (unsigned char c : value) {
        if (c == '/' || c == '\\') invalid(fmt::format("{} \"{}\" contains a path separator", what, shown));
        if (c < 0x20 || c == 0x7f) invalid(fmt::format("{} contains a NUL or control character", what));
    }
}

SkillId parse_skill_id(std::string_view id, std::string_view what) {
    const auto slash = id.find('/');
    if (slash == std::string_view::npos || id.find('/', slash + 1) != std::string_view::npos) {
        invalid(fmt::format("{} \"{}\" is not of the form \"category/name\"", what, util::sanitize_for_message(id, 80)),
                "Use an id from searchPatterns, e.g. \"database/rls-policy\".");
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
    const std::string name = given.filename().empty() ? given.parent_path().filename().string() : given.filename().string();
    return "…/" + util::sanitize_for_message(name, 80);
}

fs::path resolve_project_path(std::string_view project_path, const std::vector<Root>& roots) {
    if (project_path.find('\0') != std::string_view::npos) invalid("projectPath contains a NUL byte");
    const fs::path given{std::string(project_path)};
    if (!given.is_absolute()) {
        invalid("projectPath must be an absolute path",
                "Pass the project's absolute directory, e.g. the one your editor has open.");
    }
    std::error_code ec;
    const fs::path resolved = fs::canonical(given, ec);
    if (ec || !fs::is_directory(resolved, ec)) {
        invalid(fmt::format("projectPath {} is not an existing directory", shown_path(given)));
    }
    for (const auto& root : roots) {
        if (root.contains(resolved) && resolved != root.canonical()) return resolved;
    }
    invalid(fmt::format("projectPath {} is not inside a configured projects root", shown_path(given)),
            "Use a project directory under the projects root (packs.context.projects_root in the configuration).");
}

fs::path find_project(std::string_view name, const std::vector<Root>& roots) {
    check_name(name, "project");
    for (const auto& root : roots) {
        const fs::path dir = root.resolve(std::string(name));
        std::error_code ec;
        if (fs::is_directory(dir, ec)) return dir;
    }
    return {};
}

}  // namespace toolport::context
