// MCP protocol revisions Toolport speaks, and what differs between them.
//
// Every behavioural difference between revisions is a predicate here, so the engine and
// transports ask "does this revision allow batches?" rather than comparing date strings.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace toolport::protocol {

enum class Revision {
    v2024_11_05,
    v2025_03_26,
    v2025_06_18,
    v2025_11_25,
    v2026_07_28,
};

inline constexpr std::array<std::string_view, 5> kRevisionNames = {"2024-11-05", "2025-03-26", "2025-06-18",
                                                                   "2025-11-25", "2026-07-28"};

// The newest revision that uses the initialize handshake (what initialize offers).
inline constexpr Revision kLatestStateful = Revision::v2025_11_25;
inline constexpr Revision kLatest = Revision::v2026_07_28;

std::optional<Revision> parse_revision(std::string_view text);
std::string_view name(Revision r);
std::string supported_revisions_list();  // "2024-11-05, 2025-03-26, ..." for error messages

inline bool is_stateless(Revision r) { return r >= Revision::v2026_07_28; }
inline bool allows_batches(Revision r) { return r == Revision::v2025_03_26; }
inline bool has_structured_output(Revision r) { return r >= Revision::v2025_06_18; }
inline bool has_elicitation(Revision r) { return r >= Revision::v2025_06_18; }
inline bool has_titles(Revision r) { return r >= Revision::v2025_06_18; }
inline bool has_icons(Revision r) { return r >= Revision::v2025_11_25; }
inline bool has_audio(Revision r) { return r >= Revision::v2025_03_26; }
inline bool has_annotations(Revision r) { return r >= Revision::v2025_03_26; }
inline bool has_resource_links(Revision r) { return r >= Revision::v2025_06_18; }
inline bool has_completions(Revision r) { return r >= Revision::v2025_03_26; }
// Revisions where the server may push requests (sampling, elicitation, roots) to the client.
inline bool has_server_requests(Revision r) { return !is_stateless(r); }
// Error code for resources/read of an unknown URI.
int resource_not_found_code(Revision r);

}  // namespace toolport::protocol
