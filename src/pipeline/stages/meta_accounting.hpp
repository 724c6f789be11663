// MetaAccounting: reports what a call cost in result._meta, on every result (errors too):
// downstream_api_calls, cache_status, response_size_bytes, duration_ms and tokens_estimate
// (= ceil(chars / 4 × 1.1) of the result's JSON without its _meta: a model-agnostic estimate
// that is cheap and within about ±10 % for JSON). Runs first, so its figures cover all other
// stages.
#pragma once

#include "pipeline/pipeline.hpp"

namespace toolport::pipeline {

class MetaAccounting final : public Stage {
public:
    std::string_view name() const override { return "meta"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    static long long tokens_estimate(std::size_t chars);
};

}  // namespace toolport::pipeline
