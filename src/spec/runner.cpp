// Running specs: one call per spec, then every assertion on its outcome.
#include <algorithm>

#include <fmt/format.h>

#include "async/control_signal.hpp"
#include "spec/assertions/assertion_type.hpp"
#include "spec/outcome.hpp"
#include "spec/spec.hpp"

namespace toolport::spec {

using detail::Outcome;

namespace {

Outcome call(const Spec& spec, Target& target, std::chrono::milliseconds timeout) {
    try {
        switch (spec.kind) {
            case SpecKind::tool:
                return detail::outcome_of_result(spec.kind, target.call_tool(spec.target, spec.arguments, timeout));
            case SpecKind::prompt:
                return detail::outcome_of_result(spec.kind, target.get_prompt(spec.target, spec.arguments, timeout));
            case SpecKind::resource:
                return detail::outcome_of_result(spec.kind, target.read_resource(spec.target, timeout));
        }
    } catch (const std::exception& e) {
        return detail::outcome_of_failure(spec.kind, e);
    } catch (const ControlSignal& e) {
        return detail::outcome_of_failure(spec.kind, std::runtime_error(e.what()));
    } catch (...) {
        return detail::outcome_of_failure(spec.kind, std::runtime_error("the call failed with an unknown exception"));
    }
    return detail::outcome_of_failure(spec.kind, std::runtime_error("unknown spec kind"));
}

AssertionResult check(const Assertion& assertion, const detail::CheckContext& context, std::vector<std::string>& notes) {
    AssertionResult result{assertion.type, false, {}};
    const detail::AssertionType* type = detail::find_assertion_type(assertion.type);
    if (!type) {
        result.message = "unknown assertion type";
        return result;
    }
    try {
        detail::Verdict verdict = type->check(assertion.params, context);
        result.passed = verdict.passed;
        result.message = std::move(verdict.message);
        if (!verdict.note.empty()) notes.push_back(std::move(verdict.note));
    } catch (const std::exception& e) {
        result.message = fmt::format("could not be checked: {}", e.what());
    }
    return result;
}

std::vector<std::string> tool_names(Target& target) {
    Json tools = target.list_tools();
    if (tools.is_object() && tools.contains("tools")) tools = tools["tools"];
    std::vector<std::string> names;
    if (!tools.is_array()) return names;
    for (const auto& tool : tools) {
        if (tool.is_object() && tool.contains("name") && tool["name"].is_string()) names.push_back(tool["name"]);
    }
    return names;
}

// When a tool call failed, a missing tool is the likeliest reason; say so if it is.
std::optional<std::string> missing_tool_hint(const Spec& spec, Target& target) {
    try {
        auto names = tool_names(target);
        if (std::find(names.begin(), names.end(), spec.target) != names.end()) return std::nullopt;
        std::string listed;
        for (std::size_t i = 0; i < names.size() && i < 20; ++i) listed += (i ? ", " : "") + names[i];
        if (names.size() > 20) listed += fmt::format(", ... ({} in all)", names.size());
        return fmt::format("hint: the server has no tool named \"{}\" (it has: {})", spec.target,
                           listed.empty() ? "none" : listed);
    } catch (const std::exception&) {
        return std::nullopt;  // only a hint: the failure itself is already reported
    }
}

SpecResult started(const Spec& spec) {
    SpecResult result;
    result.name = spec.name;
    result.file = spec.file;
    result.suite = spec.suite;
    return result;
}

}  // namespace

TargetError::TargetError(int code, const std::string& message, Json data)
    : std::runtime_error(message), code_(code), data_(std::move(data)) {}

SpecResult run_spec(const Spec& spec, Target& target, const RunOptions& options) {
    SpecResult result = started(spec);
    auto timeout = spec.timeout.value_or(options.default_timeout);
    auto start = options.now();
    Outcome outcome = call(spec, target, timeout);
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(options.now() - start);

    detail::CheckContext context{spec, outcome, result.elapsed, options};
    bool all_passed = true;
    for (const auto& assertion : spec.assertions) {
        result.assertions.push_back(check(assertion, context, result.notes));
        all_passed = all_passed && result.assertions.back().passed;
    }
    result.status = all_passed ? SpecResult::Status::passed : SpecResult::Status::failed;
    if (!all_passed && spec.kind == SpecKind::tool && outcome.kind == Outcome::Kind::call_failed) {
        if (auto hint = missing_tool_hint(spec, target)) result.notes.push_back(*hint);
    }
    return result;
}

RunSummary run_specs(const LoadedSpecs& loaded, const TargetResolver& resolve, const RunOptions& options) {
    RunSummary summary;
    bool any_only = std::any_of(loaded.entries.begin(), loaded.entries.end(), [](const auto& entry) {
        const Spec* spec = std::get_if<Spec>(&entry);
        return spec && spec->only;
    });
    for (const auto& entry : loaded.entries) {
        SpecResult result;
        if (const auto* error = std::get_if<LoadError>(&entry)) {
            result.name = error->name;
            result.file = error->file;
            result.status = SpecResult::Status::failed;
            result.problems = error->problems;
        } else {
            const Spec& spec = std::get<Spec>(entry);
            if (any_only && !spec.only) continue;
            if (spec.skip) {
                result = started(spec);
                result.status = SpecResult::Status::skipped;
            } else {
                Target* target = nullptr;
                try {
                    target = &resolve(spec.server_url);
                } catch (const std::exception& e) {
                    result = started(spec);
                    result.status = SpecResult::Status::failed;
                    result.problems.push_back(fmt::format("cannot reach the server: {}", e.what()));
                }
                if (target) result = run_spec(spec, *target, options);
            }
        }
        switch (result.status) {
            case SpecResult::Status::passed: ++summary.passed; break;
            case SpecResult::Status::failed: ++summary.failed; break;
            case SpecResult::Status::skipped: ++summary.skipped; break;
        }
        if (options.on_result) options.on_result(result);
        summary.results.push_back(std::move(result));
    }
    return summary;
}

int exit_status(const RunSummary& summary) { return summary.results.empty() || summary.failed > 0 ? 1 : 0; }

}  // namespace toolport::spec
