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
    // The server itself: up while the runtime lives (the report is answered on the same
    // event loop as MCP, so an answer means that loop is serving); at capacity when the
    // session limit would refuse new HTTP clients.
    const std::size_t max_sessions = config.transport == Config::Transport::http ? config.http.max_sessions : 0;
    health_.add("server", [this, max_sessions]() -> observability::ComponentHealth {
        if (max_sessions > 0 && server_->session_count() >= max_sessions) {
            return {"at-capacity", observability::Severity::degraded};
        }
        return {"available", observability::Severity::ok};
    });
}

Runtime::~Runtime() = default;

}  // namespace toolport
