// ControlSignal: the base of exceptions that steer a request rather than report a failure
// (the request was cancelled; the stateless revision needs the client's input first).
//
// They deliberately do not derive from std::exception: a handler that wraps its work in
// `catch (const std::exception&)` to turn failures into a friendly result must not swallow
// them, and no handler has to remember to rethrow them by hand. Code that really wants
// everything (`catch (...)`) still sees them.
#pragma once

#include <string>
#include <utility>

namespace toolport {

class ControlSignal {
public:
    explicit ControlSignal(std::string what) : what_(std::move(what)) {}
    virtual ~ControlSignal() = default;
    const char* what() const noexcept { return what_.c_str(); }

private:
    std::string what_;
};

}  // namespace toolport
