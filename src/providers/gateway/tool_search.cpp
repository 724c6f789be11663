#include "providers/gateway/tool_search.hpp"

#include <sqlite3.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "providers/context/patterns/search_index.hpp"
#include "server/request_context.hpp"
#include "server/server.hpp"
#include "server/session.hpp"
#include "server/tool_error.hpp"

namespace toolport::gateway {

namespace {

// The parameter names of a tool's input schema, space-separated, for the index.
std::string parameter_names(const Json& schema) {
    std::string names;
    if (!schema.is_object()) return names;
    auto props = schema.find("properties");
    if (props == schema.end() || !props->is_object()) return names;
    for (const auto& [name, value] : props->items()) names += (names.empty() ? "" : " ") + name;
    return names;
}

// What `ctx`'s caller may see: its view's tools (every tool outside a view).
ToolSearch::Visible visible_to(RequestContext& ctx) {
    const McpServer& server = ctx.session().server();
    const CallerIdentity& caller = ctx.caller();
    return [&server, &caller](const ToolSpec& tool) { return server.visible(caller, tool); };
}

}  // namespace

// An in-memory FTS5 table, rebuilt when the catalog changes (a few hundred rows: about a
// millisecond), so no file and nothing to keep in step.
struct ToolSearch::Index {
    sqlite3* db = nullptr;
    Index() {
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            nullptr) != SQLITE_OK) {
            throw providers::SourceError("tool search: cannot open an in-memory SQLite database");
        }
        exec("CREATE VIRTUAL TABLE tools USING fts5(name, description, parameters, tokenize = 'unicode61')");
    }
    ~Index() { sqlite3_close(db); }
    void exec(const char* sql) {
        char* error = nullptr;
        if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
            std::string message = error ? error : "unknown error";
            sqlite3_free(error);
            throw providers::SourceError(fmt::format("tool search: {}", message));
        }
    }
};

ToolSearch::ToolSearch(providers::SourceContext& context) : context_(context), index_(std::make_unique<Index>()) {}
ToolSearch::~ToolSearch() = default;

void ToolSearch::replace(std::vector<std::vector<providers::SyncedTool>> tools) {
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

void ToolSearch::rebuild_index() {
    index_->exec("BEGIN; DELETE FROM tools;");
    sqlite3_stmt* insert = nullptr;
    sqlite3_prepare_v2(index_->db, "INSERT INTO tools(name, description, parameters) VALUES (?1, ?2, ?3)", -1, &insert,
                       nullptr);
    for (const auto& [name, spec] : tools_) {
        // Names are indexed with their words apart too ("get_forecast" → "get forecast").
        std::string words = name;
        for (char& c : words) {
            if (c == '_' || c == '-') c = ' ';
        }
        const std::string name_text = name + " " + words;
        const std::string description = spec->title.empty() ? spec->description : spec->title + ". " + spec->description;
        const std::string parameters = parameter_names(spec->input_schema);
        sqlite3_bind_text(insert, 1, name_text.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(insert, 2, description.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(insert, 3, parameters.c_str(), -1, SQLITE_TRANSIENT);
        sqlite3_step(insert);
        sqlite3_reset(insert);
    }
    sqlite3_finalize(insert);
    index_->exec("COMMIT");
}

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
    sqlite3_stmt* select = nullptr;
    // bm25() is lower for better matches; a name match weighs most. No LIMIT: the caller's
    // view is applied row by row, and a view's best tools may rank below others' (a few
    // hundred rows at most).
    sqlite3_prepare_v2(index_->db,
                       "SELECT name, bm25(tools, 10.0, 2.0, 4.0) AS score FROM tools WHERE tools MATCH ?1 "
                       "ORDER BY score, name",
                       -1, &select, nullptr);
    sqlite3_bind_text(select, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    while (hits.size() < limit && sqlite3_step(select) == SQLITE_ROW) {
        std::string name_text = reinterpret_cast<const char*>(sqlite3_column_text(select, 0));
        std::string name = name_text.substr(0, name_text.find(' '));
        auto spec = tool(name);
        if (!spec || !visible(*spec)) continue;
        hits.push_back({std::move(name), -sqlite3_column_double(select, 1)});
    }
    sqlite3_finalize(select);
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
