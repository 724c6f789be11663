// The artifacts module's readers: finalization packs found by keyword, loaded whole, or
// mined for their code.
//
//   searchArtifacts  sessions whose title, summary or text has every keyword, newest first
//   loadSession      one session's summary, decisions, implementations, challenges, next steps
//   getSessionCode   one session's fenced code blocks, optionally of one language
#include <algorithm>

#include <fmt/format.h>

#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/context_pack.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

std::string lower(std::string s) {
    for (char& c : s) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    return s;
}

std::vector<std::string> words(const std::string& text) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t') ++j;
        if (j > i) out.push_back(lower(text.substr(i, j - i)));
        i = j;
    }
    return out;
}

Json session_property() {
    return {{"type", "string"},
            {"maxLength", 255},
            {"description", "The session id, e.g. \"2025-10-15-authentication-flow\" (searchArtifacts lists them)"}};
}

Json code_block_schema() {
    return {{"type", "object"},
            {"properties",
             {{"language", {{"type", "string"}}}, {"code", {{"type", "string"}}}, {"file", {{"type", "string"}}}}},
            {"required", {"language", "code"}}};
}

struct FoundSession {
    SessionRecord record;
    std::string project;  // its name under the projects root
};

FoundSession session_or_throw(const ContextPack& pack, const std::string& project, const std::string& session_id) {
    const Project where = resolve_project(project, pack.projects);
    check_name(session_id, "sessionId");
    auto session = load_session(where.dir, session_id);
    if (!session) {
        throw ContextError(ErrorCode::session_not_found,
                           fmt::format("Session not found: {}/{}", where.name,
                                       util::sanitize_for_message(session_id, 100)),
                           fmt::format("Call searchArtifacts with project \"{}\" to list its sessions.", where.name));
    }
    return {std::move(*session), where.name};
}

Json metadata_json(const SessionRecord& s, const std::string& project) {
    return {{"sessionId", s.session_id}, {"date", s.date},     {"project", project},   {"title", s.title},
            {"summary", s.summary},      {"path", s.relative}, {"hasCode", s.has_code}};
}

}  // namespace

providers::ToolDeclaration search_artifacts_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "searchArtifacts";
    spec.title = "Search session artifacts";
    spec.description =
        "Search finalization packs (session artifacts) across projects by keyword, newest first. Returns each "
        "session's id, date, project, title, summary and whether it has code. Use it to find earlier work before "
        "loading one session with loadSession.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"keyword",
           {{"type", "string"},
            {"maxLength", 500},
            {"description", "Words that must all appear in a session's title, summary or text (any case)"}}},
          {"project",
           {{"type", "string"},
            {"maxLength", 4096},
            {"description",
             "Limit the search to this project: its name, e.g. \"demo-app\" (listProjects lists "
             "them), or its absolute path inside the projects root"}}},
          {"limit",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", 500},
            {"default", 20},
            {"description", "How many sessions to return (default 20)"}}}}}};
    spec.data_schema = {
        {"type", "array"},
        {"items",
         {{"type", "object"},
          {"properties",
           {{"sessionId", {{"type", "string"}}},
            {"date", {{"type", "string"}}},
            {"project", {{"type", "string"}}},
            {"title", {{"type", "string"}}},
            {"summary", {{"type", "string"}}},
            {"path", {{"type", "string"}, {"description", "The session's file, relative to its project"}}},
            {"hasCode", {{"type", "boolean"}}}}},
          {"required", {"sessionId", "date", "project", "title", "summary", "path", "hasCode"}}}}};
    spec.extra_metadata = {{"resultsCount", {{"type", "integer"}}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string keyword = string_arg(args, "keyword");
        const std::string project = string_arg(args, "project");
        const auto limit = static_cast<std::size_t>(int_arg(args, "limit", 20));
        Json found = co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, keyword, project, limit] {
            // (project name, directory) pairs to search.
            std::vector<std::pair<std::string, std::filesystem::path>> projects;
            if (!project.empty()) {
                const Project where = resolve_project(project, pack.projects);
                projects.emplace_back(where.name, where.dir);
            } else {
                check_projects_roots(pack.projects);
                for (const auto& p : list_projects(pack.projects)) {
                    std::error_code ec;
                    if (std::filesystem::is_directory(p.dir / ".agent-artifacts", ec))
                        projects.emplace_back(p.name, p.dir);
                }
            }
            const auto terms = words(keyword);
            std::vector<std::pair<SessionRecord, std::string>> hits;
            for (const auto& [name, dir] : projects) {
                for (const auto& id : list_sessions(dir)) {
                    std::optional<SessionRecord> s;
                    try {
                        s = load_session(dir, id);
                    } catch (const ContextError&) {
                        continue;  // an unreadable session is not a reason to fail the search
                    }
                    if (!s) continue;
                    const std::string haystack = lower(s->title + "\n" + s->summary + "\n" + s->text);
                    bool all = true;
                    for (const auto& t : terms) all = all && haystack.find(t) != std::string::npos;
                    if (all) hits.emplace_back(std::move(*s), name);
                }
            }
            std::stable_sort(hits.begin(), hits.end(), [](const auto& a, const auto& b) {
                if (a.first.date != b.first.date) return a.first.date > b.first.date;
                return a.first.session_id > b.first.session_id;
            });
            Json out = Json::array();
            for (std::size_t i = 0; i < hits.size() && i < limit; ++i)
                out.push_back(metadata_json(hits[i].first, hits[i].second));
            return out;
        });
        Answer answer;
        answer.extra["resultsCount"] = found.size();
        answer.data = std::move(found);
        co_return answer;
    });
}

providers::ToolDeclaration load_session_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "loadSession";
    spec.title = "Load a session";
    spec.description =
        "Load one session's finalization pack: its summary, decisions, implementations, challenges and next steps, "
        "and its code blocks when includeCode is true. Returns the structured session. Use it after "
        "searchArtifacts to pick up where an earlier session left off.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"project", project_property(true)},
          {"sessionId", session_property()},
          {"includeCode",
           {{"type", "boolean"}, {"default", false}, {"description", "Include the session's code blocks"}}}}},
        {"required", {"project", "sessionId"}}};
    Json strings = {{"type", "array"}, {"items", {{"type", "string"}}}};
    spec.data_schema = {{"type", "object"},
                        {"properties",
                         {{"sessionId", {{"type", "string"}}},
                          {"date", {{"type", "string"}}},
                          {"project", {{"type", "string"}}},
                          {"title", {{"type", "string"}}},
                          {"content",
                           {{"type", "object"},
                            {"properties",
                             {{"summary", {{"type", "string"}}},
                              {"decisions", strings},
                              {"implementations", strings},
                              {"challenges", strings},
                              {"nextSteps", strings}}},
                            {"required", {"summary", "decisions", "implementations", "challenges", "nextSteps"}}}},
                          {"codeBlocks", {{"type", "array"}, {"items", code_block_schema()}}}}},
                        {"required", {"sessionId", "date", "project", "content"}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string project = string_arg(args, "project");
        const std::string session_id = string_arg(args, "sessionId");
        const bool include_code = bool_arg(args, "includeCode", false);
        FoundSession found = co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, project, session_id] {
            return session_or_throw(pack, project, session_id);
        });
        const SessionRecord& s = found.record;
        Json data = {{"sessionId", s.session_id},
                     {"date", s.date},
                     {"project", found.project},
                     {"title", s.title},
                     {"content",
                      {{"summary", s.summary},
                       {"decisions", s.decisions},
                       {"implementations", s.implementations},
                       {"challenges", s.challenges},
                       {"nextSteps", s.next_steps}}}};
        if (include_code) {
            Json blocks = Json::array();
            for (const auto& b : s.code_blocks) blocks.push_back(to_json(b));
            data["codeBlocks"] = std::move(blocks);
        }
        co_return Answer{std::move(data)};
    });
}

providers::ToolDeclaration get_session_code_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "getSessionCode";
    spec.title = "Get a session's code";
    spec.description =
        "Extract the fenced code blocks of one session's artifacts, optionally only those of one language. Returns "
        "each block's language, code and file when the fence named one. Use it to reuse code an earlier session "
        "wrote without loading the whole session.";
    spec.input_schema = {{"type", "object"},
                         {"properties",
                          {{"project", project_property(true)},
                           {"sessionId", session_property()},
                           {"language",
                            {{"type", "string"},
                             {"description", "Only blocks of this language tag (any case), e.g. \"sql\""}}}}},
                         {"required", {"project", "sessionId"}}};
    spec.data_schema = {{"type", "array"}, {"items", code_block_schema()}};
    spec.extra_metadata = {{"codeBlocksCount", {{"type", "integer"}}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string project = string_arg(args, "project");
        const std::string session_id = string_arg(args, "sessionId");
        const std::string language = lower(string_arg(args, "language"));
        const SessionRecord s =
            (co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, project, session_id] {
                return session_or_throw(pack, project, session_id);
            })).record;
        Json blocks = Json::array();
        for (const auto& b : s.code_blocks) {
            if (language.empty() || lower(b.language) == language) blocks.push_back(to_json(b));
        }
        Answer answer;
        answer.extra["codeBlocksCount"] = blocks.size();
        answer.data = std::move(blocks);
        co_return answer;
    });
}

}  // namespace toolport::context
