// TimeoutStage ("timeout"): a deadline per call (policy.timeout, default 30 s). When it
// passes, the call's work is cancelled through the request's CancelToken — every await in
// a handler (sleeps, downstream requests, questions to the client) observes it — and the
// client gets TIMEOUT (transient, with a suggestion) instead of waiting on.
#pragma once

#include "pipeline/pipeline.hpp"

namespace toolport::pipeline {

class TimeoutStage final : public Stage {
public:
    static constexpr const char* kCancelReason = "deadline exceeded";
    std::string_view name() const override { return "timeout"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;
};

}  // namespace toolport::pipeline
