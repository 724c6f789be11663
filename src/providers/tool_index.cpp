#include "providers/tool_index.hpp"

#include <sqlite3.h>

#include <fmt/format.h>

#include "providers/context/patterns/search_index.hpp"
#include "providers/source.hpp"

namespace toolport::providers {

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

}  // namespace

// An in-memory FTS5 table, rebuilt when the catalog changes (a few hundred rows: about a
// millisecond), so no file and nothing to keep in step.
struct ToolIndex::Db {
    sqlite3* db = nullptr;
    Db() {
        if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                            nullptr) != SQLITE_OK) {
            throw SourceError("tool search: cannot open an in-memory SQLite database");
        }
        exec("CREATE VIRTUAL TABLE tools USING fts5(name, description, parameters, tokenize = 'unicode61')");
    }
    ~Db() { sqlite3_close(db); }
    void exec(const char* sql) {
        char* error = nullptr;
        if (sqlite3_exec(db, sql, nullptr, nullptr, &error) != SQLITE_OK) {
            std::string message = error ? error : "unknown error";
            sqlite3_free(error);
            throw SourceError(fmt::format("tool search: {}", message));
        }
    }
};

ToolIndex::ToolIndex() : db_(std::make_unique<Db>()) {}
ToolIndex::~ToolIndex() = default;

void ToolIndex::replace(const std::map<std::string, std::shared_ptr<const ToolSpec>>& tools) {
    db_->exec("BEGIN; DELETE FROM tools;");
    sqlite3_stmt* insert = nullptr;
    sqlite3_prepare_v2(db_->db, "INSERT INTO tools(name, description, parameters) VALUES (?1, ?2, ?3)", -1, &insert,
                       nullptr);
    for (const auto& [name, spec] : tools) {
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
    db_->exec("COMMIT");
}

bool ToolIndex::searchable(const std::string& query) { return !context::PatternIndex::fts_query(query).empty(); }

std::vector<ToolIndex::Hit> ToolIndex::search(const std::string& query, std::size_t limit, const Visible& visible) const {
    std::vector<Hit> hits;
    const std::string match = context::PatternIndex::fts_query(query);
    if (match.empty()) return hits;
    sqlite3_stmt* select = nullptr;
    // bm25() is lower for better matches; a name match weighs most. No LIMIT: the caller's
    // view is applied row by row, and a view's best tools may rank below others' (a few
    // hundred rows at most).
    sqlite3_prepare_v2(db_->db,
                       "SELECT name, bm25(tools, 10.0, 2.0, 4.0) AS score FROM tools WHERE tools MATCH ?1 "
                       "ORDER BY score, name",
                       -1, &select, nullptr);
    sqlite3_bind_text(select, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    while (hits.size() < limit && sqlite3_step(select) == SQLITE_ROW) {
        std::string name_text = reinterpret_cast<const char*>(sqlite3_column_text(select, 0));
        std::string name = name_text.substr(0, name_text.find(' '));
        if (!visible(name)) continue;
        hits.push_back({std::move(name), -sqlite3_column_double(select, 1)});
    }
    sqlite3_finalize(select);
    return hits;
}

}  // namespace toolport::providers
