// The `context` pack: context engineering for agents (seed 003) — a pattern and skill
// library, session artifacts, session memory and metrics — over the file formats of the
// original server, so existing libraries and projects work unchanged.
//
// Its tools read and write local files, which change under them: their results are never
// cached by the pipeline (a source default the configuration may override).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "observability/health.hpp"
#include "pipeline/policy.hpp"
#include "providers/context/context_pack.hpp"
#include "providers/context/skills/skills_extension.hpp"

namespace toolport::providers {

namespace {

class ContextSource final : public Source {
public:
    explicit ContextSource(const SourceSettings& settings) : settings_(context::ContextSettings::from(settings)) {}

    void start(SourceContext& context) override {
        pack_ = std::make_unique<context::ContextPack>(settings_);
        pipeline::PolicyOverride defaults;
        defaults.cache_enabled = false;
        context.set_call_defaults(defaults);
        const auto indexed = pack_->open_index();
        spdlog::info("context: {} patterns indexed in {} ms ({} read from disk)", indexed.patterns,
                     indexed.duration.count(), indexed.read);
        report_sandbox(context);
        skills_ = std::make_unique<context::SkillsExtension>(*pack_);
        for (const auto& dir : pack_->library->unserved_dirs()) {
            spdlog::warn("context: {}/ in the pattern library is not a served category (packs.context.categories)", dir);
        }
        for (auto make : {context::search_patterns_tool, context::load_skill_tool, context::execute_skill_tool,
                          context::extract_pattern_tool, context::search_artifacts_tool, context::load_session_tool,
                          context::get_session_code_tool, context::save_session_tool, context::list_projects_tool,
                          context::add_note_tool, context::get_decisions_tool, context::get_hypotheses_tool,
                          context::get_blockers_tool, context::compression_ratio_tool, context::pattern_reuse_tool}) {
            auto declaration = make(*pack_);
            context::suggest_projects(declaration, *pack_);
            context.add_tool(std::move(declaration));
        }
        skills_->serve(context);
        // Watched from here on: the extension has listed the library as indexed, and each
        // change the watcher applies after this reaches it in order.
        const bool watching = settings_.watch &&
                              pack_->index->watch([skills = skills_.get()](context::IndexChanges changes) {
                                  skills->library_changed(std::move(changes));
                              });
        if (settings_.watch && !watching) {
            spdlog::warn("context: inotify is unavailable; patterns added while serving are found after a restart");
        }
        report_roots(context);
        std::string roots;
        for (const auto& root : settings_.projects_roots) roots += (roots.empty() ? "" : ", ") + root.string();
        spdlog::info("context: patterns in {}, projects in {}", settings_.patterns_root.string(), roots);
    }

private:
    // The pattern library and the projects roots in the log and in GET /health
    // (<source>.library, <source>.projects): a root that is missing or unreadable makes the
    // tools that need it refuse (FILESYSTEM_ERROR), which an empty answer would hide. The
    // state is read at each report, so creating the folder heals it without a restart.
    void report_roots(SourceContext& context) {
        if (auto problem = context::root_problem(pack_->patterns); !problem.empty()) {
            spdlog::warn(
                "context: the pattern library {} {} (packs.context.patterns_root): searchPatterns, loadSkill and "
                "executeSkill refuse until it does",
                settings_.patterns_root.string(), problem);
        }
        for (const auto& root : pack_->projects) {
            if (auto problem = context::root_problem(root); !problem.empty()) {
                spdlog::warn("context: the projects root {} {} (packs.context.projects_root)", root.path().string(),
                             problem);
            }
        }
        context.add_health(context.source_name() + ".library",
                           [library = pack_->patterns]() -> observability::ComponentHealth {
                               const std::string problem = context::root_problem(library);
                               if (problem.empty()) return {"readable", observability::Severity::ok};
                               return {"patterns_root " + problem, observability::Severity::degraded};
                           });
        context.add_health(context.source_name() + ".projects",
                           [roots = pack_->projects]() -> observability::ComponentHealth {
                               std::string first;
                               std::size_t readable = 0;
                               for (const auto& root : roots) {
                                   const std::string problem = context::root_problem(root);
                                   if (problem.empty()) ++readable;
                                   else if (first.empty()) first = problem;
                               }
                               if (readable == roots.size()) return {"readable", observability::Severity::ok};
                               return {fmt::format("{} of {} projects_root(s): {}", roots.size() - readable,
                                                   roots.size(), first),
                                       observability::Severity::degraded};
                           });
    }

    // executeSkill's sandbox in the log and in GET /health (<source>.skills): "sandboxed",
    // else why not and what executeSkill does about it (degraded either way).
    void report_sandbox(SourceContext& context) {
        const context::SandboxStatus sandbox = pack_->sandbox;
        const bool allowed = settings_.skill_policy.allow_unsandboxed;
        if (sandbox.available) {
            spdlog::info("context: skills run sandboxed (bubblewrap)");
        } else if (allowed) {
            spdlog::warn("context: skills run UNSANDBOXED (packs.context.skill_allow_unsandboxed): {}", sandbox.reason);
        } else {
            spdlog::warn(
                "context: executeSkill refuses to run skills: {} (install bubblewrap, or set "
                "packs.context.skill_allow_unsandboxed)",
                sandbox.reason);
        }
        context.add_health(context.source_name() + ".skills", [sandbox, allowed]() -> observability::ComponentHealth {
            if (sandbox.available) return {"sandboxed", observability::Severity::ok};
            if (allowed)
                return {"unsandboxed (skill_allow_unsandboxed): " + sandbox.reason, observability::Severity::degraded};
            return {"disabled: " + sandbox.reason, observability::Severity::degraded};
        });
    }

    context::ContextSettings settings_;
    // Declared before the pack, so it goes after it: the pack's index watcher thread, which
    // tells it about changes, is joined first.
    std::unique_ptr<context::SkillsExtension> skills_;
    std::unique_ptr<context::ContextPack> pack_;
};

}  // namespace

std::unique_ptr<Source> make_context_source(const SourceSettings& settings) {
    return std::make_unique<ContextSource>(settings);
}

}  // namespace toolport::providers
