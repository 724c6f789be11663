// The patterns module's readers: the library searched (ranked, through the index) and one
// skill loaded with its documentation, metadata and code.
//
//   searchPatterns  patterns matching keywords, best first (BM25, quality breaking ties)
//   loadSkill       one pattern's documentation, SKILL.md and optionally code
#include <fmt/format.h>

#include "providers/context/context_pack.hpp"
#include "providers/context/patterns/search_index.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

constexpr std::size_t kMaxLoadBytes = 4u << 20;

Json category_property(const ContextPack& pack) {
    return {{"type", "string"}, {"enum", pack.settings.categories}, {"description", "Only patterns of this category"}};
}

}  // namespace

void check_library(const ContextPack& pack) {
    const std::string problem = root_problem(pack.patterns);
    if (problem.empty()) return;
    throw ContextError(ErrorCode::filesystem_error,
                       fmt::format("the pattern library {} (packs.context.patterns_root)", problem),
                       "Ask the operator to create it or to point packs.context.patterns_root (or "
                       "$TOOLPORT_CONTEXT_PATTERNS) at the library; GET /health shows it as context.library.");
}

SkillId resolve_skill_id(const ContextPack& pack, std::string_view text, std::string_view what) {
    if (text.find('/') != std::string_view::npos) return parse_skill_id(text, what);
    check_name(text, what);
    check_library(pack);
    const std::string name(text);
    std::vector<std::string> ids;
    for (const auto& category : pack.settings.categories) {
        if (pack.library->find(category, name)) ids.push_back(category + "/" + name);
    }
    if (ids.size() == 1) return {ids.front().substr(0, ids.front().find('/')), name};
    if (ids.empty()) {
        throw ContextError(ErrorCode::pattern_not_found, fmt::format("No pattern named {} in any category", name),
                           fmt::format("Search with searchPatterns {{\"keyword\": \"{}\"}} and pass the id it returns "
                                       "(\"category/name\").",
                                       name));
    }
    std::string list;
    for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
    throw ContextError(ErrorCode::validation_error,
                       fmt::format("{} \"{}\" names patterns in {} categories: {}", what, name, ids.size(), list),
                       fmt::format("Pass the full id, one of: {}.", list));
}

PatternFiles find_pattern(const ContextPack& pack, const SkillId& id) {
    check_library(pack);
    if (!pack.is_category(id.category)) {
        std::string list;
        for (const auto& c : pack.settings.categories) list += (list.empty() ? "" : ", ") + c;
        throw ContextError(ErrorCode::category_invalid,
                           fmt::format("Category \"{}\" is not one of: {}", util::sanitize_for_message(id.category, 60),
                                       list),
                           "Use an id from searchPatterns.");
    }
    auto files = pack.library->find(id.category, id.name);
    if (!files) {
        throw ContextError(ErrorCode::pattern_not_found, fmt::format("Pattern not found: {}", id.str()),
                           "Search with searchPatterns for the patterns that exist.");
    }
    return *files;
}

providers::ToolDeclaration search_patterns_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "searchPatterns";
    spec.title = "Search the pattern library";
    spec.description =
        "Search the pattern library by keywords (ranked by relevance over names, descriptions and documentation) and "
        "category. Returns each pattern's id, description, quality score and whether it has code, for progressive "
        "loading. Use it to discover patterns before loading one with loadSkill.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"keyword",
           {{"type", "string"},
            {"maxLength", 500},
            {"description", "Words to search for; the best matches come first. Omit to list by quality."}}},
          {"category", category_property(pack)},
          {"includeExecutable",
           {{"type", "boolean"},
            {"default", false},
            {"description", "Only return patterns with executable implementations"}}},
          {"limit",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 100},
            {"default", 20},
            {"description", "How many patterns to return (default 20)"}}}}}};
    spec.data_schema = {
        {"type", "array"},
        {"items",
         {{"type", "object"},
          {"properties",
           {{"id", {{"type", "string"}}},
            {"name", {{"type", "string"}}},
            {"category", {{"type", "string"}}},
            {"quality", {{"type", "number"}}},
            {"hasExecutable", {{"type", "boolean"}}},
            {"description", {{"type", "string"}}},
            {"path", {{"type", "string"}, {"description", "The documentation file, relative to the library"}}},
            {"reviewed",
             {{"type", "boolean"},
              {"description",
               "false: a client wrote it (extractPattern) and the operator has not approved it; "
               "executeSkill does not run its code"}}}}},
          {"required", {"id", "name", "category", "hasExecutable", "description", "path"}}}}};
    spec.extra_metadata = {{"resultsCount", {{"type", "integer"}}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        PatternQuery query;
        query.keyword = string_arg(args, "keyword");
        query.category = string_arg(args, "category");
        query.executable_only = bool_arg(args, "includeExecutable", false);
        query.limit = static_cast<std::size_t>(int_arg(args, "limit", 20));
        struct Hits {
            std::vector<PatternHit> hits;
            std::vector<bool> unreviewed;
        };
        auto found = co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, query] {
            check_library(pack);
            Hits h{pack.index->search(query), {}};
            for (const auto& hit : h.hits) h.unreviewed.push_back(pack.library->unreviewed(hit.category, hit.name));
            return h;
        });
        Json data = Json::array();
        for (std::size_t i = 0; i < found.hits.size(); ++i) {
            const auto& h = found.hits[i];
            Json item = {{"id", h.id},
                         {"name", h.name},
                         {"category", h.category},
                         {"hasExecutable", h.has_executable},
                         {"description", h.description},
                         {"path", h.path},
                         {"reviewed", !found.unreviewed[i]}};
            if (h.quality) item["quality"] = *h.quality;
            data.push_back(std::move(item));
        }
        Answer answer;
        answer.extra["resultsCount"] = data.size();
        answer.data = std::move(data);
        co_return answer;
    });
}

providers::ToolDeclaration load_skill_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "loadSkill";
    spec.title = "Load a skill";
    spec.description =
        "Load one pattern by id: its full documentation, its SKILL.md metadata, and its code when includeCode is "
        "true. Returns the texts with the quality score and whether it is executable. Use it after searchPatterns "
        "to read a pattern before applying or executing it.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"skillId",
           {{"type", "string"},
            {"maxLength", 300},
            {"description",
             "The pattern's id, \"category/skill-name\", e.g. \"database/rls-policy-generator\" (its "
             "bare name will do where only one category has it)"}}},
          {"includeCode", {{"type", "boolean"}, {"default", false}, {"description", "Include the code file's text"}}},
          {"includeMetadata", {{"type", "boolean"}, {"default", true}, {"description", "Include SKILL.md metadata"}}}}},
        {"required", {"skillId"}}};
    spec.data_schema = {{"type", "object"},
                        {"properties",
                         {{"id", {{"type", "string"}}},
                          {"name", {{"type", "string"}}},
                          {"category", {{"type", "string"}}},
                          {"documentation", {{"type", "string"}}},
                          {"metadata", {{"type", "string"}, {"description", "The raw SKILL.md"}}},
                          {"code", {{"type", "string"}}},
                          {"codeFile", {{"type", "string"}}},
                          {"quality", {{"type", "number"}}},
                          {"hasExecutable", {{"type", "boolean"}}},
                          {"reviewed",
                           {{"type", "boolean"}, {"description", "false: written by a client, not approved to run"}}}}},
                        {"required", {"id", "name", "category", "documentation", "hasExecutable"}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string given = string_arg(args, "skillId");
        const bool include_code = bool_arg(args, "includeCode", false);
        const bool include_metadata = bool_arg(args, "includeMetadata", true);
        co_return co_await pack.workers.run(
            ctx.executor(), ctx.cancel_token(), [&pack, given, include_code, include_metadata] {
                const PatternFiles files = find_pattern(pack, resolve_skill_id(pack, given));
                const PatternInfo info = pack.library->read(files);
                Json data = {{"id", files.id()},
                             {"name", files.name},
                             {"category", files.category},
                             {"documentation", info.document},
                             {"hasExecutable", files.has_executable()},
                             {"reviewed", !files.unreviewed}};
                if (info.quality) data["quality"] = *info.quality;
                if (include_metadata && !files.skill_file.empty()) data["metadata"] = info.skill_text;
                if (include_code && files.has_executable()) {
                    data["code"] = read_text_file(files.dir / files.code_file, kMaxLoadBytes,
                                                  files.category + "/" + files.code_file);
                    data["codeFile"] = files.code_file;
                }
                return Answer{std::move(data)};
            });
    });
}

}  // namespace toolport::context
