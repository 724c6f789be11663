#include "pipeline/stages/meta_accounting.hpp"

#include "pipeline/result_size.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

long long MetaAccounting::tokens_estimate(std::size_t chars) {
    // Integer form of ceil(chars / 4 * 1.1) = ceil(chars * 11 / 40), exact for any size.
    return static_cast<long long>((chars * 11 + 39) / 40);
}

Task<ToolResult> MetaAccounting::handle(Call& call, const Next& next) {
    ToolResult result = unassigned_result();
    try {
        result = co_await next(call);
    } catch (const ToolError& e) {
        // Account for refusals and failures too (they are the calls an agent retries).
        result = call.tool->error_result(e);
    }
    // Sizes are of the result as the client gets it, before _meta is added.
    const std::size_t size = result_size(result);
    // Filled in place: a copy of the source's _meta would only be thrown away.
    if (!result.meta.is_object()) result.meta = Json::object();
    Json& meta = result.meta;
    // A source may report its own count in _meta (the downstream contract); a stage that
    // knows better (a cache hit: none) overrides it.
    // A call that failed after sending requests counts them too (from the pacing).
    if (call.downstream_api_calls) meta["downstream_api_calls"] = *call.downstream_api_calls;
    else if (!meta.contains("downstream_api_calls") || !meta["downstream_api_calls"].is_number_integer())
        meta["downstream_api_calls"] = call.ctx.downstream_requests();
    meta["cache_status"] = std::string(to_string(call.cache_status));
    meta["response_size_bytes"] = size;
    meta["duration_ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - call.started).count();
    meta["tokens_estimate"] = tokens_estimate(size);
    co_return result;
}

}  // namespace toolport::pipeline
