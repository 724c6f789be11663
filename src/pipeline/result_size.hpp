// The size of a tool result as the client receives it (compact JSON), measured without
// building the string. Used by the accounting (_meta.response_size_bytes,
// tokens_estimate) and by the response size cap.
#pragma once

#include <cstddef>

#include "server/content.hpp"

namespace toolport::pipeline {

std::size_t serialized_size(const Json& value);
// serialized_size(result.to_json()), from its parts: no copy of the content.
std::size_t result_size(const ToolResult& result);

}  // namespace toolport::pipeline
