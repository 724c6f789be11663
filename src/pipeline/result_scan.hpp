// The built-in content scan applied to a tool result (util/redaction/ has the scanners):
// redaction of its text and structured content, and the prompt-injection label.
//
//   RedactionCounts counts;
//   redact_result(result, policy.content_scan.results, counts);   // "[REDACTED:email]" in place
//   auto found = scan_result_injection(result);
//   if (found.any()) label_injection(result, found, "github", /*warning_block=*/true);
#pragma once

#include <string>

#include "server/content.hpp"
#include "util/redaction/injection_markers.hpp"
#include "util/redaction/text_redactor.hpp"

namespace toolport::pipeline {

// The _meta key of the injection label.
inline constexpr const char* kInjectionMetaKey = "toolport/injection";
// The _meta key that says how many values were redacted, per detector.
inline constexpr const char* kRedactedMetaKey = "toolport/redacted";

// Redacts `result` in place with the detectors of `set`: its text blocks, embedded text
// resources and structuredContent (strings only, so it keeps its shape). When
// structuredContent changed, the text block that carried its JSON is written again from the
// redacted value. Returns whether structuredContent changed (the caller checks it against
// the outputSchema: a redacted string may no longer match a pattern or format).
bool redact_result(ToolResult& result, util::redaction::DetectorSet set, util::redaction::RedactionCounts& counts);

// The injection markers in `result`'s text blocks, embedded text resources and
// structuredContent. A structuredContent mirrored in a text block is not counted twice.
util::redaction::InjectionFindings scan_result_injection(const ToolResult& result);

// What the labels say: {source, markers: {<marker>: count}} (_meta["toolport/injection"]),
// and {<detector>: count} (_meta["toolport/redacted"]).
Json injection_label(const util::redaction::InjectionFindings& found, const std::string& source);
Json redacted_label(const util::redaction::RedactionCounts& counts);
// Counts `found` in toolport_injection_markers_total{source, marker}.
void count_injection_markers(const std::string& source, const util::redaction::InjectionFindings& found);

// Labels `result`, never editing what the tool said: _meta["toolport/injection"] lists the
// markers found (and the source), and with `warning_block` a text block put first tells
// the model the result holds text that looks like instructions. A result labelled already
// (a meta-tool's call through the pipeline) is left as it is.
void label_injection(ToolResult& result, const util::redaction::InjectionFindings& found, const std::string& source,
                     bool warning_block);

// The content scan of what resources/read and prompts/get answer from `source` (a source
// Toolport does not own: the gateway's upstreams). Each text (a resource content's `text`;
// a prompt message's text blocks and embedded text resources) is redacted in place with
// `redact` (counted in toolport_redactions_total{where="result"}, listed in
// _meta["toolport/redacted"]), and with `injection` the markers found are labelled in
// _meta["toolport/injection"] (counted in toolport_injection_markers_total): on each
// resource content (ResourceContents._meta), on the prompt result. The label never edits
// the text: a resource's bytes, and a skill file's digest, stay as served unless redaction
// is asked for.
void scan_resource_contents(Json& contents, util::redaction::DetectorSet redact, bool injection,
                            const std::string& source);
void scan_prompt_result(Json& result, util::redaction::DetectorSet redact, bool injection, const std::string& source);

}  // namespace toolport::pipeline
