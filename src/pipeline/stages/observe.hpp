// ObserveStage (always on, outermost): after every call, the metrics (calls and errors by
// tool and code, a call its client cancelled as CANCELLED, latency histogram) and one
// structured `tool_call` log event with the request id, outcome, duration and the call's
// _meta accounting (debug for successes and cancellations, warn for failures). It also
// keeps a tally per session and logs it as `orchestration_summary` when the session ends.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "observability/call_series.hpp"
#include "observability/metrics.hpp"
#include "pipeline/pipeline.hpp"

namespace toolport::pipeline {

class ObserveStage final : public Stage {
public:
    // The code of a call whose client cancelled it (counted in toolport_tool_calls_total,
    // not as an error).
    static constexpr const char* kCancelled = "CANCELLED";
    std::string_view name() const override { return "observe"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // "OK", the structured error_code of an isError result, or "TOOL_ERROR" for an
    // isError result without one.
    static std::string outcome_code(const ToolResult& result);

    // Logs the session's orchestration_summary (if it made calls) and forgets it. `extra`
    // adds fields known elsewhere (the services' health).
    void session_ended(const CallerIdentity& caller, const Json& extra = Json::object());

    struct Tally {
        long long calls = 0;
        long long errors = 0;
        long long cache_hits = 0;
        long long downstream_calls = 0;
        double total_ms = 0;
    };
    const std::unordered_map<std::string, Tally>& tallies() const { return tallies_; }

private:
    // One tool's series, resolved on its first call. Error codes are few per tool; past
    // kMaxCodes (a tool inventing codes) the labelled updates take over.
    struct ToolSeries {
        static constexpr std::size_t kMaxCodes = 32;
        observability::Counter ok;
        observability::Histogram duration;
        observability::Histogram operation;  // mcp_server_operation_duration_seconds, successes
        struct ByCode {
            std::string code;
            observability::Counter calls, errors;
        };
        std::vector<ByCode> failures;
        ByCode* failure(const std::string& tool, const std::string& code);
        // The console's series (observability/call_series.hpp): the tool's totals, its
        // source's and its service's last hour. Resolved on the first call.
        observability::CallTotals* totals = nullptr;
        observability::CallSeries* source = nullptr;
        observability::CallSeries* service = nullptr;
    };

    std::unordered_map<std::string, Tally> tallies_;  // by session id
    observability::HandleCache<ToolSeries> series_;   // by tool name
};

}  // namespace toolport::pipeline
