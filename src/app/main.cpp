// toolport: the command line. `toolport serve` runs the server; later commands (list,
// call, test, config check) share the same configuration loading.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/config.hpp"
#include "app/serve.hpp"
#include "toolport_version.hpp"

int main(int argc, char** argv) {
    // Logs always go to stderr: stdout belongs to the stdio transport.
    auto logger = spdlog::stderr_color_mt("toolport");
    spdlog::set_default_logger(logger);

    CLI::App app{"Toolport: a fast MCP server and gateway"};
    app.set_version_flag("--version", std::string("toolport ") + toolport::kToolportVersion);
    app.require_subcommand(1);

    auto* serve = app.add_subcommand("serve", "Serve MCP over Streamable HTTP (default) or stdio");
    std::string config_file, listen, packs, log_level;
    bool use_stdio = false;
    serve->add_option("--config", config_file, "YAML configuration file")->check(CLI::ExistingFile);
    auto* stdio_flag = serve->add_flag("--stdio", use_stdio, "Serve on stdin/stdout instead of HTTP");
    serve->add_option("--listen", listen, "HTTP address HOST:PORT (default 127.0.0.1:8080)")->excludes(stdio_flag);
    serve->add_option("--packs", packs, "Comma-separated built-in packs to load (e.g. conformance)");
    serve->add_option("--log-level", log_level, "trace, debug, info, warn, error, off");

    CLI11_PARSE(app, argc, argv);

    try {
        auto config = toolport::load_config(config_file);
        if (use_stdio) config.transport = toolport::Config::Transport::stdio;
        if (!listen.empty()) {
            config.transport = toolport::Config::Transport::http;
            toolport::apply_listen(config.http, listen);
        }
        if (!packs.empty()) {
            config.packs.clear();
            std::string item;
            for (char c : packs + ",") {
                if (c == ',') {
                    if (!item.empty()) config.packs.push_back(item);
                    item.clear();
                } else {
                    item += c;
                }
            }
        }
        if (!log_level.empty()) config.log_level = log_level;
        spdlog::set_level(spdlog::level::from_str(config.log_level));
        if (serve->parsed()) return toolport::serve(config);
    } catch (const toolport::ConfigError& e) {
        spdlog::error("configuration: {}", e.what());
        return 2;
    } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        return 1;
    }
    return 0;
}
