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
    index = std::make_unique<PatternIndex>(
        *library, settings.index_file.empty() ? default_index_file(settings.patterns_root) : settings.index_file);
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
