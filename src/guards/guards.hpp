// The guards of a configuration (`guards:`), made from their settings: a webhook or an MCP
// server with interceptors (pipeline/guard.hpp says what a guard is; webhook_guard.hpp and
// interceptor_guard.hpp what each kind sends and expects).
#pragma once

#include <memory>

#include "pipeline/guard.hpp"

namespace toolport {
class AsioExecutor;
}
namespace toolport::http_client {
class HttpClient;
}

namespace toolport::guards {

// `network` and `http` are the runtime's event loop and downstream HTTP client (null in
// unit tests on another executor: then no guard can be made). MCP guards start connecting
// at once. Throws std::invalid_argument naming what is missing.
std::shared_ptr<pipeline::Guard> make_guard(const pipeline::GuardSettings& settings, AsioExecutor* network,
                                            http_client::HttpClient* http);

}  // namespace toolport::guards
