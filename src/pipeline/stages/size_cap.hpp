// SizeCapStage ("size_cap"): no tool result larger than policy.max_response_bytes (default
// 1 MiB, MAX_MCP_RESPONSE_SIZE_BYTES) reaches the client; it becomes
// MCP_RESPONSE_TOO_LARGE. Sources that read a downstream response (REST catalogs, upstream
// MCP servers) enforce the same limit while reading — on Content-Length before reading,
// and by counting while streaming — with response_too_large(); this stage is the
// backstop for every source.
#pragma once

#include <cstddef>

#include "pipeline/pipeline.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

// The error for a response of `size` bytes over `limit`. `read_so_far`: the size is what
// was read before stopping, not the whole response.
ToolError response_too_large(std::size_t size, std::size_t limit, bool read_so_far = false);

class SizeCapStage final : public Stage {
public:
    std::string_view name() const override { return "size_cap"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;
};

}  // namespace toolport::pipeline
