// BudgetStage ("budget"): downstream API calls counted per *user request* (seed 002), so
// one runaway agent loop cannot hammer the services behind the tools.
//
// Scope: one user request, as the host marks it: the W3C trace id when the client sends
// `traceparent` (HTTP header or params._meta.traceparent), else params._meta
// "toolport/request" (any id the host gives each user request); else the session, whose
// tally is forgotten after budget.session_idle_s without calls (a host that marks nothing,
// such as Claude Desktop, gets a fresh budget after each pause between turns); else the
// single call. A refusal names the scope it used.
//
// Each call reserves its expected cost before it runs (the source's reported figure is
// unknown until it answers: DEFAULT_DOWNSTREAM_PER_MCP_CALL, 12) and settles to the real
// figure after (result._meta.downstream_api_calls). Reservation is one atomic
// check-and-add in the BudgetStore, so 20 parallel calls cannot overspend — the design
// this follows checked and recorded separately and could. Tools without a downstream
// service reserve nothing. Over the limit → MCP_BUDGET_EXCEEDED. Warnings at 75 % and
// 90 % are logged (mcp_budget_warning) and sent to the client as a log notification.
#pragma once

#include <optional>
#include <string>

#include "observability/metrics.hpp"
#include "pipeline/pipeline.hpp"
#include "stores/budget_store.hpp"

namespace toolport::pipeline {

class BudgetStage final : public Stage {
public:
    explicit BudgetStage(stores::BudgetStore& store) : store_(store) {}
    std::string_view name() const override { return "budget"; }
    // No budget to keep and no service to count the calls of.
    bool passes_through(const CallPolicy& policy) const override {
        return policy.budget.max_downstream_calls_per_request <= 0 && policy.service.empty();
    }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // What a call's downstream calls are counted against.
    struct Scope {
        enum class Kind { call, trace, request, session };
        Kind kind = Kind::call;
        std::string key;  // "trace:<trace-id>", "request:<hash>", "session:<hash>"; empty for a call
    };
    static Scope scope_for(const RequestContext& ctx);
    // scope_for(ctx).key.
    static std::string scope_of(const RequestContext& ctx) { return scope_for(ctx).key; }
    // The _meta key a host may set to one id per user request, when it sends no traceparent.
    static constexpr const char* kRequestMeta = "toolport/request";
    // The trace id of a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>"), if valid.
    static std::optional<std::string> trace_id(std::string_view traceparent);

private:
    // `scope` is put in words ("this session, ...", "this user request (...)") only for a
    // warning: building them on every call cost a formatted string (about 1,200 instructions).
    void report_usage(Call& call, std::int64_t used, std::int64_t actual, std::int64_t limit, bool has_metadata,
                      const Scope& scope);

    stores::BudgetStore& store_;
    // toolport_budget_downstream_calls_total by tool, resolved once per tool (updated on
    // every metered call).
    observability::HandleCache<observability::Counter> downstream_calls_;
};

}  // namespace toolport::pipeline
