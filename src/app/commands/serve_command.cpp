#include <spdlog/spdlog.h>

#include "app/commands/commands.hpp"
#include "app/config.hpp"
#include "app/serve.hpp"
#include "observability/events.hpp"

namespace toolport::commands {

namespace {

std::vector<std::string> split_commas(const std::string& text) {
    std::vector<std::string> items;
    std::string item;
    for (char c : text + ",") {
        if (c != ',') {
            item += c;
        } else if (!item.empty()) {
            items.push_back(item);
            item.clear();
        }
    }
    return items;
}

struct ServeFlags {
    std::string config_file, listen, packs, log_level, io_threads;
    std::vector<std::string> rest_presets, openapi_documents, upstreams, imports;
    bool use_stdio = false;
};

}  // namespace

Command add_serve(CLI::App& app) {
    auto flags = std::make_shared<ServeFlags>();
    auto* serve = app.add_subcommand("serve", "Serve MCP over Streamable HTTP (default) or stdio");
    serve->add_option("--config", flags->config_file, "YAML configuration file")->check(CLI::ExistingFile);
    auto* stdio_flag = serve->add_flag("--stdio", flags->use_stdio, "Serve on stdin/stdout instead of HTTP");
    serve->add_option("--listen", flags->listen, "HTTP address HOST:PORT (default 127.0.0.1:8080)")->excludes(stdio_flag);
    serve->add_option("--packs", flags->packs, "Comma-separated built-in packs to load (e.g. conformance)");
    serve->add_option(
        "--rest", flags->rest_presets,
        "A REST tool catalog by preset (agentpmt: AGENT_PAYMENT_API_KEY, AGENT_PAYMENT_BUDGET_KEY); repeatable");
    serve->add_option("--openapi", flags->openapi_documents,
                      "Each operation of an OpenAPI 3.0/3.1 document (file or URL) as a tool; repeatable");
    serve->add_option("--upstream", flags->upstreams,
                      "An upstream MCP server served through the gateway: NAME=COMMAND (stdio, no shell) or NAME=URL; "
                      "repeatable");
    serve
        ->add_option("--import", flags->imports,
                     "Every server of a Claude Desktop/Cursor (mcpServers) or VS Code (servers) JSON file as an "
                     "upstream; repeatable")
        ->check(CLI::ExistingFile);
    serve->add_option("--log-level", flags->log_level, "trace, debug, info, warn, error, off");
    serve
        ->add_option("--io-threads", flags->io_threads,
                     "Threads for HTTP socket work beside the engine's (0 = none, the default; N; or auto)")
        ->excludes(stdio_flag);

    return {serve, [flags]() -> int {
                try {
                    auto config = load_config(flags->config_file);
                    if (flags->use_stdio) config.transport = Config::Transport::stdio;
                    if (!flags->listen.empty()) {
                        config.transport = Config::Transport::http;
                        apply_listen(config.http, flags->listen);
                    }
                    if (!flags->packs.empty()) config.packs = split_commas(flags->packs);
                    for (const auto& preset : flags->rest_presets) {
                        for (const auto& name : split_commas(preset)) add_rest_preset(config, name);
                    }
                    for (const auto& document : flags->openapi_documents) add_openapi_document(config, document);
                    for (const auto& upstream : flags->upstreams) add_upstream(config, upstream);
                    std::vector<std::string> warnings;
                    for (const auto& file : flags->imports) {
                        for (auto& warning : import_mcp_servers(config, file)) warnings.push_back(std::move(warning));
                    }
                    if (!flags->log_level.empty()) config.log_level = flags->log_level;
                    if (!flags->io_threads.empty())
                        config.http.io_threads = parse_io_threads(flags->io_threads, "--io-threads");
                    try {
                        observability::configure_logging({config.log_level, config.log_format, config.log_file});
                    } catch (const std::runtime_error& e) {
                        throw ConfigError(e.what());  // a bad --log-level, or a log file that cannot be opened
                    }
                    for (const auto& warning : warnings) spdlog::warn("{}", warning);
                    return toolport::serve(config);
                } catch (const ConfigError& e) {
                    spdlog::error("configuration: {}", e.what());
                    return 2;
                } catch (const std::exception& e) {
                    spdlog::error("{}", e.what());
                    return 1;
                }
            }};
}

}  // namespace toolport::commands
