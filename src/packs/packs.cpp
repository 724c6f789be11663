#include "packs/packs.hpp"

#include <functional>
#include <map>

namespace toolport {

namespace {
const std::map<std::string, std::function<void(McpServer&)>>& pack_table() {
    static const std::map<std::string, std::function<void(McpServer&)>> table = {
        {"conformance", packs::install_conformance},
    };
    return table;
}
}  // namespace

std::vector<std::string> known_packs() {
    std::vector<std::string> names;
    for (const auto& [name, fn] : pack_table()) names.push_back(name);
    if (packs::testing_pack_enabled()) names.push_back("testing");
    return names;
}

bool install_pack(const std::string& name, McpServer& server) {
    if (name == "testing" && packs::testing_pack_enabled()) {
        packs::install_testing(server);
        return true;
    }
    auto it = pack_table().find(name);
    if (it == pack_table().end()) return false;
    it->second(server);
    return true;
}

}  // namespace toolport
