// What the tango pack's unit tests share.
#pragma once

#include <functional>

#include "server/tool_error.hpp"

namespace toolport::tango::test {

// The refusal `fn` throws, as the client would see it (ToolError::to_json); null when it
// throws nothing.
inline Json error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const ToolError& e) {
        return e.to_json();
    }
    return nullptr;
}

}  // namespace toolport::tango::test
