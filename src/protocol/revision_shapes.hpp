// What a client of each revision may be sent. Definitions and results are built once in
// the newest shape; these functions take out what an older revision does not define, so
// strict clients of older revisions never see fields they cannot parse.
#pragma once

#include <nlohmann/json.hpp>

#include "protocol/versions.hpp"

namespace toolport::protocol {

// kind: "tool", "resource", "resourceTemplate" or "prompt".
void shape_definition(Revision revision, std::string_view kind, nlohmann::json& definition);
// A CallToolResult: structuredContent only from 2025-06-18; resource links (2025-06-18)
// become text blocks for older clients; audio (2025-03-26) likewise.
void shape_tool_result(Revision revision, nlohmann::json& result);

}  // namespace toolport::protocol
