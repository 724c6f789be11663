#include "providers/rest/catalog_listing.hpp"

#include <fmt/format.h>

#include "util/sanitize.hpp"

namespace toolport::rest {

namespace {

// AgentPMT writes "Display Name — what it does" (an em dash; " - " in older entries).
void split_display_name(CatalogTool& tool) {
    for (std::string_view separator : {" \u2014 ", " - "}) {
        auto at = tool.description.find(separator);
        if (at == std::string::npos || at == 0 || at > 120) continue;
        tool.title = tool.description.substr(0, at);
        tool.description = tool.description.substr(at + separator.size());
        return;
    }
}

std::string string_member(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

const Json* find_path(const Json& value, std::string_view dotted_path) {
    const Json* at = &value;
    while (!dotted_path.empty()) {
        auto dot = dotted_path.find('.');
        std::string key(dotted_path.substr(0, dot));
        dotted_path = dot == std::string_view::npos ? std::string_view() : dotted_path.substr(dot + 1);
        if (at->is_object()) {
            auto it = at->find(key);
            if (it == at->end()) return nullptr;
            at = &*it;
        } else if (at->is_array() && !key.empty() && key.find_first_not_of("0123456789") == std::string::npos &&
                   key.size() < 9) {
            auto index = std::stoul(key);
            if (index >= at->size()) return nullptr;
            at = &(*at)[index];
        } else {
            return nullptr;
        }
    }
    return at;
}

std::optional<CatalogTool> parse_catalog_tool(Json& entry, ToolFormat format, std::string& why) {
    if (!entry.is_object()) {
        why = "an entry that is not an object";
        return std::nullopt;
    }
    if (format == ToolFormat::automatic) {
        if (entry.contains("function") && entry["function"].is_object()) format = ToolFormat::openai;
        else if (entry.contains("inputSchema")) format = ToolFormat::mcp;
        else format = ToolFormat::bare;
    }
    Json* definition = &entry;
    if (format == ToolFormat::openai) {
        auto it = entry.find("function");
        if (it == entry.end() || !it->is_object()) {
            why = "an entry without a \"function\" object";
            return std::nullopt;
        }
        definition = &*it;
    }
    CatalogTool tool;
    tool.name = string_member(*definition, "name");
    if (tool.name.empty()) {
        why = "an entry without a name";
        return std::nullopt;
    }
    tool.description = string_member(*definition, "description");
    if (format == ToolFormat::mcp) {
        tool.title = string_member(*definition, "title");
        if (auto it = definition->find("inputSchema"); it != definition->end()) tool.input_schema = std::move(*it);
        if (auto it = definition->find("outputSchema"); it != definition->end() && it->is_object()) {
            tool.output_schema = std::move(*it);
        }
        if (auto it = definition->find("annotations"); it != definition->end() && it->is_object()) {
            tool.annotations = std::move(*it);
            if (tool.title.empty()) tool.title = string_member(*it, "title");
        }
    } else {
        if (auto it = definition->find("parameters"); it != definition->end()) tool.input_schema = std::move(*it);
        split_display_name(tool);
    }
    return tool;
}

CatalogPage parse_catalog_page(Json answer, const ListSettings& list) {
    if (!answer.is_object() && !(answer.is_array() && list.tools_path.empty())) {
        throw CatalogError("the catalog's answer is not a JSON object");
    }
    if (!list.success_path.empty()) {
        const Json* success = find_path(answer, list.success_path);
        if (success && success->is_boolean() && !success->get<bool>()) {
            const Json* error = list.error_path.empty() ? nullptr : find_path(answer, list.error_path);
            std::string message = error && error->is_string() ? error->get<std::string>() : "no reason given";
            throw CatalogError("the catalog API refused: " + util::sanitize_for_message(message, 300));
        }
    }
    Json* tools = find_path(answer, list.tools_path);
    if (!tools || !tools->is_array()) {
        throw CatalogError(fmt::format("the catalog's answer has no tool array at \"{}\"",
                                       list.tools_path.empty() ? "(the answer itself)" : list.tools_path));
    }
    CatalogPage page;
    page.tools.reserve(tools->size());
    std::size_t index = 0;
    for (auto& entry : *tools) {
        std::string why;
        if (auto tool = parse_catalog_tool(entry, list.format, why)) page.tools.push_back(std::move(*tool));
        else page.skipped.push_back(fmt::format("entry {}: {}", index, why));
        ++index;
    }
    if (list.pagination == Pagination::page) {
        const Json* next = find_path(answer, list.has_next_path);
        if (next && next->is_boolean()) page.has_next = next->get<bool>();
        // Without the flag, a full page means there may be more.
        else page.has_next = !tools->empty() && static_cast<int>(tools->size()) >= list.page_size;
    } else if (list.pagination == Pagination::next) {
        const Json* next = find_path(answer, list.next_path);
        if (next && next->is_string()) page.next_url = next->get<std::string>();
    }
    return page;
}

}  // namespace toolport::rest
