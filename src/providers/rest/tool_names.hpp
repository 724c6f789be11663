// MCP names for a catalog's tools. Clients (Claude, Cursor, the OpenAI-compatible ones)
// accept ^[a-zA-Z0-9_-]{1,64}$; catalogs send names with spaces, dots, accents and more
// than 64 characters. Each tool gets a safe name, the catalog's own name is kept for
// the call, and two tools that would get the same name are told apart by a suffix
// derived from their catalog names: the same catalog gives the same names on every
// fetch, whatever the order of its pages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::rest {

constexpr std::size_t kMaxToolName = 64;

// A short, stable hash of a name (FNV-1a, 32 bits), for suffixes that tell names apart.
std::uint32_t name_hash(std::string_view text);

// `text` as a safe name: letters, digits, '_' and '-' kept (upper case kept), runs of
// anything else one '_', trimmed of '_' and '-' at the ends, at most `limit`
// characters; "tool" when nothing is left.
std::string safe_tool_name(std::string_view text, std::size_t limit = kMaxToolName);

// The display-name form the AgentPMT server used: lower case, spaces as '-'.
std::string name_from_title(std::string_view title, std::size_t limit = kMaxToolName);

// Unique safe names for `wanted` (already safe, maybe repeated), index for index, given
// each entry's catalog name: the entry with the smallest catalog name keeps a repeated
// name, the others get "_" + 6 hex digits of a hash of their catalog name (cut to fit 64).
std::vector<std::string> unique_tool_names(const std::vector<std::string>& wanted,
                                           const std::vector<std::string>& catalog_names);

}  // namespace toolport::rest
