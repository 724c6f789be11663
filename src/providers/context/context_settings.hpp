// The context pack's settings: its section of the configuration over the environment.
//
//   packs:
//     context:
//       patterns_root: ~/.shared-patterns   # the pattern library (else $TOOLPORT_CONTEXT_PATTERNS)
//       projects_root: ~/Dev                 # or projects_roots: [~/Dev, ~/work] (else
//                                            # $TOOLPORT_CONTEXT_PROJECTS, ':'-separated)
//       categories: [database, security, ui, backend, testing, architecture, mcp-integration]
//       index_file: ~/.cache/toolport/patterns-<hash>.sqlite   # the search index (a cache)
//       watch: true                          # keep the index current with inotify
//       skill_timeout_ms: 10000              # executeSkill: then the process group is killed
//       skill_cpu_seconds: 10
//       skill_memory_mb: 512
//       skill_file_size_mb: 16
//       skill_output_kb: 1024
//       skill_scratch_mb: 64                 # the sandbox's /tmp: the total a skill may write
//       skill_bwrap: /usr/bin/bwrap          # default: looked up in the system's folders
//       skill_allow_unsandboxed: false       # run skills without the sandbox where it cannot be made
//       skill_trust_client_code: false       # run code clients wrote with extractPattern unapproved
//
// A leading "~/" means $HOME. Nothing is created at start but the index file's directory.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "providers/source_settings.hpp"

namespace toolport::context {

struct SkillLimits {
    std::chrono::milliseconds timeout{10000};
    int cpu_seconds = 10;
    long long memory_bytes = 512LL << 20;
    long long file_size_bytes = 16LL << 20;
    std::size_t output_bytes = 1 << 20;
    long long scratch_bytes = 64LL << 20;
};

// Who may run what, and how (executeSkill).
struct SkillPolicy {
    std::string bwrap;               // empty: looked up
    bool allow_unsandboxed = false;  // where the sandbox cannot be made, run skills anyway
    bool trust_client_code = false;  // run code written by clients (extractPattern) without approval
};

struct ContextSettings {
    std::filesystem::path patterns_root;
    std::vector<std::filesystem::path> projects_roots;
    std::vector<std::string> categories = {"database",     "security",       "ui", "backend", "testing",
                                           "architecture", "mcp-integration"};
    std::filesystem::path index_file;  // empty: derived from the cache directory and patterns_root
    bool watch = true;
    SkillLimits skill;
    SkillPolicy skill_policy;

    // Reads and checks the section (throws providers::SettingsError naming file:line:key).
    static ContextSettings from(const providers::SourceSettings& settings);
};

// The keys of `packs: {context: {...}}` (context_settings.cpp): what ContextSettings::from
// reads and the JSON Schema and docs/configuration.md list.
const config::Section& settings_table();

// "~/x" → $HOME/x; anything else unchanged.
std::filesystem::path expand_home(const std::string& path);

}  // namespace toolport::context
