// Json: Toolport's one name for nlohmann::json. Declared in namespace toolport, so code in
// every nested namespace (toolport::providers, toolport::client, ...) sees it unqualified.
#pragma once

#include <nlohmann/json.hpp>

namespace toolport {

using Json = nlohmann::json;

}  // namespace toolport
