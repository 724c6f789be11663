// The console's page: the built files the binary embeds (static_assets.hpp, console-web's),
// served under console.path to anyone the endpoint lets reach the page (a credential is
// not needed for the files themselves: the page asks for one).
#pragma once

#include <string_view>

#include "transports/http_exchange.hpp"

namespace toolport::console {

// The answer to a GET or HEAD of `path` (relative to console.path: "", "/", "/assets/app.js").
HttpAnswer serve_static(std::string_view path, const HttpRequestView& request);

}  // namespace toolport::console
