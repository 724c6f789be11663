// ContentScanStage ("content_scan"): the built-in guardrail on what a tool returns.
// Redacts secrets and personal data in the result with the detectors the tool's policy
// names (`redact: {results: [...]}`, none by default), and labels a result that holds
// prompt-injection markers (`injection_scan:`, on by default for sources Toolport does not
// own): never an edit of what the tool said, a _meta entry and a warning block put first.
// Both are counted in the metrics, per source:
//   toolport_redactions_total{source, detector, where="result"}
//   toolport_injection_markers_total{source, marker}
// The scanners are util/redaction/; the result walk is result_scan.hpp. The audit record's
// and trace spans' payloads are redacted where they are written (audit.cpp, tracer.cpp)
// with the policy's `redact: {payloads: [...]}`.
#pragma once

#include "pipeline/pipeline.hpp"
#include "util/redaction/text_redactor.hpp"

namespace toolport::pipeline {

class ContentScanStage final : public Stage {
public:
    std::string_view name() const override { return "content_scan"; }
    bool passes_through(const CallPolicy& policy) const override {
        return !policy.content_scan.results && !policy.content_scan.injection_on();
    }
    Task<ToolResult> handle(Call& call, const Next& next) override;
};

// Counts `counts` in toolport_redactions_total{source, detector, where}.
void count_redactions(const std::string& source, std::string_view where, const util::redaction::RedactionCounts& counts);

}  // namespace toolport::pipeline
