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

namespace keys {
using namespace config;
const Key patterns_root = string_key("patterns_root",
                                     "The pattern library (absolute, or ~/...); unset: "
                                     "$TOOLPORT_CONTEXT_PATTERNS, else the default.",
                                     "~/.shared-patterns");
const Key projects_root = string_key("projects_root", "One projects root (absolute, or ~/...).");
const Key projects_roots = list_key("projects_roots",
                                    "More projects roots; none at all: $TOOLPORT_CONTEXT_PROJECTS "
                                    "(colon-separated), else ~/Dev.");
const Key categories = list_key("categories", "The pattern categories.",
                                "database, security, ui, backend, testing, architecture, mcp-integration");
const Key index_file = string_key("index_file",
                                  "The pattern index file (absolute, or ~/...); unset: derived from the "
                                  "cache directory and patterns_root.");
const Key watch = boolean_key("watch", "Watch the library and the projects for changes.", "true");
const Key skill_timeout_ms = duration_key("skill_timeout_ms", "ms", 100, 600000, "A skill run's wall-clock limit.",
                                          "10000");
const Key skill_cpu_seconds = integer_key("skill_cpu_seconds", 1, 3600, "A skill run's CPU time limit.", "10");
const Key skill_memory_mb = integer_key("skill_memory_mb", 16, 65536, "A skill run's memory limit (MiB).", "512");
const Key skill_file_size_mb = integer_key("skill_file_size_mb", 1, 65536, "Largest file a skill run may write (MiB).",
                                           "16");
const Key skill_output_kb = integer_key("skill_output_kb", 1, 65536, "Output kept of a skill run (KiB).", "1024");
const Key skill_scratch_mb = integer_key("skill_scratch_mb", 1, 65536, "A skill run's scratch space (MiB).", "64");
const Key skill_bwrap = string_key("skill_bwrap", "The bubblewrap binary (absolute, or ~/...).");
const Key skill_allow_unsandboxed = boolean_key("skill_allow_unsandboxed",
                                                "Where the sandbox cannot be made, run skills anyway.", "false");
const Key skill_trust_client_code = boolean_key("skill_trust_client_code",
                                                "Run code written by clients (extractPattern) without approval.",
                                                "false");
const Section table{"context",
                    "The context pack: pattern and skill library, session artifacts and memory, metrics.",
                    {&patterns_root, &projects_root, &projects_roots, &categories, &index_file, &watch,
                     &skill_timeout_ms, &skill_cpu_seconds, &skill_memory_mb, &skill_file_size_mb, &skill_output_kb,
                     &skill_scratch_mb, &skill_bwrap, &skill_allow_unsandboxed, &skill_trust_client_code}};
}  // namespace keys

}  // namespace

const config::Section& settings_table() { return keys::table; }

std::filesystem::path expand_home(const std::string& path) {
    if (path == "~" || path.rfind("~/", 0) == 0) {
        const std::string home = env("HOME");
        return std::filesystem::path(home.empty() ? "/" : home) / path.substr(path.size() > 1 ? 2 : 1);
    }
    return path;
}

ContextSettings ContextSettings::from(const providers::SourceSettings& settings) {
    settings.check_keys(keys::table);
    ContextSettings s;
    if (auto root = settings.string(keys::patterns_root)) s.patterns_root = expand_home(*root);
    else if (auto from_env = env("TOOLPORT_CONTEXT_PATTERNS"); !from_env.empty())
        s.patterns_root = expand_home(from_env);
    else s.patterns_root = expand_home("~/.shared-patterns");

    std::vector<std::string> projects;
    if (auto one = settings.string(keys::projects_root)) projects.push_back(*one);
    if (auto many = settings.list(keys::projects_roots)) projects.insert(projects.end(), many->begin(), many->end());
    if (projects.empty()) projects = split(env("TOOLPORT_CONTEXT_PROJECTS"), ':');
    if (projects.empty()) projects.push_back("~/Dev");
    for (const auto& p : projects) {
        auto path = expand_home(p);
        if (!path.is_absolute()) settings.fail(keys::projects_root, "must be an absolute path (or start with ~/)");
        s.projects_roots.push_back(path);
    }
    if (!s.patterns_root.is_absolute())
        settings.fail(keys::patterns_root, "must be an absolute path (or start with ~/)");

    if (auto categories = settings.list(keys::categories)) {
        if (categories->empty()) settings.fail(keys::categories, "must list at least one category");
        for (const auto& c : *categories) {
            try {
                check_name(c, "category");
            } catch (const ContextError& e) {
                settings.fail(keys::categories, e.what());
            }
        }
        s.categories = *categories;
    }
    if (auto index = settings.string(keys::index_file)) {
        s.index_file = expand_home(*index);
        if (!s.index_file.is_absolute()) settings.fail(keys::index_file, "must be an absolute path (or start with ~/)");
    }
    if (auto watch = settings.boolean(keys::watch)) s.watch = *watch;
    if (auto ms = settings.duration<std::chrono::milliseconds>(keys::skill_timeout_ms)) s.skill.timeout = *ms;
    if (auto cpu = settings.integer(keys::skill_cpu_seconds)) s.skill.cpu_seconds = static_cast<int>(*cpu);
    if (auto mb = settings.integer(keys::skill_memory_mb)) s.skill.memory_bytes = *mb << 20;
    if (auto mb = settings.integer(keys::skill_file_size_mb)) s.skill.file_size_bytes = *mb << 20;
    if (auto kb = settings.integer(keys::skill_output_kb)) s.skill.output_bytes = static_cast<std::size_t>(*kb) << 10;
    if (auto mb = settings.integer(keys::skill_scratch_mb)) s.skill.scratch_bytes = *mb << 20;
    if (auto bwrap = settings.string(keys::skill_bwrap)) {
        s.skill_policy.bwrap = expand_home(*bwrap).string();
        if (!std::filesystem::path(s.skill_policy.bwrap).is_absolute()) {
            settings.fail(keys::skill_bwrap, "must be an absolute path (or start with ~/)");
        }
    }
    if (auto allow = settings.boolean(keys::skill_allow_unsandboxed)) s.skill_policy.allow_unsandboxed = *allow;
    if (auto trust = settings.boolean(keys::skill_trust_client_code)) s.skill_policy.trust_client_code = *trust;
    return s;
}

}  // namespace toolport::context
