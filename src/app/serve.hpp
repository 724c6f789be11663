// `toolport serve`: builds the server from a Config and runs it until a signal or EOF.
#pragma once

#include "app/config.hpp"

namespace toolport {

int serve(const Config& config);

}  // namespace toolport
