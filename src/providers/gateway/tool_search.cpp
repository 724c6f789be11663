#include "providers/gateway/tool_search.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "providers/context/patterns/search_index.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "server/tool_error.hpp"

namespace toolport::gateway {

namespace {

// What `ctx`'s caller may see: its view's tools (every tool outside a view).
ToolSearch::Visible visible_to(RequestContext& ctx) {
    const McpServer& server = ctx.session().server();
    const CallerIdentity& caller = ctx.caller();
    return [&server, &caller](const ToolSpec& tool) { return server.visible(caller, tool); };
}

}  // namespace

ToolSearch::ToolSearch(providers::SourceContext& context) : context_(context) {}
ToolSearch::~ToolSearch() = default;

void ToolSearch::replace(std::vector<std::vector<providers::SyncedTool>> tools, std::vector<Withheld> withheld) {
    std::map<std::string, Held> held;
    for (auto& w : withheld) {
        const std::string name = w.tool.declaration.name;
        const std::string source = w.tool.declaration.service;
        try {
            held[name] = {std::make_shared<const ToolSpec>(
                              providers::make_tool_spec(std::move(w.tool.declaration), source)),
                          std::move(w.message), std::move(w.suggestion)};
        } catch (const providers::SourceError& e) {
            spdlog::warn("upstream {}: tool {} is left out: {}", source, name, e.what());
        }
    }
    withheld_ = std::move(held);
    std::map<std::string, std::shared_ptr<const ToolSpec>> fresh;
    for (auto& part : tools) {
        for (auto& synced : part) {
            const std::string name = synced.declaration.name;
            const std::string source = synced.declaration.service;
            try {
                fresh[name] = std::make_shared<const ToolSpec>(
                    providers::make_tool_spec(std::move(synced.declaration), source));
            } catch (const providers::SourceError& e) {
                spdlog::warn("upstream {}: tool {} is left out: {}", source, name, e.what());
            }
        }
    }
    const bool changed = fresh.size() != tools_.size() ||
                         !std::equal(fresh.begin(), fresh.end(), tools_.begin(), [](const auto& a, const auto& b) {
                             return a.first == b.first && a.second->definition() == b.second->definition();
                         });
    tools_ = std::move(fresh);
    if (changed) rebuild_index();
}

void ToolSearch::rebuild_index() { index_.replace(tools_); }

std::shared_ptr<const ToolSpec> ToolSearch::tool(const std::string& name) const {
    auto it = tools_.find(name);
    return it == tools_.end() ? nullptr : it->second;
}

std::size_t ToolSearch::count(const Visible& visible) const {
    std::size_t n = 0;
    for (const auto& [name, spec] : tools_) n += visible(*spec) ? 1 : 0;
    return n;
}

std::vector<ToolSearch::Hit> ToolSearch::search(const std::string& query, std::size_t limit,
                                                const Visible& visible) const {
    std::vector<Hit> hits;
    const std::string match = context::PatternIndex::fts_query(query);
    if (match.empty()) {
        for (const auto& [name, spec] : tools_) {
            if (hits.size() >= limit) break;
            if (visible(*spec)) hits.push_back({name, 0});
        }
        return hits;
    }
    for (auto& hit : index_.search(query, limit, [&](const std::string& name) {
             auto spec = tool(name);
             return spec && visible(*spec);
         })) {
        hits.push_back({std::move(hit.name), hit.score});
    }
    return hits;
}

void ToolSearch::declare() {
    context_.add_tool({
        .name = "search_tools",
        .title = "Search the gateway's tools",
        .description =
            "Finds tools of the upstream MCP servers behind this gateway by what they do (ranked by relevance to "
            "the words of the query: names, descriptions, parameter names). Returns each tool's name, description "
            "and input schema; call one with call_tool. An empty query lists tools by name.",
        .input_schema = {{"type", "object"},
                         {"properties",
                          {{"query", {{"type", "string"}, {"description", "What the tool should do, in a few words"}}},
                           {"limit",
                            {{"type", "integer"},
                             {"minimum", 1},
                             {"maximum", 50},
                             {"default", 10},
                             {"description", "How many tools to return"}}}}},
                         {"required", Json::array({"query"})},
                         {"additionalProperties", false}},
        .output_schema = {{"type", "object"},
                          {"properties",
                           {{"tools", {{"type", "array"}, {"items", {{"type", "object"}}}}},
                            {"total_tools", {{"type", "integer"}}}}},
                          {"required", Json::array({"tools", "total_tools"})}},
        .annotations = {.read_only = true, .idempotent = true, .open_world = false},
        .handler = [this](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
            const auto query = args.value("query", std::string());
            const auto limit = static_cast<std::size_t>(args.value("limit", 10));
            const auto visible = visible_to(ctx);
            Json found = Json::array();
            for (const auto& hit : search(query, limit, visible)) {
                auto spec = tool(hit.name);
                if (!spec) continue;
                Json entry = {{"name", hit.name},
                              {"description", spec->description},
                              {"inputSchema", spec->input_schema}};
                if (!spec->title.empty()) entry["title"] = spec->title;
                found.push_back(std::move(entry));
            }
            co_return ToolResult::structured({{"tools", std::move(found)}, {"total_tools", count(visible)}});
        },
    });
    context_.add_tool({
        .name = "call_tool",
        .title = "Call a tool found with search_tools",
        .description = "Calls one of the gateway's tools by the name search_tools gave, with its arguments (checked "
                       "against that tool's input schema). Returns the tool's own result.",
        .input_schema = {{"type", "object"},
                         {"properties",
                          {{"name", {{"type", "string"}, {"description", "The tool's name, as search_tools gave it"}}},
                           {"arguments", {{"type", "object"}, {"description", "The tool's arguments"}}}}},
                         {"required", Json::array({"name"})},
                         {"additionalProperties", false}},
        .annotations = {.open_world = true},
        .handler = [this](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
            const auto name = args.value("name", std::string());
            auto spec = tool(name);
            // A tool outside the caller's profile is answered as one that does not exist
            // (as tools/call answers it): a profile's holder learns nothing of the others'.
            if (spec && !visible_to(ctx)(*spec)) spec = nullptr;
            if (auto held = withheld_.find(name);
                !spec && held != withheld_.end() && visible_to(ctx)(*held->second.spec)) {
                // Withheld by pinning, as tools/call answers a withheld tool.
                throw ToolError(ToolErrorCode::tool_quarantined, held->second.message).suggest(held->second.suggestion);
            }
            if (!spec) {
                const auto& view = ctx.caller().view;
                throw ToolError(ToolErrorCode::not_found,
                                view.empty() ? fmt::format("no tool is named \"{}\"", name)
                                             : fmt::format("no tool named \"{}\" is served to this client's profile "
                                                           "(\"{}\")",
                                                           name, view))
                    .parameter("name")
                    .suggest(view.empty() ? "Find the tool's exact name with search_tools"
                                          : "Find the tool's exact name with search_tools, which lists this "
                                            "profile's tools only");
            }
            const Json arguments = args.contains("arguments") ? args["arguments"] : Json::object();
            co_return co_await context_.invoke_tool(ctx, spec, arguments);
        },
    });
}

}  // namespace toolport::gateway
