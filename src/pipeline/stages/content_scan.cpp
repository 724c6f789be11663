#include "pipeline/stages/content_scan.hpp"

#include "server/error_result_guard.hpp"

#include <fmt/format.h>

#include "observability/metrics.hpp"
#include "pipeline/result_scan.hpp"
#include "schema/json_schema.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

namespace {

namespace redaction = util::redaction;

}  // namespace

void count_redactions(const std::string& source, std::string_view where, const redaction::RedactionCounts& counts) {
    for (std::size_t i = 0; i < redaction::kDetectorCount; ++i) {
        if (!counts.by_detector[i]) continue;
        observability::metrics().increment("toolport_redactions_total",
                                           {{"source", source},
                                            {"detector",
                                             std::string(redaction::name(static_cast<redaction::Detector>(i)))},
                                            {"where", std::string(where)}},
                                           counts.by_detector[i]);
    }
}

Task<ToolResult> ContentScanStage::handle(Call& call, const Next& next) {
    ToolResult result = co_await next(call);
    const auto& policy = call.policy->content_scan;
    const ToolSpec& tool = *call.tool;
    if (policy.injection_on()) {
        const auto found = scan_result_injection(result);
        if (found.any()) {
            label_injection(result, found, tool.source, policy.injection_warning);
            count_injection_markers(tool.source, found);
        }
    }
    if (policy.results) {
        redaction::RedactionCounts counts;
        const bool structured_changed = redact_result(result, policy.results, counts);
        if (counts.total()) {
            count_redactions(tool.source, "result", counts);
            if (!result.meta.is_object()) result.meta = Json::object();
            result.meta[kRedactedMetaKey] = redacted_label(counts);
        }
        // A redacted string stays a string, but may no longer match a pattern, format or
        // enum of the outputSchema: the client gets neither the value nor a result that
        // breaks the schema it was promised.
        if (structured_changed && !result.is_error && !tool.output_schema.is_null() &&
            !matches_output_schema(tool, result.structured_content)) {
            throw ToolError(ToolErrorCode::upstream_error,
                            fmt::format("The result of {} held values the redaction replaced (redact.results); with "
                                        "them replaced it no longer matches the tool's outputSchema, so it is not "
                                        "passed on",
                                        tool.name))
                .recoverable(false)
                .suggest(
                    "Ask the operator to turn off the detector that matched for this tool "
                    "(tools.<name>.redact.results), or call a tool whose result holds no such value.");
        }
    }
    co_return result;
}

}  // namespace toolport::pipeline
