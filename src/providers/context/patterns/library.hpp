// The pattern library on disk, in the original server's three-file convention, one folder
// per category:
//
//   <library>/<category>/<name>.md          the pattern's documentation (required: it is the pattern)
//   <library>/<category>/<name>.ts|.js|.mjs|.py|.sh   its code (optional)
//   <library>/<category>/<name>-SKILL.md    its metadata: quality score, description (optional)
//
// Categories may also sit under <library>/patterns/<category>/ (the later layout of the
// original's search). Ids are "<category>/<name>".
//
// A pattern a client wrote (extractPattern) also has a hidden marker,
//   <library>/<category>/.<name>.unreviewed.json   who wrote it, its declared scores
// until the operator approves it (`toolport patterns approve`, which removes the marker):
// executeSkill does not run an unreviewed pattern's code. Patterns the operator put in the
// library themselves have no marker.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "providers/context/roots.hpp"

namespace toolport::context {

struct PatternFiles {
    std::string category;
    std::string name;
    std::filesystem::path dir;  // the category folder the files are in (resolved)
    std::string doc_file;       // "<name>.md"
    std::string skill_file;     // "<name>-SKILL.md", empty when absent
    std::string code_file;      // the code file loadSkill shows (.ts first), empty when none
    std::string runnable_file;  // the code file executeSkill runs (.js/.mjs/.py/.sh), empty when none
    bool unreviewed = false;    // written by a client and not approved (the marker exists)

    std::string id() const { return category + "/" + name; }
    bool has_executable() const { return !code_file.empty(); }
};

struct PatternInfo {
    PatternFiles files;
    std::string description;  // at most 200 characters
    std::optional<double> quality;
    std::string document;       // the .md text
    std::string skill_text;     // the -SKILL.md text
    long long modified_ns = 0;  // the newest mtime of its files (for the index)
};

// Parsing of SKILL.md and the documentation (exposed for tests).
std::optional<double> parse_quality(const std::string& skill_md);
std::string parse_description(const std::string& skill_md, const std::string& doc_md);

class PatternLibrary {
public:
    PatternLibrary(const Root& root, std::vector<std::string> categories);

    const Root& root() const { return root_; }
    const std::vector<std::string>& categories() const { return categories_; }

    // The folders a category's patterns are in (existing ones only).
    std::vector<std::filesystem::path> category_dirs(const std::string& category) const;
    // Every pattern of the served categories (files only, nothing read).
    std::vector<PatternFiles> list() const;
    // One pattern's files; nullopt when it has no <name>.md. The category must be served.
    std::optional<PatternFiles> find(const std::string& category, const std::string& name) const;
    // Whether the pattern's unreviewed marker exists (in the folder find() would take).
    bool unreviewed(const std::string& category, const std::string& name) const;
    // Reads a pattern's texts and metadata (FILESYSTEM_ERROR when unreadable).
    PatternInfo read(const PatternFiles& files) const;
    // Library folders that are not served categories (for a start-up hint).
    std::vector<std::string> unserved_dirs() const;

private:
    Root root_;
    std::vector<std::string> categories_;
};

// The name of a pattern's unreviewed marker in its category folder.
std::string unreviewed_marker(const std::string& name);

// Reads a whole small text file; FILESYSTEM_ERROR past `max_bytes` or when unreadable.
std::string read_text_file(const std::filesystem::path& file, std::size_t max_bytes, const std::string& shown_name);

}  // namespace toolport::context
