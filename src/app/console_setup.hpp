// The operator console's handler for `toolport serve`: the console (src/console/) wired to
// this runtime's server, health, audit log and reload.
#pragma once

#include <memory>

#include "transports/http_options.hpp"

namespace toolport {

class Executor;
class Runtime;
struct Config;

std::shared_ptr<ConsoleHandler> make_console(const Config& config, Runtime& runtime, Executor& executor);

}  // namespace toolport
