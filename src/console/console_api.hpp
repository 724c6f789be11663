// The operator console's handler (transports' ConsoleHandler): the page's files, and the
// JSON API under <console.path>/api/ (docs/console.md) with its live streams. The endpoint
// has already decided who asks and whether they may (ConsoleAccess); this words refusals
// and answers what is allowed. Runs on the engine's loop.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "console/overview.hpp"
#include "transports/http_options.hpp"
#include "util/json.hpp"

namespace toolport {
class Executor;
}

namespace toolport::console {

// What the console reads and drives, handed over by the application (app/serve.cpp).
struct ConsoleContext {
    Executor* executor = nullptr;
    std::string trace_viewer_url;          // console.trace_viewer_url
    std::size_t max_body_bytes = 1 << 20;  // the largest API request body taken
    OverviewSources overview;
    // How often the overview stream sends the overview again.
    std::chrono::milliseconds overview_interval{2000};
};

class ConsoleApi final : public ConsoleHandler {
public:
    explicit ConsoleApi(ConsoleContext context);
    ~ConsoleApi() override;
    ConsoleApi(const ConsoleApi&) = delete;
    ConsoleApi& operator=(const ConsoleApi&) = delete;

    HttpAnswer answer(const HttpRequestView& request, std::string_view subpath, const ConsoleAccess& access) override;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toolport::console
