// The operator console's handler for `toolport serve`: the console (src/console/) wired to
// this runtime's server, health, audit log and reload.
#pragma once

#include <memory>

#include "transports/http_options.hpp"

namespace toolport {

class Executor;
class Runtime;
struct Config;
namespace stores {
class SharedSessions;
}

// With `shared` (sessions shared through Redis), the overview lists every replica on it.
std::shared_ptr<ConsoleHandler> make_console(const Config& config, Runtime& runtime, Executor& executor,
                                             std::shared_ptr<stores::SharedSessions> shared = nullptr);

}  // namespace toolport
