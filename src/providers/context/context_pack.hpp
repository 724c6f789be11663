// Internal to the context pack: what its tools share (settings, roots, the worker threads
// that do its blocking file work), the helper that declares a tool with the seed-003
// envelope, and one factory per tool in four module folders:
//
//   patterns/   searchPatterns, loadSkill, executeSkill, extractPattern
//   artifacts/  searchArtifacts, loadSession, getSessionCode, saveSession, listProjects
//   memory/     addNote, getDecisions, getHypotheses, getBlockers
//   metrics/    getCompressionRatio, getPatternReuse
#pragma once

#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "async/worker_pool.hpp"
#include "providers/context/context_settings.hpp"
#include "providers/context/envelope.hpp"
#include "providers/context/patterns/library.hpp"
#include "providers/context/patterns/search_index.hpp"
#include "providers/context/patterns/skill_sandbox.hpp"
#include "providers/context/roots.hpp"
#include "providers/source.hpp"
#include "server/request_context.hpp"

namespace toolport::context {

struct ContextPack {
    explicit ContextPack(ContextSettings s, std::size_t worker_threads = 2, std::size_t skill_threads = 4);

    ContextSettings settings;
    Root patterns;
    std::vector<Root> projects;
    std::unique_ptr<PatternLibrary> library;
    std::unique_ptr<PatternIndex> index;  // opened and synced by open_index()
    // File work (reads of trees, fsync, the index) runs here, off the event loop.
    WorkerPool workers;
    // executeSkill's children are waited for here: a long skill never holds up file work.
    WorkerPool skill_runners;
    // Whether skills can be sandboxed here (probed once per process, at the pack's start).
    SandboxStatus sandbox;

    // Opens the search index and brings it up to date (at start).
    PatternIndex::SyncStats open_index();

    bool is_category(const std::string& name) const;
};

// What a tool's work returns: its `data` and its extra metadata counts.
struct Answer {
    Json data;
    Json extra = Json::object();  // e.g. {"resultsCount": 3}
};

// A tool's own work. It runs on the event loop; blocking file work goes through
// pack.workers. Throws ContextError for a failure the envelope reports.
using ToolWork = std::function<Task<Answer>(RequestContext& ctx, const Json& args)>;

struct ContextToolSpec {
    std::string name;
    std::string title;
    std::string description;  // two or three sentences: what, what it returns, when to use it
    Json input_schema;
    Json data_schema;                      // the schema of `data` in the envelope
    Json extra_metadata = Json::object();  // schemas of the tool's extra metadata counts
    providers::ToolAnnotations annotations;
};

// The declaration every context tool shares: the envelope as structuredContent and text,
// ContextError → failure envelope (isError), the pipeline's refusals in the same envelope.
providers::ToolDeclaration context_tool(ContextToolSpec spec, ToolWork work);

// Argument helpers (the schema already checked types; absent optional → fallback).
std::string string_arg(const Json& args, const char* key, const std::string& fallback = {});
bool bool_arg(const Json& args, const char* key, bool fallback);
long long int_arg(const Json& args, const char* key, long long fallback);

// How a tool takes a project (roots.hpp, resolve_project): `project`, and for the tools of
// the original server that took `projectPath` (memory, metrics, saveSession) that name as a
// deprecated alias. The schema of each, and the value a call gave (both → VALIDATION_ERROR).
Json project_property(bool schema_requires);
Json project_path_alias_property();
struct ProjectArg {
    std::string value;
    bool deprecated_name = false;  // given as projectPath
};
ProjectArg project_arg(const Json& args);
// metadata.deprecation: declared in `extra_metadata`, set on an answer when projectPath was used.
void declare_deprecation(Json& extra_metadata);
void note_deprecation(Answer& answer, const ProjectArg& project);
// The pipeline's refusal of `project` (missing, wrong type) with the projects there are.
void suggest_projects(providers::ToolDeclaration& declaration, ContextPack& pack);

// A skill given by a client as "category/name" or by its bare name: the bare name stands for
// the one served pattern of that name (PATTERN_NOT_FOUND for none, VALIDATION_ERROR naming
// the full ids when several categories have one). Reads the library: call it off the loop.
SkillId resolve_skill_id(const ContextPack& pack, std::string_view text, std::string_view what = "skillId");

// FILESYSTEM_ERROR when the pattern library cannot be read (missing, not a directory,
// unreadable): an empty answer would say the library has nothing, which is not so.
void check_library(const ContextPack& pack);

// The files of pattern `id`: CATEGORY_INVALID for a category that is not served,
// PATTERN_NOT_FOUND when it has no <name>.md.
PatternFiles find_pattern(const ContextPack& pack, const SkillId& id);

providers::ToolDeclaration search_patterns_tool(ContextPack& pack);
providers::ToolDeclaration load_skill_tool(ContextPack& pack);
providers::ToolDeclaration execute_skill_tool(ContextPack& pack);
providers::ToolDeclaration extract_pattern_tool(ContextPack& pack);
// The input schema a SKILL.md declares: its first fenced ```json block that is a JSON
// Schema object.
std::optional<Json> declared_input_schema(const std::string& skill_md);
providers::ToolDeclaration search_artifacts_tool(ContextPack& pack);
providers::ToolDeclaration load_session_tool(ContextPack& pack);
providers::ToolDeclaration get_session_code_tool(ContextPack& pack);
providers::ToolDeclaration save_session_tool(ContextPack& pack);
providers::ToolDeclaration list_projects_tool(ContextPack& pack);
providers::ToolDeclaration add_note_tool(ContextPack& pack);
providers::ToolDeclaration compression_ratio_tool(ContextPack& pack);
providers::ToolDeclaration pattern_reuse_tool(ContextPack& pack);
providers::ToolDeclaration get_decisions_tool(ContextPack& pack);
providers::ToolDeclaration get_hypotheses_tool(ContextPack& pack);
providers::ToolDeclaration get_blockers_tool(ContextPack& pack);

}  // namespace toolport::context
