// Builders for MCP content blocks and tool results.
//
// A tool returns a ToolResult; these helpers make the common shapes one call each:
//   co_return ToolResult::text("hello");
//   co_return ToolResult{}.add(content::image(png_base64, "image/png"));
#pragma once

#include <string>
#include <string_view>

#include "util/json.hpp"

namespace toolport {

namespace content {
Json text(std::string_view text);
Json image(std::string_view base64_data, std::string_view mime_type);
Json audio(std::string_view base64_data, std::string_view mime_type);
Json resource_link(std::string_view uri, std::string_view name, std::string_view mime_type = {},
                   std::string_view description = {});
Json embedded_text_resource(std::string_view uri, std::string_view text, std::string_view mime_type);
Json embedded_blob_resource(std::string_view uri, std::string_view base64_blob, std::string_view mime_type);
}  // namespace content

struct ToolResult {
    // content and structured_content may be raw JSON (protocol/raw_json.hpp) in a result a
    // gateway received and passes on unread; whatever reads them calls expand_raw_parts()
    // first. A result built here never has any.
    Json content = Json::array();
    Json structured_content;  // null when the tool has no structured output
    bool is_error = false;
    Json meta;  // becomes result._meta when not null

    static ToolResult text(std::string_view text);
    static ToolResult error(std::string_view message);
    // Structured output plus its JSON text serialisation, as the spec recommends.
    static ToolResult structured(Json value);

    ToolResult& add(Json block) {
        content.push_back(std::move(block));
        return *this;
    }

    // Parses content and structured_content where they are raw JSON (a no-op otherwise).
    void expand_raw_parts();

    Json to_json() const&;
    // The same, moving the parts out instead of copying them (the result is spent).
    Json to_json() &&;
    // to_json() as compact JSON text (invalid UTF-8 replaced), written without building
    // the object first.
    std::string dump() const;
    // The inverse of to_json() (for results kept in a cache). Throws std::invalid_argument
    // when `value` is not a CallToolResult object.
    static ToolResult from_json(const Json& value);
    // The same, moving the parts out of `value` (a result received and spent: a gateway's).
    static ToolResult from_json(Json&& value);
};

}  // namespace toolport
