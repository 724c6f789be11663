// The `rest` source kind: a REST API's tool catalog as MCP tools (seed 001's design: each
// catalog tool registered on its own, with its own schema, every call proxied back to the
// API). One instance per `rest:` entry of the configuration, or `--rest agentpmt`.
#include "providers/rest/rest_catalog.hpp"
#include "providers/source.hpp"

namespace toolport::providers {

namespace {

class RestCatalogSource final : public Source {
public:
    explicit RestCatalogSource(const SourceSettings& settings) : settings_(rest::CatalogSettings::from(settings)) {}

    void start(SourceContext& context) override {
        catalog_ = std::make_shared<rest::RestCatalog>(settings_, context);
        catalog_->start();
    }
    void reload() override {
        if (catalog_) catalog_->reload();
    }
    bool reloads() const override { return true; }
    bool fetching() const override { return catalog_ && catalog_->fetching(); }
    bool settled() const override { return !catalog_ || catalog_->settled(); }
    void stop() override {
        if (catalog_) catalog_->stop();
    }

private:
    rest::CatalogSettings settings_;
    std::shared_ptr<rest::RestCatalog> catalog_;
};

}  // namespace

std::unique_ptr<Source> make_rest_catalog_source(const SourceSettings& settings) {
    return std::make_unique<RestCatalogSource>(settings);
}

}  // namespace toolport::providers
