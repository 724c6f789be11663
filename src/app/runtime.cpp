#include "app/runtime.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "packs/packs.hpp"
#include "pipeline/stages/meta_accounting.hpp"

namespace toolport {

Runtime::Runtime(const Config& config, Executor& executor) {
    pipeline_.add(std::make_shared<pipeline::MetaAccounting>());
    server_ = std::make_unique<McpServer>(executor, config.server);
    server_->set_tool_invoker(pipeline_.invoker());
    for (const auto& pack : config.packs) {
        if (!install_pack(pack, *server_)) {
            std::string known;
            for (const auto& k : known_packs()) known += (known.empty() ? "" : ", ") + k;
            throw ConfigError(fmt::format("unknown pack \"{}\" (known: {})", pack, known));
        }
        spdlog::info("pack {} loaded", pack);
    }
}

Runtime::~Runtime() = default;

}  // namespace toolport
