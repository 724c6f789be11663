// getCompressionRatio: how much context the project's finalization packs saved, per
// session, for one session, or in aggregate.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "providers/context/artifacts/sessions.hpp"
#include "providers/context/context_pack.hpp"
#include "providers/context/metrics/compression.hpp"

namespace toolport::context {

namespace {

double round2(double v) { return std::round(v * 100.0) / 100.0; }

Json metrics_json(const CompressionMetrics& m, const std::string& project) {
    return {{"sessionId", m.session_id},
            {"project", project},
            {"date", m.date},
            {"originalTokens", m.original},
            {"compressedTokens", m.compressed},
            {"compressionRatio", round2(m.ratio())},
            {"savings", m.savings()}};
}

Json metrics_schema() {
    return {{"type", "object"},
            {"properties",
             {{"sessionId", {{"type", "string"}}},
              {"project", {{"type", "string"}}},
              {"date", {{"type", "string"}}},
              {"originalTokens", {{"type", "integer"}}},
              {"compressedTokens", {{"type", "integer"}}},
              {"compressionRatio", {{"type", "number"}, {"description", "Percent of the original tokens saved"}}},
              {"savings", {{"type", "integer"}}}}},
            {"required",
             {"sessionId", "project", "date", "originalTokens", "compressedTokens", "compressionRatio", "savings"}}};
}

Json aggregate_schema() {
    return {{"type", "object"},
            {"properties",
             {{"totalSessions", {{"type", "integer"}}},
              {"avgCompressionRatio", {{"type", "number"}}},
              {"totalTokensSaved", {{"type", "integer"}}},
              {"bestCompression", {{"type", {"number", "null"}}}},
              {"worstCompression", {{"type", {"number", "null"}}}},
              {"bestSession", {{"type", {"string", "null"}}}},
              {"worstSession", {{"type", {"string", "null"}}}}}},
            {"required",
             {"totalSessions", "avgCompressionRatio", "totalTokensSaved", "bestCompression", "worstCompression"}}};
}

}  // namespace

providers::ToolDeclaration compression_ratio_tool(ContextPack& pack) {
    ContextToolSpec spec;
    spec.name = "getCompressionRatio";
    spec.title = "Session compression metrics";
    spec.description =
        "Calculate how many context tokens the project's finalization packs saved: per session, for one session, or "
        "in aggregate. Returns original and compressed token counts and the compression ratio as a percentage. Use "
        "it to check that finalization keeps sessions compact (the target is 70% or more).";
    spec.input_schema = {
        {"type", "object"},
        {"properties",
         {{"project", project_property(false)},
          {"projectPath", project_path_alias_property()},
          {"sessionId",
           {{"type", "string"},
            {"maxLength", 255},
            {"description", "One session, e.g. \"2025-11-02-rate-limiting\"; all sessions when omitted"}}},
          {"aggregate",
           {{"type", "boolean"},
            {"default", false},
            {"description", "Summarize every session (sessionId is then ignored)"}}}}}};
    spec.data_schema = {
        {"anyOf", {metrics_schema(), {{"type", "array"}, {"items", metrics_schema()}}, aggregate_schema()}}};
    spec.extra_metadata = {{"resultsCount", {{"type", "integer"}}}};
    declare_deprecation(spec.extra_metadata);
    spec.annotations = {.read_only = true, .destructive = false, .idempotent = true, .open_world = false};
    return context_tool(std::move(spec), [&pack](RequestContext& ctx, const Json& args) -> Task<Answer> {
        const ProjectArg project_ref = project_arg(args);
        const std::string session_id = string_arg(args, "sessionId");
        const bool aggregate = bool_arg(args, "aggregate", false);
        co_return co_await pack.workers.run(
            ctx.executor(), ctx.cancel_token(), [&pack, project_ref, session_id, aggregate] {
                const Project resolved = resolve_project(project_ref.value, pack.projects);
                const auto& project = resolved.dir;
                const std::string& name = resolved.name;
                Answer answer;
                note_deprecation(answer, project_ref);
                if (aggregate) {
                    const auto all = project_metrics(project);
                    double sum = 0;
                    long long saved = 0;
                    const CompressionMetrics* best = nullptr;
                    const CompressionMetrics* worst = nullptr;
                    for (const auto& m : all) {
                        sum += m.ratio();
                        saved += m.savings();
                        if (!best || m.ratio() > best->ratio()) best = &m;
                        if (!worst || m.ratio() < worst->ratio()) worst = &m;
                    }
                    answer.data = {{"totalSessions", all.size()},
                                   {"avgCompressionRatio", all.empty() ? 0.0 : round2(sum / double(all.size()))},
                                   {"totalTokensSaved", saved},
                                   {"bestCompression", best ? Json(round2(best->ratio())) : Json()},
                                   {"worstCompression", worst ? Json(round2(worst->ratio())) : Json()},
                                   {"bestSession", best ? Json(best->session_id) : Json()},
                                   {"worstSession", worst ? Json(worst->session_id) : Json()}};
                    answer.extra["resultsCount"] = all.size();
                } else if (!session_id.empty()) {
                    auto m = session_metrics(project, session_id);
                    if (!m) {
                        const auto sessions = list_sessions(project);
                        const bool exists = std::find(sessions.begin(), sessions.end(), session_id) != sessions.end();
                        throw ContextError(
                            ErrorCode::session_not_found,
                            exists ? fmt::format("No metrics found for session: {} (it has no "
                                                 "compression-metrics.json with token counts)",
                                                 session_id)
                                   : fmt::format("Session not found: {}/{}", name, session_id),
                            "Call getCompressionRatio without sessionId to see the sessions that have metrics.");
                    }
                    answer.data = metrics_json(*m, name);
                    answer.extra["resultsCount"] = 1;
                } else {
                    Json list = Json::array();
                    for (const auto& m : project_metrics(project)) list.push_back(metrics_json(m, name));
                    answer.extra["resultsCount"] = list.size();
                    answer.data = std::move(list);
                }
                return answer;
            });
    });
}

}  // namespace toolport::context
