// ObserveStage (always on, outermost): after every call, the metrics (calls and errors by
// tool and code, latency histogram) and one structured `tool_call` log event with the
// request id, outcome, duration and the call's _meta accounting.
#pragma once

#include "pipeline/pipeline.hpp"

namespace toolport::pipeline {

class ObserveStage final : public Stage {
public:
    std::string_view name() const override { return "observe"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    // "OK", the structured error_code of an isError result, or "TOOL_ERROR" for an
    // isError result without one.
    static std::string outcome_code(const ToolResult& result);
};

}  // namespace toolport::pipeline
