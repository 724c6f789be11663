#include "pipeline/stages/size_cap.hpp"

#include <fmt/format.h>

#include "pipeline/result_size.hpp"

namespace toolport::pipeline {

ToolError response_too_large(std::size_t size, std::size_t limit, bool read_so_far) {
    return ToolError(ToolErrorCode::response_too_large,
                     fmt::format("The tool's response is too large: {}{} bytes exceeds the limit of {} bytes",
                                 read_so_far ? "more than " : "", size, limit))
        .suggest("Ask for less: lower the limit, add filters, request fewer fields, or page through the results.");
}

Task<ToolResult> SizeCapStage::handle(Call& call, const Next& next) {
    ToolResult result = co_await next(call);
    const std::size_t limit = call.policy->max_response_bytes;
    // The exact size only when the cheap bound says the result might be over the limit:
    // MetaAccounting measures every result exactly anyway, and a second full serialization
    // here would cost an ordinary call as much as a few pipeline stages.
    if (limit > 0 && result_size_upper_bound(result) > limit) {
        const std::size_t size = result_size(result);
        if (size > limit) {
            call.ctx.span().add_event("size_cap.exceeded", {{"size_bytes", static_cast<std::int64_t>(size)},
                                                            {"limit_bytes", static_cast<std::int64_t>(limit)}});
            throw response_too_large(size, limit);
        }
    }
    co_return result;
}

}  // namespace toolport::pipeline
