#include "providers/context/context_settings.hpp"

#include <cstdlib>

#include "providers/context/roots.hpp"
#include "providers/context/envelope.hpp"

namespace toolport::context {

namespace {

std::string env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        auto end = text.find(separator, start);
        if (end == std::string::npos) end = text.size();
        if (end > start) out.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

}  // namespace

std::filesystem::path expand_home(const std::string& path) {
    if (path == "~" || path.rfind("~/", 0) == 0) {
        const std::string home = env("HOME");
        return std::filesystem::path(home.empty() ? "/" : home) / path.substr(path.size() > 1 ? 2 : 1);
    }
    return path;
}

ContextSettings ContextSettings::from(const providers::SourceSettings& settings) {
    settings.only_keys({"patterns_root", "projects_root", "projects_roots", "categories", "index_file", "watch",
                        "skill_timeout_ms", "skill_cpu_seconds", "skill_memory_mb", "skill_file_size_mb",
                        "skill_output_kb", "skill_scratch_mb", "skill_bwrap", "skill_allow_unsandboxed",
                        "skill_trust_client_code"});
    ContextSettings s;
    if (auto root = settings.string("patterns_root")) s.patterns_root = expand_home(*root);
    else if (auto from_env = env("TOOLPORT_CONTEXT_PATTERNS"); !from_env.empty()) s.patterns_root = expand_home(from_env);
    else s.patterns_root = expand_home("~/.shared-patterns");

    std::vector<std::string> projects;
    if (auto one = settings.string("projects_root")) projects.push_back(*one);
    if (auto many = settings.list("projects_roots")) projects.insert(projects.end(), many->begin(), many->end());
    if (projects.empty()) projects = split(env("TOOLPORT_CONTEXT_PROJECTS"), ':');
    if (projects.empty()) projects.push_back("~/Dev");
    for (const auto& p : projects) {
        auto path = expand_home(p);
        if (!path.is_absolute()) settings.fail("projects_root", "must be an absolute path (or start with ~/)");
        s.projects_roots.push_back(path);
    }
    if (!s.patterns_root.is_absolute()) settings.fail("patterns_root", "must be an absolute path (or start with ~/)");

    if (auto categories = settings.list("categories")) {
        if (categories->empty()) settings.fail("categories", "must list at least one category");
        for (const auto& c : *categories) {
            try {
                check_name(c, "category");
            } catch (const ContextError& e) {
                settings.fail("categories", e.what());
            }
        }
        s.categories = *categories;
    }
    if (auto index = settings.string("index_file")) {
        s.index_file = expand_home(*index);
        if (!s.index_file.is_absolute()) settings.fail("index_file", "must be an absolute path (or start with ~/)");
    }
    if (auto watch = settings.boolean("watch")) s.watch = *watch;
    if (auto ms = settings.integer("skill_timeout_ms", 100, 600000)) s.skill.timeout = std::chrono::milliseconds(*ms);
    if (auto cpu = settings.integer("skill_cpu_seconds", 1, 3600)) s.skill.cpu_seconds = static_cast<int>(*cpu);
    if (auto mb = settings.integer("skill_memory_mb", 16, 65536)) s.skill.memory_bytes = *mb << 20;
    if (auto mb = settings.integer("skill_file_size_mb", 1, 65536)) s.skill.file_size_bytes = *mb << 20;
    if (auto kb = settings.integer("skill_output_kb", 1, 65536)) s.skill.output_bytes = static_cast<std::size_t>(*kb) << 10;
    if (auto mb = settings.integer("skill_scratch_mb", 1, 65536)) s.skill.scratch_bytes = *mb << 20;
    if (auto bwrap = settings.string("skill_bwrap")) {
        s.skill_policy.bwrap = expand_home(*bwrap).string();
        if (!std::filesystem::path(s.skill_policy.bwrap).is_absolute()) {
            settings.fail("skill_bwrap", "must be an absolute path (or start with ~/)");
        }
    }
    if (auto allow = settings.boolean("skill_allow_unsandboxed")) s.skill_policy.allow_unsandboxed = *allow;
    if (auto trust = settings.boolean("skill_trust_client_code")) s.skill_policy.trust_client_code = *trust;
    return s;
}

}  // namespace toolport::context
