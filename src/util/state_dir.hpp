// Toolport's state directory: where what it keeps between runs goes by default (the pins
// file, the audit log, the registry entries it resolved). $XDG_STATE_HOME/toolport, else
// ~/.local/state/toolport; only absolute variables count (a relative one would move with the
// working directory).
#pragma once

#include <string>
#include <string_view>

namespace toolport::util {

// `name` inside the state directory ("" when neither XDG_STATE_HOME nor HOME is set).
std::string state_path(std::string_view name);

}  // namespace toolport::util
