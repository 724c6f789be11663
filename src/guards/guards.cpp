#include "guards/guards.hpp"

#include <stdexcept>

#include "guards/interceptor_guard.hpp"
#include "guards/webhook_guard.hpp"

namespace toolport::guards {

std::shared_ptr<pipeline::Guard> make_guard(const pipeline::GuardSettings& settings, AsioExecutor* network,
                                            http_client::HttpClient* http) {
    if (!network || !http) throw std::invalid_argument("guards need the network event loop");
    if (settings.webhook) return std::make_shared<WebhookGuard>(*http, settings.name, *settings.webhook);
    if (settings.interceptors) {
        auto guard = std::make_shared<InterceptorGuard>(*network, settings);
        guard->start();
        return guard;
    }
    throw std::invalid_argument("a guard needs webhook: or mcp:");
}

}  // namespace toolport::guards
