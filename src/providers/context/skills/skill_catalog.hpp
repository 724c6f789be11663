// The pattern library as Agent Skills, for the MCP Skills extension (SEP-2640). Each
// pattern whose name follows the Agent Skills naming rules is a skill directory:
//
//   skill://<category>/<name>/SKILL.md                 YAML frontmatter (name, description,
//                                                      metadata) + the pattern's documentation
//   skill://<category>/<name>/references/<name>-SKILL.md   its metadata file, when it has one
//   skill://<category>/<name>/scripts/<name>.<ext>     its code files
//
// and skill://<category> is the directory of a category's skills. Nothing here knows
// about the server: skills_extension.cpp serves it.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "providers/context/patterns/library.hpp"
#include "util/json.hpp"

namespace toolport::context {

inline constexpr const char* kSkillsExtension = "io.modelcontextprotocol/skills";
inline constexpr const char* kDirectoryMimeType = "inode/directory";

// One file of a skill.
struct SkillFile {
    std::string path;              // inside the skill: "SKILL.md", "scripts/x.ts"
    std::filesystem::path source;  // on disk; empty for the SKILL.md made from the pattern
    std::string mime_type;
};

struct SkillContent {
    std::string bytes;
    std::string mime_type;
};

class SkillCatalog {
public:
    explicit SkillCatalog(const PatternLibrary& library) : library_(library) {}

    // The Agent Skills naming rules: 1-64 of [a-z0-9-], no leading, trailing or double '-'.
    static bool valid_name(std::string_view name);
    // skill://<category>/<name> (the skill's directory) and its SKILL.md.
    static std::string skill_dir_uri(const std::string& category, const std::string& name);
    static std::string skill_uri(const std::string& category, const std::string& name);

    // Every pattern that is served as a skill, sorted by its URI.
    std::vector<PatternFiles> skills() const;

    // What a skill:// URI points at: a pattern and the path inside its skill ("" for the
    // skill's directory). nullopt for a URI that names no served skill.
    struct Location {
        PatternFiles pattern;
        std::string path;
    };
    std::optional<Location> locate(const std::string& uri) const;

    std::vector<SkillFile> files(const PatternFiles& pattern) const;
    Json frontmatter(const PatternInfo& info) const;
    std::string skill_md(const PatternInfo& info) const;

    // The skill's entry for skills/list and skills/get: {uri, frontmatter, resources:
    // [{uri, digest: "sha256:<hex>", size}]}, SKILL.md included. Kept while the files'
    // sizes and times are unchanged.
    Json entry(const PatternFiles& pattern) const;

    // A file's bytes; nullopt when `uri` is no file of a served skill.
    std::optional<SkillContent> read(const std::string& uri) const;

    // The direct children of a directory (a category, a skill, or a folder of a skill) as
    // resources [{uri, name, mimeType, size?}]; nullopt when `uri` is not a directory.
    std::optional<Json> directory(const std::string& uri) const;

private:
    Json compute_entry(const PatternFiles& pattern) const;

    const PatternLibrary& library_;
    mutable std::mutex mutex_;
    struct CachedEntry {
        std::string signature;
        Json entry;
    };
    mutable std::map<std::string, CachedEntry> entries_;  // by pattern id
};

}  // namespace toolport::context
