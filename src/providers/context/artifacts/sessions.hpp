// Session artifacts ("finalization packs"): the compressed end-of-session records an
// agent leaves in <project>/.agent-artifacts/, in every layout the original server read:
//
//   .agent-artifacts/<sessionId>.md                          flat (the first layout)
//   .agent-artifacts/<sessionId>/session-summary.md          directory, preferred
//   .agent-artifacts/<sessionId>/finalization-pack.json      directory, when no summary
//
// Markdown: the title is the first "# " heading; the summary the "## Summary" section (or
// the first paragraph after the title); decisions, implementations, challenges and next
// steps the bullets under those "## " headings; code blocks the fenced blocks with a
// language tag ("```sql migrations/001.sql" names the file). JSON: the same fields by
// name (nextSteps or next_steps, codeBlocks or code_blocks), items as strings or objects.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::context {

struct CodeBlock {
    std::string language;
    std::string code;
    std::string file;  // empty when the fence named none
};

struct SessionRecord {
    std::string session_id;
    std::string date;  // the id's leading YYYY-MM-DD, metadata.date, or "unknown"
    std::string title;
    std::string summary;  // at most 300 characters
    std::vector<std::string> decisions, implementations, challenges, next_steps;
    std::vector<CodeBlock> code_blocks;
    bool has_code = false;
    std::string text;      // the whole file, for keyword search
    std::string relative;  // the file read, relative to the project (".agent-artifacts/...")
};

// Parsers of the two file formats (exposed for tests).
SessionRecord parse_session_markdown(const std::string& session_id, const std::string& text);
SessionRecord parse_finalization_pack(const std::string& session_id, const std::string& text);

// The ids of the sessions a project has, in any layout (unsorted; hidden entries and
// unreadable ones left out).
std::vector<std::string> list_sessions(const std::filesystem::path& project);

// One session, or nullopt when the project has no such session. Throws ContextError
// (FILESYSTEM_ERROR) when it exists but cannot be read, VALIDATION_ERROR for a bad id
// or a path that leaves the project.
std::optional<SessionRecord> load_session(const std::filesystem::path& project, const std::string& session_id);

// The leading YYYY-MM-DD of `id`, else "unknown".
std::string date_of(const std::string& id);

nlohmann::json to_json(const CodeBlock& block);

}  // namespace toolport::context
