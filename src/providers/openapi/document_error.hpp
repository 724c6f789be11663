// What the OpenAPI import throws for a document it cannot read or use.
#pragma once

#include <stdexcept>

namespace toolport::openapi {

// A document that cannot be read or used, or a `$ref` that cannot be resolved. The
// message names the location and what is wrong (never a credential: none is involved).
struct DocumentError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace toolport::openapi
