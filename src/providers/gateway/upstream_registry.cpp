// Upstream: a registry upstream's entry turned into its command or URL before its first
// connection (upstream.hpp, resolve_registry), and again when `toolport registry update`
// moved it (apply_registry_update).
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "http_client/http_client.hpp"
#include "providers/gateway/upstream.hpp"
#include "providers/gateway/registry/registry_launch.hpp"
#include "providers/gateway/registry/registry_resolve.hpp"
#include "util/sanitize.hpp"

namespace toolport::gateway {

Task<void> Upstream::resolve_registry() {
    const RegistryUpstream& r = *settings_.registry;
    if (!registry_http_) registry_http_ = std::make_unique<http_client::HttpClient>(executor_);
    registry::RegistryClient client(*registry_http_, r.url, r.max_response_bytes, r.timeout);
    registry::KeptEntry kept;
    try {
        kept = co_await registry::resolve_entry(client, registry::registry_state_dir(), r.name, r.version, false);
    } catch (const registry::RegistryError& e) {
        throw std::runtime_error(fmt::format("registry entry {}@{} not resolved (and none kept from before): {}",
                                             r.name, r.version, e.what()));
    }
    registry::ServerJson server;
    try {
        server = registry::read_server_json(kept.entry.server);
    } catch (const registry::ServerJsonError& e) {
        throw std::runtime_error(fmt::format("registry entry {}@{}: {}", r.name, kept.version, e.what()));
    }
    registry::LaunchConfig config;
    config.upstream = settings_.name;
    config.run = r.run;
    config.arguments = r.arguments;
    config.env = settings_.env;
    for (const auto& [name, value] : settings_.headers) config.headers[name] = value;
    // LaunchError's message names the missing input and where to give it.
    registry::Launch launch = registry::plan_launch(server, config);
    if (launch.transport == "stdio") {
        settings_.transport = UpstreamTransport::stdio;
        settings_.argv = std::move(launch.argv);
        settings_.env = std::move(launch.env);
    } else {
        settings_.transport = launch.transport == "sse" ? UpstreamTransport::legacy_sse
                                                        : UpstreamTransport::streamable_http;
        settings_.url = std::move(launch.url);
        settings_.headers = std::move(launch.headers);
    }
    secrets_ = settings_.secrets();
    for (auto& secret : launch.secrets) secrets_.push_back(std::move(secret));
    resolved_ = true;
    registry_version_ = kept.version;
    spdlog::info("upstream {}: registry entry {}@{}{} runs as {}", name(), util::sanitize_for_message(r.name, 200),
                 util::sanitize_for_message(kept.version, 100),
                 r.version == "latest" ? fmt::format(" (latest, resolved {})", kept.resolved_at) : std::string(),
                 util::sanitize_for_message(launch.what, 300));
}

bool Upstream::apply_registry_update() {
    if (!settings_.registry || !resolved_ || state() == State::stopped) return false;
    const RegistryUpstream& r = *settings_.registry;
    const auto kept = registry::load_kept(registry::registry_state_dir(), registry::normalized_base(r.url), r.name,
                                          r.version);
    if (!kept || kept->version == registry_version_) return false;
    const std::string reason = fmt::format("registry entry {} moved from {} to {}",
                                           util::sanitize_for_message(r.name, 200),
                                           util::sanitize_for_message(registry_version_, 100),
                                           util::sanitize_for_message(kept->version, 100));
    // The next attempt plans the new entry from the configured settings, as the first did.
    settings_ = *configured_;
    resolved_ = false;
    registry_version_.clear();
    // Whatever the state (connected, an attempt under way on the old entry, or waiting to
    // try again), the connection on the old entry is dropped, and the next attempt, made at
    // once (a planned restart, not a failure), runs the new one.
    backoff_ = std::chrono::milliseconds(0);
    lost(reason);
    return true;
}

}  // namespace toolport::gateway
