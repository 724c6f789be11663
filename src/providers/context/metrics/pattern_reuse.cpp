// getPatternReuse: which library patterns the projects' session artifacts mention, and in
// how many projects. A mention is the pattern's id ("database/rls-policy") as a whole
// token in a session's text, in any artifact layout (the original counted substrings of
// flat files only, so "database/rls-policy-generator" also counted for
// "database/rls-policy" and directory sessions were never seen).
#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/context_pack.hpp"

namespace toolport::context {

namespace {

bool id_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'; }

// Every "a/b" token of `text` (maximal runs of id characters around one '/').
void collect_ids(const std::string& text, std::set<std::string>& out) {
    for (std::size_t slash = text.find('/'); slash != std::string::npos; slash = text.find('/', slash + 1)) {
        std::size_t start = slash;
        while (start > 0 && id_char(text[start - 1])) --start;
        std::size_t end = slash + 1;
        while (end < text.size() && id_char(text[end])) ++end;
        if (start == slash || end == slash + 1) continue;
        if (start > 0 && text[start - 1] == '/') continue;  // part of a longer path
        if (end < text.size() && text[end] == '/') continue;
        std::string id = text.substr(start, end - start);
        while (!id.empty() && id.back() == '.') id.pop_back();  // "…see database/rls-policy."
        out.insert(std::move(id));
    }
}

struct Usage {
    std::set<std::string> projects;
    std::string first_used, last_used;
    int sessions = 0;
};

Json usage_json(const std::string& id, const Usage& u, std::optional<double> quality) {
    Json projects = Json::array();
    for (const auto& p : u.projects) projects.push_back(p);
    Json j = {{"patternId", id},
              {"category", id.substr(0, id.find('/'))},
              {"reuseCount", u.projects.size()},
              {"sessions", u.sessions},
              {"projects", std::move(projects)},
              {"firstUsed", u.first_used.empty() ? "unknown" : u.first_used},
              {"lastUsed", u.last_used.empty() ? "unknown" : u.last_used}};
    if (quality) j["quality"] = *quality;
    return j;
}

Json usage_schema() {
    return {{"type", "object"},
            {"properties",
             {{"patternId", {{"type", "string"}}},
              {"category", {{"type", "string"}}},
              {"reuseCount", {{"type", "integer"}, {"description", "Distinct projects whose sessions mention it"}}},
              {"sessions", {{"type", "integer"}}},
              {"projects", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"firstUsed", {{"type", "string"}}},
              {"lastUsed", {{"type", "string"}}},
              {"quality", {{"type", "number"}}}}},
            {"required", {"patternId", "category", "reuseCount", "projects", "firstUsed", "lastUsed"}}};
}

}  // namespace

providers::ToolDeclaration pattern_reuse_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "getPatternReuse";
    spec.title = "Pattern reuse statistics";
    spec.description =
        "Count how many projects' session artifacts mention each library pattern (by its id), with first and last "
        "use. Returns one pattern's statistics, or every used pattern sorted by reuse, recency or category. Use it "
        "to find the patterns worth improving or promoting.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"patternId",
           {{"type", "string"},
            {"maxLength", 300},
            {"description",
             "One pattern, e.g. \"backend/retry-with-backoff\" (or its bare name where only "
             "one category has it); all when omitted"}}},
          {"minReuseCount",
           {{"type", "integer"},
            {"minimum", 0},
            {"default", 1},
            {"description", "Leave out patterns used in fewer projects (list mode)"}}},
          {"sortBy", {{"type", "string"}, {"enum", {"reuseCount", "recent", "category"}}, {"default", "reuseCount"}}}}}};
    spec.data_schema = {{"anyOf", {usage_schema(), {{"type", "array"}, {"items", usage_schema()}}}}};
    spec.extra_metadata = {{"patternsCount", {{"type", "integer"}}}, {"sessionsScanned", {{"type", "integer"}}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string pattern_id = string_arg(args, "patternId");
        const long long min_reuse = int_arg(args, "minReuseCount", 1);
        const std::string sort_by = string_arg(args, "sortBy", "reuseCount");
        co_return co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, pattern_id, min_reuse, sort_by] {
            std::optional<PatternFiles> single;
            if (!pattern_id.empty()) single = find_pattern(pack, resolve_skill_id(pack, pattern_id, "patternId"));
            else check_library(pack);
            check_projects_roots(pack.projects);  // no projects to scan is not "no reuse"
            // Mentions across every project's sessions.
            std::map<std::string, Usage> usage;
            int scanned = 0;
            for (const auto& root : pack.projects) {
                std::error_code ec;
                for (std::filesystem::directory_iterator it(root.path(), ec), end; !ec && it != end; it.increment(ec)) {
                    const std::string project = it->path().filename().string();
                    std::error_code type_ec;
                    if (project.empty() || project[0] == '.' || it->is_symlink(type_ec) || !it->is_directory(type_ec))
                        continue;
                    for (const auto& session_id : list_sessions(it->path())) {
                        std::optional<SessionRecord> s;
                        try {
                            s = load_session(it->path(), session_id);
                        } catch (const ContextError&) {
                            continue;
                        }
                        if (!s) continue;
                        ++scanned;
                        std::set<std::string> ids;
                        collect_ids(s->text, ids);
                        for (const auto& id : ids) {
                            Usage& u = usage[id];
                            u.projects.insert(project);
                            ++u.sessions;
                            if (s->date != "unknown") {
                                if (u.first_used.empty() || s->date < u.first_used) u.first_used = s->date;
                                if (s->date > u.last_used) u.last_used = s->date;
                            }
                        }
                    }
                }
            }
            Answer answer;
            answer.extra["sessionsScanned"] = scanned;
            if (single) {
                auto it = usage.find(single->id());
                const Usage none;
                answer.data = usage_json(single->id(), it == usage.end() ? none : it->second,
                                         pack.library->read(*single).quality);
                answer.extra["patternsCount"] = 1;
                return answer;
            }
            std::vector<Json> rows;
            for (const auto& files : pack.library->list()) {
                auto it = usage.find(files.id());
                if (it == usage.end() || static_cast<long long>(it->second.projects.size()) < std::max(min_reuse, 1LL)) {
                    continue;
                }
                std::optional<double> quality;
                try {
                    quality = pack.library->read(files).quality;
                } catch (const ContextError&) {}
                rows.push_back(usage_json(files.id(), it->second, quality));
            }
            std::stable_sort(rows.begin(), rows.end(), [&sort_by](const Json& a, const Json& b) {
                const auto ra = a["reuseCount"].get<long long>(), rb = b["reuseCount"].get<long long>();
                if (sort_by == "recent") {
                    const auto la = a["lastUsed"].get<std::string>(), lb = b["lastUsed"].get<std::string>();
                    if (la != lb) return la > lb;
                } else if (sort_by == "category") {
                    const auto ca = a["category"].get<std::string>(), cb = b["category"].get<std::string>();
                    if (ca != cb) return ca < cb;
                }
                if (ra != rb) return ra > rb;
                return a["patternId"].get<std::string>() < b["patternId"].get<std::string>();
            });
            answer.extra["patternsCount"] = rows.size();
            answer.data = Json(rows);
            return answer;
        });
    });
}

}  // namespace toolport::context
