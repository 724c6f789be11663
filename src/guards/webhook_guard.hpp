// WebhookGuard: a guard reached by an HTTP POST (`guards.<name>.webhook`).
//
// Request (application/json):
//   {"version": 1, "guard": "pii_check", "phase": "before" | "after", "request_id": 7,
//    "tool": "search_vendors", "source": "tango",
//    "arguments": {...},                        // after: those the tool ran with
//    "result": {"content": [...], ...},         // after only: the CallToolResult
//    "principal": {"id": "...", "scopes": [...]} | null,
//    "session_id": "...", "trace_id": "..."}
// Reply (2xx, JSON):
//   {"decision": "allow"}
//   {"decision": "deny", "reason": "...", "suggestion": "..."}
//   {"decision": "modify", "arguments": {...}}  // before
//   {"decision": "modify", "result": {...}}     // after
//   and optionally "cache_ttl_s": N: the verdict holds for N seconds for the same input.
// Anything else (another status, not JSON, an unknown decision, a modify without its
// replacement) is a failure, which the guard's failure_mode decides about.
#pragma once

#include "pipeline/guard.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::guards {

class WebhookGuard final : public pipeline::Guard {
public:
    // `http` must outlive the guard.
    WebhookGuard(http_client::HttpClient& http, std::string name, pipeline::GuardSettings::Webhook settings);
    Task<pipeline::GuardVerdict> check(const pipeline::GuardInput& input,
                                       const pipeline::GuardCallLimits& limits) override;

private:
    http_client::HttpClient& http_;
    std::string name_;
    pipeline::GuardSettings::Webhook settings_;
};

// The request body for `input`.
Json webhook_request(const std::string& guard, const pipeline::GuardInput& input);
// The verdict in a reply body. Throws pipeline::GuardFailure saying what is wrong with it.
pipeline::GuardVerdict parse_webhook_reply(std::string_view body, pipeline::GuardPhase phase);

}  // namespace toolport::guards
