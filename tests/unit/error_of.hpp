// error_of(fn): the message of what fn throws, or "(no error)": for tests that check a
// refusal's wording with EXPECT_NE(error_of(...).find("..."), npos).
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace toolport::test_support {

inline std::string error_of(const std::function<void()>& fn) {
    try {
        fn();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

}  // namespace toolport::test_support
