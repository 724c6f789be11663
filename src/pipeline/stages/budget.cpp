#include "pipeline/stages/budget.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "observability/call_series.hpp"
#include "observability/events.hpp"
#include "observability/metrics.hpp"
#include "observability/trace_context.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"

namespace toolport::pipeline {

namespace {

// The real figure a source reported (result._meta.downstream_api_calls), if any.
std::optional<std::int64_t> reported_calls(const Call& call, const ToolResult& result) {
    if (call.downstream_api_calls) return *call.downstream_api_calls;
    if (result.meta.is_object()) {
        auto it = result.meta.find(std::string_view("downstream_api_calls"));
        if (it != result.meta.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0)
            return it->get<std::int64_t>();
    }
    return std::nullopt;
}

// A refusal on our side cost nothing (beyond requests the source itself counted); a call
// that reached the service and failed cost at least that one call.
std::int64_t cost_of_failure(const Call& call, const ToolError& e) {
    const auto code = e.code();
    const bool reached = code == ToolErrorCode::upstream_error || code == ToolErrorCode::timeout ||
                         code == ToolErrorCode::response_too_large;
    const std::int64_t sent = call.ctx.downstream_requests();
    return reached ? std::max<std::int64_t>(1, sent) : sent;
}

int percent(std::int64_t used, std::int64_t limit) { return limit <= 0 ? 100 : static_cast<int>(used * 100 / limit); }

}  // namespace

std::optional<std::string> BudgetStage::trace_id(std::string_view tp) {
    // The tracer's reading of the header (observability/trace_context.hpp): one trace id
    // for the budget and the spans alike.
    auto context = observability::parse_traceparent(tp);
    if (!context) return std::nullopt;
    return observability::to_hex(context->trace_id);
}

BudgetStage::Scope BudgetStage::scope_for(const RequestContext& ctx) {
    if (const Json* meta = ctx.meta()) {
        if (auto tp = meta->find(std::string_view("traceparent")); tp != meta->end() && tp->is_string()) {
            if (auto id = trace_id(tp->get<std::string>())) return {Scope::Kind::trace, "trace:" + *id};
        }
        if (auto mark = meta->find(kRequestMeta); mark != meta->end() && mark->is_string()) {
            const auto& id = mark->get_ref<const std::string&>();
            if (!id.empty() && id.size() <= 256) return {Scope::Kind::request, util::named_digest("request:", id)};
        }
    }
    const auto& session = ctx.caller().session_id;
    if (session.empty()) return {};
    return {Scope::Kind::session, util::named_digest("session:", session)};
}

namespace {

// The scope in words, for a refusal: what the client should know about what it hit.
std::string scope_words(const BudgetStage::Scope& scope, const BudgetPolicy& policy) {
    switch (scope.kind) {
        case BudgetStage::Scope::Kind::trace: return "this user request (its traceparent trace id)";
        case BudgetStage::Scope::Kind::request: return "this user request (its _meta \"toolport/request\" id)";
        case BudgetStage::Scope::Kind::session:
            return fmt::format(
                "this session, which marks no user request (no traceparent or _meta \"toolport/request\"), "
                "since it was last idle for {} s",
                policy.session_idle.count());
        case BudgetStage::Scope::Kind::call: break;
    }
    return "this call";
}

}  // namespace

// After a settle: the status event, the metric, and a warning (log and client) when this
// call crossed 75 % or 90 % of the limit.
void BudgetStage::report_usage(Call& call, std::int64_t used, std::int64_t actual, std::int64_t limit,
                               bool has_metadata, const Scope& scope) {
    const std::string& tool = call.tool->name;
    const std::int64_t before = used - actual;
    if (actual > 0) {
        auto make = [&] {
            return observability::metrics().counter("toolport_budget_downstream_calls_total", {{"tool", tool}});
        };
        downstream_calls_.get(tool, make).increment(static_cast<double>(actual));
    }
    observability::call_stats().budgets().note(observability::CallSeries::step_of(call.started), used, limit);
    const int pct = percent(used, limit);
    if (spdlog::should_log(spdlog::level::debug)) {
        observability::log_event(observability::EventLevel::debug, "mcp_budget_status",
                                 {{"tool_name", tool},
                                  {"downstream_calls", used},
                                  {"limit", limit},
                                  {"percent_used", pct},
                                  {"has_metadata", has_metadata}},
                                 call.ctx.trace_context());
    }
    for (int threshold : {90, 75}) {
        if (percent(before, limit) < threshold && pct >= threshold) {
            std::string message = threshold >= 90 ? "Budget critically low" : "Budget warning";
            Json fields = {{"message", message},
                           {"tool_name", tool},
                           {"downstream_calls", used},
                           {"limit", limit},
                           {"percent_used", pct}};
            observability::log_event(observability::EventLevel::warn, "mcp_budget_warning", fields,
                                     call.ctx.trace_context());
            call.ctx.log(LogLevel::warning,
                         Json{{"event", "mcp_budget_warning"},
                              {"message", fmt::format("{}: {} of {} downstream API calls used in {} ({}%)", message,
                                                      used, limit, scope_words(scope, call.policy->budget), pct)}},
                         "toolport.budget");
            break;
        }
    }
}

Task<ToolResult> BudgetStage::handle(Call& call, const Next& next) {
    const auto& policy = call.policy->budget;
    const std::int64_t limit = policy.max_downstream_calls_per_request;
    if (limit <= 0) {
        // No budget to keep, but _meta still says what the call is counted as costing.
        if (call.service().empty()) co_return co_await next(call);
        try {
            ToolResult result = co_await next(call);
            call.downstream_api_calls = static_cast<int>(
                reported_calls(call, result).value_or(policy.default_downstream_per_call));
            co_return result;
        } catch (const ToolError& e) {
            call.downstream_api_calls = static_cast<int>(cost_of_failure(call, e));
            throw;
        }
    }
    // How long a scope's tally lives without calls (the stores' TTL slides with every reserve
    // and settle): a request's for scope_ttl; a session's only until a pause of session_idle,
    // which ends the unmarked "request".
    const auto ttl_of = [&policy](const Scope& scope) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(
            scope.kind == Scope::Kind::session ? policy.session_idle : policy.scope_ttl);
    };

    if (call.service().empty()) {
        // No downstream service: nothing to reserve; what the tool reports it spent (a
        // local tool that calls an API itself) still counts against the request.
        ToolResult result = co_await next(call);
        auto reported = reported_calls(call, result);
        if (reported && *reported > 0) {
            const Scope scoped = scope_for(call.ctx);
            if (!scoped.key.empty()) {
                const std::int64_t used = co_await store_.settle(scoped.key, 0, *reported, ttl_of(scoped));
                report_usage(call, used, *reported, limit, true, scoped);
            }
        }
        co_return result;
    }

    const std::int64_t reserve = policy.default_downstream_per_call;
    const Scope scoped = scope_for(call.ctx);
    const std::string& scope = scoped.key;
    const auto scope_ttl = ttl_of(scoped);
    if (scope.empty()) {
        // The call is its own scope: only its own estimate can exceed the limit.
        if (reserve > limit) {
            throw ToolError(ToolErrorCode::budget_exceeded,
                            fmt::format("MCP downstream API budget exceeded: this call may make {} downstream calls, "
                                        "the limit is {}",
                                        reserve, limit));
        }
        co_return co_await next(call);
    }

    auto reservation = co_await store_.reserve(scope, reserve, limit, scope_ttl);
    if (auto& span = call.ctx.span(); span.recording()) {
        span.add_event(reservation.granted ? "budget.reserved" : "budget.refused",
                       {{"scope", scope_words(scoped, policy)},
                        {"used", std::int64_t{reservation.used}},
                        {"reserve", std::int64_t{reserve}},
                        {"limit", std::int64_t{limit}}});
    }
    auto& pressure = observability::call_stats().budgets();
    const auto step = observability::CallSeries::step_of(call.started);
    pressure.note(step, reservation.granted ? reservation.used : reservation.used + reserve, limit);
    if (!reservation.granted) {
        observability::metrics().increment("toolport_budget_rejections_total", {{"tool", call.tool->name}});
        pressure.refused(step);
        observability::log_event(observability::EventLevel::warn, "mcp_budget_exceeded",
                                 {{"tool_name", call.tool->name},
                                  {"server_id", call.service()},
                                  {"estimated_calls", reservation.used + reserve},
                                  {"limit", limit}},
                                 call.ctx.trace_context());
        ToolError refusal(ToolErrorCode::budget_exceeded,
                          fmt::format("MCP downstream API budget exceeded: {} of {} downstream calls already used in "
                                      "{}, and this call may make {} more",
                                      reservation.used, limit, scope_words(scoped, policy), reserve));
        if (scoped.kind == Scope::Kind::session) {
            refusal.suggest(fmt::format(
                "Ask for less (narrow the scope, batch work into fewer calls, or ask for summaries); the session's "
                "tally starts "
                "again after {} s without calls (a host that sends traceparent or _meta \"toolport/request\" gets "
                "a budget per user request)",
                policy.session_idle.count()));
        }
        throw refusal;
    }

    std::int64_t actual = 0;
    bool has_metadata = false;
    ToolResult result;
    std::exception_ptr failure;
    try {
        result = co_await next(call);
        auto reported = reported_calls(call, result);
        has_metadata = reported.has_value();
        actual = reported.value_or(reserve);
        // _meta reports what the budget counted: the source's figure, else the estimate.
        call.downstream_api_calls = static_cast<int>(actual);
    } catch (const ToolError& e) {
        actual = cost_of_failure(call, e);
        call.downstream_api_calls = static_cast<int>(actual);
        failure = std::current_exception();
    } catch (...) {
        failure = std::current_exception();  // cancelled, or a JSON-RPC error: nothing spent
    }
    const std::int64_t used = co_await store_.settle(scope, reserve, actual, scope_ttl);
    if (auto& span = call.ctx.span(); span.recording()) {
        span.add_event("budget.settled", {{"reserved", std::int64_t{reserve}},
                                          {"actual", std::int64_t{actual}},
                                          {"used", std::int64_t{used}},
                                          {"limit", std::int64_t{limit}}});
    }
    if (failure) std::rethrow_exception(failure);
    report_usage(call, used, actual, limit, has_metadata, scoped);
    co_return result;
}

}  // namespace toolport::pipeline
