// The memory module: notes an agent keeps about its session — decisions, hypotheses,
// blockers and general notes — in the project's .agent-memory/session-notes.jsonl.
//
//   addNote        append one note (durable before the answer)
//   getDecisions   the decision notes' contents, in order
//   getHypotheses  the hypothesis notes' contents
//   getBlockers    the blocker notes' contents
#include <chrono>

#include <spdlog/spdlog.h>

#include "observability/iso_time.hpp"
#include "providers/context/context_pack.hpp"
#include "providers/context/memory/notes_file.hpp"

namespace toolport::context {

namespace {

Json project_path_property() {
    return {{"type", "string"},
            {"description", "Absolute path of the project directory (inside a configured projects root), e.g. "
                            "/home/me/Dev/my-app"}};
}

Json note_types() {
    Json types = Json::array();
    for (const char* t : kNoteTypes) types.push_back(t);
    return types;
}

// One getter per note type: the contents of that type's notes, in file order.
providers::ToolDeclaration notes_getter(ContextPack& pack, std::string name, std::string title, std::string type,
                                        std::string description, std::string count_key) {
    ContextToolSpec spec;
    spec.name = std::move(name);
    spec.title = std::move(title);
    spec.description = std::move(description);
    spec.input_schema = {{"type", "object"},
                         {"properties", {{"projectPath", project_path_property()}}},
                         {"required", {"projectPath"}}};
    spec.data_schema = {{"type", "array"}, {"items", {{"type", "string"}}}};
    spec.extra_metadata = {{count_key, {{"type", "integer"}}},
                           {"skippedLines",
                            {{"type", "array"},
                             {"items", {{"type", "integer"}}},
                             {"description", "Lines of the notes file that are not notes (skipped, not fatal)"}}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack, type, count_key](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const std::string project_path = string_arg(args, "projectPath");
        NotesRead read = co_await pack.workers.run(ctx.executor(), [&pack, project_path] {
            return read_notes(resolve_project_path(project_path, pack.projects));
        });
        Json contents = Json::array();
        for (auto& note : read.notes) {
            if (note.type == type) contents.push_back(std::move(note.content));
        }
        Answer answer;
        answer.extra[count_key] = contents.size();
        if (!read.skipped_lines.empty()) {
            spdlog::warn("context: {} line(s) of a notes file are not notes and were skipped", read.skipped_lines.size());
            answer.extra["skippedLines"] = read.skipped_lines;
        }
        answer.data = std::move(contents);
        co_return answer;
    });
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
         {{"projectPath", project_path_property()},
          {"type", {{"type", "string"}, {"enum", note_types()}, {"description", "What kind of note"}}},
          {"content", {{"type", "string"}, {"minLength", 1}, {"maxLength", 65536}, {"description", "The note itself"}}}}},
        {"required", {"projectPath", "type", "content"}}};
    spec.data_schema = {{"type", "object"},
                        {"properties",
                         {{"type", {{"type", "string"}}}, {"content", {{"type", "string"}}}, {"timestamp", {{"type", "string"}}}}},
                        {"required", {"type", "content", "timestamp"}}};
    spec.annotations = {.read_only = false, .destructive = false, .idempotent = false, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        Note note{string_arg(args, "type"), string_arg(args, "content"),
                  observability::iso8601_utc(std::chrono::system_clock::now(), true)};
        const std::string project_path = string_arg(args, "projectPath");
        co_await pack.workers.run(ctx.executor(), [&pack, project_path, note] {
            append_note(resolve_project_path(project_path, pack.projects), note);
        });
        co_return Answer{{{"type", note.type}, {"content", note.content}, {"timestamp", note.timestamp}}};
    });
}

providers::ToolDeclaration get_decisions_tool(ContextPack& pack) {
    return notes_getter(pack, "getDecisions", "Session decisions", "decision",
                        "List the decision notes of the project's session memory, oldest first. Returns their "
                        "contents as strings. Use it to recall what was already decided before deciding again.",
                        "decisionsCount");
}

providers::ToolDeclaration get_hypotheses_tool(ContextPack& pack) {
    return notes_getter(pack, "getHypotheses", "Session hypotheses", "hypothesis",
                        "List the hypothesis notes of the project's session memory, oldest first. Returns their "
                        "contents as strings. Use it to see which theories are still being tested.",
                        "hypothesesCount");
}

providers::ToolDeclaration get_blockers_tool(ContextPack& pack) {
    return notes_getter(pack, "getBlockers", "Session blockers", "blocker",
                        "List the blocker notes of the project's session memory, oldest first. Returns their contents "
                        "as strings. Use it at the start of a session to see what stopped progress last time.",
                        "blockersCount");
}

}  // namespace toolport::context
