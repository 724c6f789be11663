// The size of a tool result as the client receives it (compact JSON), measured without
// building the string. Used by the response size cap, and without the result's _meta by
// the accounting (_meta.response_size_bytes, tokens_estimate).
#pragma once

#include <cstddef>

#include "server/content.hpp"

namespace toolport::pipeline {

std::size_t serialized_size(const Json& value);
// serialized_size(result.to_json()), from its parts: no copy of the content.
std::size_t result_size(const ToolResult& result);
// The same without the result's _meta: what a model reads of it (the accounting's measure,
// the same for a tool called directly and through a gateway, whose upstream's _meta it
// would count otherwise).
std::size_t result_size_without_meta(const ToolResult& result);

// At least result_size(result), found by walking the values without writing or escaping
// anything (a string of n bytes is at most 6n + 2 once escaped): much cheaper, so that a
// size cap far above a result needs no exact measure.
std::size_t result_size_upper_bound(const ToolResult& result);

}  // namespace toolport::pipeline
