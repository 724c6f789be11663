// The memory module: notes an agent keeps about its session — decisions, hypotheses,
// blockers and general notes — in the project's .agent-memory/session-notes.jsonl.
//
//   addNote        append one note (durable before the answer)
//   getDecisions   the decision notes' contents, newest first, a page at a time
//   getHypotheses  the hypothesis notes' contents, likewise
//   getBlockers    the blocker notes' contents, likewise
//
// A page holds at most `limit` notes and about 256 KiB of them (well inside the default
// response limit), between `since` and `until` when given; metadata.nextCursor continues.
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "providers/context/context_pack.hpp"
#include "providers/context/memory/notes_file.hpp"
#include "server/tool_error.hpp"
#include "util/sanitize.hpp"

namespace toolport::context {

namespace {

Json note_types() {
    Json types = Json::array();
    for (const char* t : kNoteTypes) types.push_back(t);
    return types;
}

constexpr long long kDefaultLimit = 50;
constexpr long long kMaxLimit = 500;

// What a getter accepts, for its schema and for the suggestion when a page is still too
// large for the server's response limit.
std::string paging_suggestion() {
    return fmt::format(
        "Ask for a smaller page: a lower limit (default {}, at most {}), then call again with cursor set "
        "to metadata.nextCursor for the next one; or narrow by time with since/until (ISO 8601).",
        kDefaultLimit, kMaxLimit);
}

std::optional<NoteTime> time_arg(const Json& args, const char* key) {
    auto it = args.find(key);
    if (it == args.end() || it->is_null()) return std::nullopt;
    const std::string text = it->is_string() ? it->get<std::string>() : std::string();
    auto at = parse_iso8601(text);
    if (!at) {
        throw ContextError(ErrorCode::validation_error,
                           fmt::format("{} \"{}\" is not an ISO 8601 date or date-time", key,
                                       util::sanitize_for_message(text, 60)),
                           fmt::format("Pass {} as e.g. \"2025-11-05\" or \"2025-11-05T10:12:00Z\".", key));
    }
    return at;
}

// One getter per note type: a page of that type's notes, newest first.
providers::ToolDeclaration notes_getter(ContextPack& pack, std::string name, std::string title, std::string type,
                                        std::string description, std::string count_key) {
    ContextToolSpec spec;
    spec.name = std::move(name);
    spec.title = std::move(title);
    spec.description = std::move(description);
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"project", project_property(false)},
          {"projectPath", project_path_alias_property()},
          {"limit",
           {{"type", "integer"},
            {"minimum", 1},
            {"maximum", kMaxLimit},
            {"default", kDefaultLimit},
            {"description", "How many notes at most in this page (a page also stops at about 256 KiB of notes)"}}},
          {"cursor",
           {{"type", "string"},
            {"maxLength", 200},
            {"description",
             "metadata.nextCursor of the previous page, to get the next (older) notes; omit for the newest"}}},
          {"since",
           {{"type", "string"},
            {"maxLength", 64},
            {"description",
             "Only notes at or after this time: ISO 8601 date or date-time, e.g. 2025-11-05 or "
             "2025-11-05T10:12:00Z (UTC when no offset is given)"}}},
          {"until",
           {{"type", "string"},
            {"maxLength", 64},
            {"description", "Only notes at or before this time, ISO 8601 like since"}}}}}};
    spec.data_schema = {{"type", "array"}, {"items", {{"type", "string"}}}};
    spec.extra_metadata = {
        {count_key, {{"type", "integer"}, {"description", "Notes in this page"}}},
        {"nextCursor",
         {{"type", "string"},
          {"description",
           "Present when older notes may remain: pass it as cursor for the next page (which may hold "
           "none)"}}},
        {"skippedLineOffsets",
         {{"type", "array"},
          {"items", {{"type", "integer"}}},
          {"description",
           "Byte offsets of lines in the part of the notes file read for this page that are not notes "
           "(skipped, not fatal)"}}}};
    declare_deprecation(spec.extra_metadata);
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    auto declaration =
        context_tool(std::move(spec), [&pack, type, count_key](RequestContext& ctx, const Json& args) -> Task<Answer> {
            const ProjectArg project = project_arg(args);
            NotesQuery query;
            query.type = type;
            query.limit = static_cast<std::size_t>(std::clamp(int_arg(args, "limit", kDefaultLimit), 1LL, kMaxLimit));
            query.since = time_arg(args, "since");
            query.until = time_arg(args, "until");
            if (auto it = args.find("cursor"); it != args.end() && it->is_string()) {
                query.cursor = decode_cursor(it->get<std::string>());
                if (!query.cursor) {
                    throw ContextError(
                        ErrorCode::validation_error, "cursor is not one this tool handed out",
                        "Pass metadata.nextCursor of the previous page unchanged, or omit cursor to start "
                        "from the newest note.");
                }
            }
            // Each file access may block in the kernel (a lock held elsewhere, a slow disk): the
            // call does not outlive its deadline for it.
            NotesPage page = co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, project, query] {
                return read_notes_page(resolve_project(project.value, pack.projects).dir, query);
            });
            Json contents = Json::array();
            for (auto& note : page.notes) contents.push_back(std::move(note.content));
            Answer answer;
            answer.extra[count_key] = contents.size();
            if (page.next) answer.extra["nextCursor"] = encode_cursor(*page.next);
            if (!page.skipped_offsets.empty()) {
                spdlog::warn("context: {} line(s) of a notes file are not notes and were skipped",
                             page.skipped_offsets.size());
                answer.extra["skippedLineOffsets"] = page.skipped_offsets;
            }
            answer.data = std::move(contents);
            note_deprecation(answer, project);
            co_return answer;
        });
    // The pipeline's generic advice names filters this tool does not have: name its own.
    declaration.on_error = [inner = std::move(declaration.on_error)](const ToolError& error) {
        if (error.code() != ToolErrorCode::response_too_large) return inner(error);
        ToolError narrowed = error;
        narrowed.suggest(paging_suggestion());
        return inner(narrowed);
    };
    return declaration;
}

}  // namespace

providers::ToolDeclaration add_note_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "addNote";
    spec.title = "Add a session note";
    spec.description =
        "Record a decision, hypothesis, blocker or general note in the project's session memory "
        "(.agent-memory/session-notes.jsonl). Returns the note as stored, with its timestamp; it is on disk before "
        "the answer. Use it whenever you decide something or hit a blocker, so later turns and sessions can recall it.";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"project", project_property(false)},
          {"projectPath", project_path_alias_property()},
          {"type", {{"type", "string"}, {"enum", note_types()}, {"description", "What kind of note"}}},
          {"content",
           {{"type", "string"}, {"minLength", 1}, {"maxLength", 65536}, {"description", "The note itself"}}}}},
        {"required", {"type", "content"}}};
    spec.data_schema = {
        {"type", "object"},
        {"properties",
         {{"type", {{"type", "string"}}}, {"content", {{"type", "string"}}}, {"timestamp", {{"type", "string"}}}}},
        {"required", {"type", "content", "timestamp"}}};
    declare_deprecation(spec.extra_metadata);
    spec.annotations = {.read_only = false, .destructive = false, .idempotent = false, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const ProjectArg project = project_arg(args);
        Note draft{string_arg(args, "type"), string_arg(args, "content"), ""};
        const Note note = co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, project, draft] {
            return append_note(resolve_project(project.value, pack.projects).dir, draft);
        });
        Answer answer{{{"type", note.type}, {"content", note.content}, {"timestamp", note.timestamp}}};
        note_deprecation(answer, project);
        co_return answer;
    });
}

providers::ToolDeclaration get_decisions_tool(ContextPack& pack) {
    return notes_getter(
        pack, "getDecisions", "Session decisions", "decision",
        "List the decision notes of the project's session memory, newest first, a page at a time (limit, "
        "then cursor = metadata.nextCursor), optionally between since and until. Returns their contents "
        "as strings. Use it to recall what was already decided before deciding again.",
        "decisionsCount");
}

providers::ToolDeclaration get_hypotheses_tool(ContextPack& pack) {
    return notes_getter(pack, "getHypotheses", "Session hypotheses", "hypothesis",
                        "List the hypothesis notes of the project's session memory, newest first, a page at a time "
                        "(limit, then cursor = metadata.nextCursor), optionally between since and until. Returns their "
                        "contents as strings. Use it to see which theories are still being tested.",
                        "hypothesesCount");
}

providers::ToolDeclaration get_blockers_tool(ContextPack& pack) {
    return notes_getter(
        pack, "getBlockers", "Session blockers", "blocker",
        "List the blocker notes of the project's session memory, newest first, a page at a time (limit, "
        "then cursor = metadata.nextCursor), optionally between since and until. Returns their contents "
        "as strings. Use it at the start of a session to see what stopped progress last time.",
        "blockersCount");
}

}  // namespace toolport::context
