#include "app/console_setup.hpp"

#include "app/config.hpp"
#include "app/runtime.hpp"
#include "console/console_api.hpp"

namespace toolport {

std::shared_ptr<ConsoleHandler> make_console(const Config& config, Runtime& runtime, Executor& executor) {
    (void)runtime;
    console::ConsoleContext context;
    context.executor = &executor;
    context.trace_viewer_url = config.http.console.trace_viewer_url;
    return std::make_shared<console::ConsoleApi>(std::move(context));
}

}  // namespace toolport
