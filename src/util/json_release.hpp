// Freeing a JSON document without nlohmann's per-container heap stack.
//
// nlohmann's destructor is safe at any depth: before freeing an object or an array it moves
// every member into a heap-allocated stack and frees them from there. That costs an
// allocation, a move per member and a free for every non-empty container, however shallow
// the document. A request and its reply are a handful of small containers each: measured
// with callgrind, freeing them was about a twentieth of a served tools/call.
//
// release_json empties a document bottom-up instead: the members of the innermost
// containers first, so that by the time a container is cleared its members are scalars or
// empty containers, whose destruction needs no stack. Depth is bounded (kReleaseDepth);
// below it nlohmann's destructor does the rest, as safely as ever.
#pragma once

#include "util/json.hpp"

namespace toolport::util {

inline constexpr int kReleaseDepth = 32;

// Leaves `value` an empty object or array (or as it was, for a scalar).
void release_json(Json& value);

}  // namespace toolport::util
