#include "providers/context/context_pack.hpp"

#include <algorithm>

#include "server/request_context.hpp"
#include "server/tool_error.hpp"

namespace toolport::context {

namespace {
using Clock = std::chrono::steady_clock;
}

ContextPack::ContextPack(ContextSettings s, std::size_t worker_threads, std::size_t skill_threads)
    : settings(std::move(s)),
      patterns("pattern library", settings.patterns_root),
      workers(worker_threads),
      skill_runners(skill_threads),
      sandbox(sandbox_status(settings.skill_policy.bwrap)) {
    for (const auto& root : settings.projects_roots) projects.emplace_back("projects root", root);
    library = std::make_unique<PatternLibrary>(patterns, settings.categories);
}

PatternIndex::SyncStats ContextPack::open_index() {
    index = std::make_unique<PatternIndex>(*library, settings.index_file.empty()
                                                         ? default_index_file(settings.patterns_root)
                                                         : settings.index_file);
    return index->sync();
}

bool ContextPack::is_category(const std::string& name) const {
    return std::find(settings.categories.begin(), settings.categories.end(), name) != settings.categories.end();
}

providers::ToolDeclaration context_tool(ContextToolSpec spec, ToolWork work) {
    providers::ToolDeclaration d;
    d.name = std::move(spec.name);
    d.title = std::move(spec.title);
    d.description = std::move(spec.description);
    d.input_schema = std::move(spec.input_schema);
    d.output_schema = envelope_schema(std::move(spec.data_schema), std::move(spec.extra_metadata));
    d.annotations = spec.annotations;
    d.handler = [work = std::move(work)](RequestContext& ctx, const Json& args) -> Task<ToolResult> {
        const auto started = Clock::now();
        auto elapsed = [&] { return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started); };
        try {
            Answer answer = co_await work(ctx, args);
            co_return success_result(std::move(answer.data), elapsed(), std::move(answer.extra));
        } catch (const ContextError& e) {
            co_return failure_result(e, elapsed());
        }
    };
    d.on_error = [](const ToolError& error) { return failure_result(error); };
    return d;
}

Json project_property(bool schema_requires) {
    return {{"type", "string"},
            {"maxLength", 4096},
            {"description", std::string(schema_requires ? "" : "Required. ") +
                                "The project: its name under the projects root, e.g. \"demo-app\" (listProjects lists "
                                "them), or its absolute path where that lies inside the projects root"}};
}

Json project_path_alias_property() {
    return {{"type", "string"},
            {"maxLength", 4096},
            {"deprecated", true},
            {"description", "Deprecated: the old name of project (same values); pass project instead"}};
}

ProjectArg project_arg(const Json& args) {
    const std::string project = string_arg(args, "project");
    const std::string alias = string_arg(args, "projectPath");
    if (!project.empty() && !alias.empty()) {
        throw ContextError(ErrorCode::validation_error, "give project only: projectPath is its deprecated name",
                           "Leave out projectPath and pass the project as project.");
    }
    if (!alias.empty()) return {alias, true};
    return {project, false};
}

void declare_deprecation(Json& extra_metadata) {
    extra_metadata["deprecation"] = {{"type", "string"},
                                     {"description",
                                      "Present when a deprecated argument was used: what to use instead"}};
}

void note_deprecation(Answer& answer, const ProjectArg& project) {
    if (project.deprecated_name) {
        answer.extra["deprecation"] = "projectPath is deprecated: pass the same value as project";
    }
}

void suggest_projects(providers::ToolDeclaration& declaration, ContextPack& pack) {
    declaration.on_error = [&pack, inner = std::move(declaration.on_error)](const ToolError& error) {
        if (error.to_json().value("parameter", "") != "project") return inner(error);
        ToolError hinted = error;
        try {
            hinted.suggest(projects_hint(pack.projects));
        } catch (const std::exception&) {
            // The suggestion is a courtesy: an unreadable root leaves the pipeline's own.
        }
        return inner(hinted);
    };
}

std::string string_arg(const Json& args, const char* key, const std::string& fallback) {
    auto it = args.find(key);
    return it != args.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool bool_arg(const Json& args, const char* key, bool fallback) {
    auto it = args.find(key);
    return it != args.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

long long int_arg(const Json& args, const char* key, long long fallback) {
    auto it = args.find(key);
    if (it == args.end() || !it->is_number()) return fallback;
    return it->is_number_integer() ? it->get<long long>() : static_cast<long long>(it->get<double>());
}

}  // namespace toolport::context
