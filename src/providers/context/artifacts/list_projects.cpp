// listProjects: the projects a client can address by name (`project` of the artifact, memory
// and metrics tools), with what each holds. Names only: where the projects root lies on the
// server is not the client's business, and over HTTP it could not use the path anyway.
#include <algorithm>
#include <system_error>

#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/context_pack.hpp"

namespace toolport::context {

namespace {

constexpr long long kDefaultLimit = 100;
constexpr long long kMaxLimit = 1000;

bool is_dir(const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::is_directory(std::filesystem::symlink_status(p, ec)) && !ec;
}

}  // namespace

providers::ToolDeclaration list_projects_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "listProjects";
    spec.title = "List projects";
    spec.description =
        "List the projects under the projects root by name, e.g. \"demo-app\", with whether each has session "
        "artifacts and session memory and how many sessions it holds. Returns the names the other tools take as "
        "project. Use it first when you do not know the project's name.";
    spec.input_schema = {{"type", "object"},
                         {"properties",
                          {{"limit",
                            {{"type", "integer"},
                             {"minimum", 1},
                             {"maximum", kMaxLimit},
                             {"default", kDefaultLimit},
                             {"description", "How many projects at most, in name order (default 100)"}}}}}};
    spec.data_schema = {
        {"type", "array"},
        {"items",
         {{"type", "object"},
          {"properties",
           {{"name", {{"type", "string"}, {"description", "Pass it as project to the other tools"}}},
            {"hasArtifacts", {{"type", "boolean"}, {"description", "It has .agent-artifacts (sessions)"}}},
            {"hasMemory", {{"type", "boolean"}, {"description", "It has .agent-memory (notes)"}}},
            {"sessionsCount", {{"type", "integer"}}}}},
          {"required", {"name", "hasArtifacts", "hasMemory", "sessionsCount"}}}}};
    spec.extra_metadata = {{"resultsCount", {{"type", "integer"}}},
                           {"totalCount", {{"type", "integer"}, {"description", "Projects there are in all"}}}};
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const auto limit = static_cast<std::size_t>(std::clamp(int_arg(args, "limit", kDefaultLimit), 1LL, kMaxLimit));
        co_return co_await pack.workers.run(ctx.executor(), ctx.cancel_token(), [&pack, limit] {
            check_projects_roots(pack.projects);
            const auto projects = list_projects(pack.projects);
            Json data = Json::array();
            for (std::size_t i = 0; i < projects.size() && i < limit; ++i) {
                const auto& p = projects[i];
                const bool artifacts = is_dir(p.dir / ".agent-artifacts");
                data.push_back({{"name", p.name},
                                {"hasArtifacts", artifacts},
                                {"hasMemory", is_dir(p.dir / ".agent-memory")},
                                {"sessionsCount", artifacts ? list_sessions(p.dir).size() : 0}});
            }
            Answer answer;
            answer.extra["resultsCount"] = data.size();
            answer.extra["totalCount"] = projects.size();
            answer.data = std::move(data);
            return answer;
        });
    });
}

}  // namespace toolport::context
