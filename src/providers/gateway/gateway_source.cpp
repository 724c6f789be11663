// The `gateway` source kind: upstream MCP servers aggregated and served as this server's
// own (`upstreams:` and `gateway:` in the configuration, `serve --upstream`, `serve
// --import mcpServers.json`). See gateway.hpp.
#include "providers/gateway/gateway.hpp"
#include "providers/source.hpp"

namespace toolport::providers {

namespace {

class GatewaySource final : public Source {
public:
    explicit GatewaySource(const SourceSettings& settings) : settings_(gateway::GatewaySettings::from(settings)) {}

    void start(SourceContext& context) override {
        gateway_ = std::make_shared<gateway::Gateway>(settings_, context);
        gateway_->start();
    }
    bool settled() const override { return !gateway_ || gateway_->settled(); }
    // A reload (SIGHUP, POST /admin/reload) moves the registry upstreams whose kept entry
    // `toolport registry update` changed; it reads the state directory, nothing remote, so
    // it is over when reload() returns.
    void reload() override {
        if (gateway_) gateway_->apply_registry_updates();
    }
    bool reloads() const override { return gateway_ && gateway_->has_registry_upstreams(); }
    void stop() override {
        if (gateway_) gateway_->stop();
    }

private:
    gateway::GatewaySettings settings_;
    std::shared_ptr<gateway::Gateway> gateway_;
};

}  // namespace

std::unique_ptr<Source> make_gateway_source(const SourceSettings& settings) {
    return std::make_unique<GatewaySource>(settings);
}

}  // namespace toolport::providers
