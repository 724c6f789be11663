#include "pipeline/stages/observe.hpp"

#include "async/completion.hpp"
#include "observability/events.hpp"
#include "observability/mcp_metrics.hpp"
#include "observability/metrics.hpp"
#include "protocol/request_id.hpp"
#include "server/tool_error.hpp"
#include "util/digest.hpp"

#include <spdlog/spdlog.h>

#include "server/error_result_guard.hpp"

namespace toolport::pipeline {

std::string ObserveStage::outcome_code(const ToolResult& result) {
    if (!result.is_error) return "OK";
    if (result.structured_content.is_object()) {
        auto code = result.structured_content.find("error_code");
        if (code != result.structured_content.end() && code->is_string()) return code->get<std::string>();
        // A source's own envelope: {success: false, error: {code, message}} (the context pack).
        auto error = result.structured_content.find("error");
        if (error != result.structured_content.end() && error->is_object()) {
            auto nested = error->find("code");
            if (nested != error->end() && nested->is_string()) return nested->get<std::string>();
        }
    }
    // Error fields kept out of structuredContent, which must match the success schema the
    // tool declares (the tango pack; the engine's guard, server/error_result_guard.hpp).
    if (result.meta.is_object()) {
        auto error = result.meta.find(kDroppedErrorMetaKey);
        if (error != result.meta.end() && error->is_object()) {
            auto code = error->find("error_code");
            if (code != error->end() && code->is_string()) return code->get<std::string>();
        }
    }
    return "TOOL_ERROR";
}

ObserveStage::ToolSeries::ByCode* ObserveStage::ToolSeries::failure(const std::string& tool, const std::string& code) {
    for (auto& f : failures)
        if (f.code == code) return &f;
    if (failures.size() >= kMaxCodes) return nullptr;
    auto& m = observability::metrics();
    return &failures.emplace_back(ByCode{code, m.counter("toolport_tool_calls_total", {{"tool", tool}, {"code", code}}),
                                         m.counter("toolport_tool_errors_total", {{"tool", tool}, {"code", code}})});
}

Task<ToolResult> ObserveStage::handle(Call& call, const Next& next) {
    ToolResult result = unassigned_result();
    // A call its client cancelled (notifications/cancelled, or a stateless request whose
    // stream it closed) gets no answer, but it was made: it is counted, as CANCELLED.
    std::exception_ptr cancelled;
    try {
        result = co_await next(call);
    } catch (const ToolError& e) {
        result = call.tool->error_result(e);
    } catch (const OperationCancelled&) {
        cancelled = std::current_exception();
    }
    const std::string code = cancelled ? std::string(kCancelled) : outcome_code(result);
    const auto now = std::chrono::steady_clock::now();
    const double seconds = std::chrono::duration<double>(now - call.started).count();
    const std::string& tool = call.tool->name;
    // Handles, not labelled updates: building the labels and looking the series up under
    // the registry's lock was ~3.5 % of a call's CPU.
    // Each series is made on its first update, as before (/metrics lists no zero series).
    ToolSeries& series = series_.get(tool, [] { return ToolSeries{}; });
    auto& m = observability::metrics();
    if (code == "OK") {
        if (!series.ok) series.ok = m.counter("toolport_tool_calls_total", {{"tool", tool}, {"code", "OK"}});
        series.ok.increment();
    } else if (cancelled) {
        // Not the tool's failure: a call, no error.
        m.increment("toolport_tool_calls_total", {{"tool", tool}, {"code", code}});
    } else {
        if (auto* failure = series.failure(tool, code)) {
            failure->calls.increment();
            failure->errors.increment();
        } else {
            m.increment("toolport_tool_calls_total", {{"tool", tool}, {"code", code}});
            m.increment("toolport_tool_errors_total", {{"tool", tool}, {"code", code}});
        }
    }
    if (!series.duration) series.duration = m.histogram("toolport_tool_call_duration_seconds", {{"tool", tool}});
    series.duration.observe(seconds);
    // The console's last hour per source and service, and the tool's totals: a cancelled
    // call is a call, not an error (as in toolport_tool_errors_total).
    if (!series.totals) {
        auto& stats = observability::call_stats();
        series.totals = &stats.tool(tool);
        if (!call.tool->source.empty()) series.source = &stats.source(call.tool->source);
        if (!call.service().empty() && call.service() != call.tool->source)
            series.service = &stats.service(call.service());
    }
    {
        const bool failed = code != "OK" && !cancelled;
        const int bin = observability::LatencyBins::bin_of(seconds * 1000);
        const auto step = observability::CallSeries::step_of(now);
        series.totals->record(bin, failed);
        if (series.source) series.source->record(step, bin, failed);
        if (series.service) series.service->record(step, bin, failed);
        if (failed && !call.tool->source.empty()) {
            observability::call_stats().set_last_error(call.tool->source, tool + ": " + code,
                                                       std::chrono::system_clock::now());
        }
    }
    // The MCP conventions' operation metric for tools/call (the server session records every
    // other method, and a tools/call refused with a JSON-RPC error).
    if (code == "OK") {
        if (!series.operation) {
            series.operation = m.histogram("mcp_server_operation_duration_seconds",
                                           {{"mcp_method_name", "tools/call"}, {"gen_ai_tool_name", tool}});
        }
        series.operation.observe(seconds);
    } else if (!cancelled) {
        static const std::string kToolsCall = "tools/call";
        observability::record_server_operation(kToolsCall, &tool, "tool_error", seconds);
    }

    const std::string& session = call.ctx.caller().session_id;
    if (!session.empty()) {
        Tally& t = tallies_[session];
        ++t.calls;
        if (code != "OK" && !cancelled) ++t.errors;
        t.total_ms += seconds * 1000;
        if (result.meta.is_object()) {
            if (auto status = result.meta.find(std::string_view("cache_status"));
                status != result.meta.end() && status->is_string() && status->get_ref<const std::string&>() == "hit") {
                ++t.cache_hits;
            }
            auto d = result.meta.find(std::string_view("downstream_api_calls"));
            if (d != result.meta.end() && d->is_number_integer()) t.downstream_calls += d->get<long long>();
        }
    }
    // Successful calls are debug events: one line per call at info costs ~40 % of the
    // server's throughput, and /metrics already counts them. Failures stay warnings.
    const bool ok = code == "OK" || cancelled;
    if (spdlog::should_log(ok ? spdlog::level::debug : spdlog::level::warn)) {
        Json fields = {{"tool", tool},
                       {"request_id", protocol::loggable_id(call.ctx.request_id())},
                       {"code", code},
                       {"duration_ms", seconds * 1000}};
        if (!call.tool->source.empty()) fields["source"] = call.tool->source;
        if (!call.service().empty()) fields["service"] = call.service();
        if (result.meta.is_object()) {
            for (const char* k : {"cache_status", "downstream_api_calls", "response_size_bytes", "tokens_estimate"}) {
                if (auto it = result.meta.find(k); it != result.meta.end()) fields[k] = *it;
            }
        }
        observability::log_event(ok ? observability::EventLevel::debug : observability::EventLevel::warn, "tool_call",
                                 std::move(fields), call.ctx.trace_context());
    }
    if (cancelled) std::rethrow_exception(cancelled);
    co_return result;
}

void ObserveStage::session_ended(const CallerIdentity& caller, const Json& extra) {
    auto it = tallies_.find(caller.session_id);
    if (it == tallies_.end()) return;
    const Tally t = it->second;
    tallies_.erase(it);
    Json fields = {{"session", util::sha256_hex(caller.session_id).substr(0, 12)},
                   {"mcp_call_count", t.calls},
                   {"failed_calls", t.errors},
                   {"failure_rate", t.calls ? static_cast<long long>(t.errors * 100 / t.calls) : 0},
                   {"cache_hits", t.cache_hits},
                   {"downstream_calls", t.downstream_calls},
                   {"avg_response_ms", t.calls ? t.total_ms / static_cast<double>(t.calls) : 0.0}};
    if (extra.is_object()) fields.update(extra);
    observability::log_event(observability::EventLevel::info, "orchestration_summary", std::move(fields));
}

}  // namespace toolport::pipeline
