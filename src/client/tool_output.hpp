// Readable renderings of tools/list and tools/call results for the command line
// (`toolport list`, `toolport call` without --json).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::client {

// A tool's name with its parameters, the optional ones marked: "search(query, limit?)";
// the name alone when it takes none.
std::string tool_signature(const nlohmann::json& tool);

// One tool a line: its signature (padded into a column), then the first line of its
// description; then the count ("17 tools"). Control characters become spaces, so a
// server cannot break the layout or drive the terminal.
std::string render_tool_list(const std::vector<nlohmann::json>& tools);

// A content block as a line of text: a text block is its text; anything else is
// summarized, e.g. "[image image/png, 67 bytes]".
std::string render_content_block(const nlohmann::json& block);

struct RenderedCallResult {
    bool is_error = false;
    std::string text;  // for stdout, or (is_error) for stderr
};

// The content blocks one after another, then structuredContent pretty-printed (once: a
// text block that is the same JSON is left out). An
// isError result starts with "tool NAME failed [ERROR_CODE]:" (the code when the result
// carries one in structuredContent.error_code).
RenderedCallResult render_call_result(const std::string& tool_name, const nlohmann::json& result);

}  // namespace toolport::client
