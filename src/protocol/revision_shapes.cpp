#include "protocol/revision_shapes.hpp"

#include "protocol/raw_json.hpp"
#include "util/json.hpp"

namespace toolport::protocol {

void shape_definition(Revision revision, std::string_view kind, Json& definition) {
    if (!definition.is_object() || has_icons(revision)) return;
    definition.erase("icons");
    if (kind == "tool") definition.erase("execution");
    if (!has_titles(revision)) {
        definition.erase("title");
        if (kind == "tool") definition.erase("outputSchema");
        if (kind == "prompt" && definition.contains("arguments")) {
            for (auto& a : definition["arguments"]) a.erase("title");
        }
    }
    if (kind == "tool" && !has_annotations(revision)) definition.erase("annotations");
}

void shape_tool_result(Revision revision, Json& result) {
    if (!result.is_object() || (has_structured_output(revision) && has_resource_links(revision))) return;
    expand_raw_result_parts(result);  // its blocks are read below
    if (!has_structured_output(revision)) result.erase("structuredContent");
    auto content = result.find("content");
    if (content == result.end() || !content->is_array()) return;
    for (auto& block : *content) {
        const std::string type = block.value("type", "");
        if (type == "resource_link" && !has_resource_links(revision)) {
            std::string text = "Resource: " + block.value("name", std::string()) + " <" +
                               block.value("uri", std::string()) + ">";
            block = Json{{"type", "text"}, {"text", std::move(text)}};
        } else if (type == "audio" && !has_audio(revision)) {
            block = Json{{"type", "text"},
                         {"text", "[audio content (" + block.value("mimeType", std::string("audio")) +
                                      ") needs protocol 2025-03-26 or later]"}};
        }
    }
}

}  // namespace toolport::protocol
