#include "app/console_setup.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "app/config.hpp"
#include "app/runtime.hpp"
#include "console/console_api.hpp"
#include "toolport_version.hpp"

namespace toolport {

namespace {

// The sources this configuration starts, by kind: packs, REST catalogs, OpenAPI documents,
// and the gateway's upstreams (each a source of its own to an operator).
std::vector<console::SourceInfo> configured_sources(const Config& config) {
    std::vector<console::SourceInfo> sources;
    for (const auto& pack : config.packs) sources.push_back({pack, "pack"});
    for (const auto& instance : config.instances) {
        if (instance.kind != "gateway") {
            sources.push_back({instance.name, instance.kind});
            continue;
        }
        if (auto upstreams = instance.settings.value("upstreams"); upstreams && upstreams->is_object()) {
            for (const auto& [name, settings] : upstreams->items()) sources.push_back({name, "upstream"});
        }
    }
    return sources;
}

std::string this_replica() {
    char host[256] = {};
    if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
    return fmt::format("{}:{}", host[0] ? host : "localhost", ::getpid());
}

}  // namespace

std::shared_ptr<ConsoleHandler> make_console(const Config& config, Runtime& runtime, Executor& executor) {
    console::ConsoleContext context;
    context.executor = &executor;
    context.trace_viewer_url = config.http.console.trace_viewer_url;
    auto& o = context.overview;
    o.name = config.server.name;
    o.version = kToolportVersion;
    o.transport = "http";
    o.replica = this_replica();
    o.server = &runtime.server();
    o.health = &runtime.health();
    o.sources = [sources = configured_sources(config)] { return sources; };
    o.breakers = [&runtime] {
        std::vector<console::BreakerInfo> breakers;
        const Json summary = runtime.orchestration_summary();
        for (const auto& s : summary["server_health"]) {
            breakers.push_back({s.value("server_id", ""), s.value("breaker", ""), s.value("last_error", "")});
        }
        return breakers;
    };
    o.rate_limits = [&config = runtime.pipeline().policies().config()] {
        std::vector<console::RateLimitInfo> limits;
        for (const auto& [service, policy] : config.services) limits.push_back({service, policy.rate_limit.rate});
        return limits;
    };
    return std::make_shared<console::ConsoleApi>(std::move(context));
}

}  // namespace toolport
