#include "pipeline/stages/observe.hpp"

#include "observability/events.hpp"
#include "observability/metrics.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

std::string ObserveStage::outcome_code(const ToolResult& result) {
    if (!result.is_error) return "OK";
    if (result.structured_content.is_object()) {
        auto code = result.structured_content.find("error_code");
        if (code != result.structured_content.end() && code->is_string()) return code->get<std::string>();
    }
    return "TOOL_ERROR";
}

Task<ToolResult> ObserveStage::handle(Call& call, const Next& next) {
    ToolResult result;
    try {
        result = co_await next(call);
    } catch (const ToolError& e) {
        result = e.to_result();
    }
    const std::string code = outcome_code(result);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - call.started).count();
    auto& m = observability::metrics();
    const std::string& tool = call.tool->name;
    m.increment("toolport_tool_calls_total", {{"tool", tool}, {"code", code}});
    if (code != "OK") m.increment("toolport_tool_errors_total", {{"tool", tool}, {"code", code}});
    m.observe("toolport_tool_call_duration_seconds", {{"tool", tool}}, seconds);

    Json fields = {{"tool", tool}, {"request_id", call.ctx.request_id()}, {"code", code},
                   {"duration_ms", seconds * 1000}};
    if (!call.tool->source.empty()) fields["source"] = call.tool->source;
    if (!call.service().empty()) fields["service"] = call.service();
    if (result.meta.is_object()) {
        for (const char* k : {"cache_status", "downstream_api_calls", "response_size_bytes", "tokens_estimate"}) {
            if (auto it = result.meta.find(k); it != result.meta.end()) fields[k] = *it;
        }
    }
    observability::log_event(code == "OK" ? observability::EventLevel::info : observability::EventLevel::warn,
                             "tool_call", std::move(fields));
    co_return result;
}

}  // namespace toolport::pipeline
