// The MCP Skills extension (io.modelcontextprotocol/skills, SEP-2640) from the client's
// side: skills/list, and loading one skill when it is needed (never ahead of need: listing
// reads no skill file). Loading reads the skill's SKILL.md with resources/read and verifies
// it before anything uses it: its byte length against the size and its SHA-256 against the
// digest its entry lists for it, and its YAML frontmatter field by field against the
// entry's frontmatter. Only then are the skill's other files read, each verified the same
// way. Any mismatch stops the load (SkillVerificationError); no unverified content is
// returned.
//
//   auto skills = co_await list_skills(client);       // entries {uri, frontmatter, resources}
//   Json skill = co_await load_skill(client, skills[0], /*with_files=*/true);
//   // {"uri", "text", "files": [{"uri", "text"}, ...]}
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "client/client_errors.hpp"
#include "client/mcp_client.hpp"

namespace toolport::client {

inline constexpr const char* kSkillsExtension = "io.modelcontextprotocol/skills";

struct SkillVerificationError : ClientError {
    using ClientError::ClientError;
};

// Why `content` does not match the entry `listed` ({uri, digest?: "sha256:<hex>", size?}),
// or nullopt when it does (what the entry does not state is not checked).
std::optional<std::string> skill_file_mismatch(const Json& listed, std::string_view content);

// Why the YAML frontmatter of `skill_md` differs from `expected` (the entry's frontmatter:
// every field it has must be in the file with the same value), or nullopt when it agrees.
// A file without frontmatter, or whose frontmatter is not YAML, differs.
std::optional<std::string> frontmatter_mismatch(std::string_view skill_md, const Json& expected);

// The full id of a skills/list entry: its SKILL.md URI without "skill://" and "/SKILL.md"
// ("database/rls-policy-generator"); the URI itself when it has another form.
std::string skill_id(const Json& entry);

// The entry `wanted` names: its SKILL.md URI, its full id, or its bare name (frontmatter
// `name`) when no other entry has that name. Else a ClientError that says why and names the
// full ids to use instead (all of them for an ambiguous name; the close ones, or how to list
// them, for a name nothing has). `server` names the server in the message.
const Json& choose_skill(const std::vector<Json>& entries, std::string_view wanted, const std::string& server);

// skills/list, every page.
Task<std::vector<Json>> list_skills(McpClient& client, RequestOptions options = {});

// Reads and verifies the skill of `entry` (a skills/list entry); with `with_files` also its
// other files, after SKILL.md verified. Throws SkillVerificationError on a mismatch.
Task<Json> load_skill(McpClient& client, Json entry, bool with_files, RequestOptions options = {});

}  // namespace toolport::client
