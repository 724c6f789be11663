// `toolport config check FILE`: loads the file exactly as `serve` would (every key, type
// and ${ENV} reference checked) and says what it configures, or names the file, line and
// key of the first problem (exit status 2).
// `toolport config schema` and `toolport config docs`: the file's JSON Schema and its
// reference page, generated from the declarations (config_table.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "app/commands/commands.hpp"
#include "app/access_config.hpp"
#include "app/config.hpp"
#include "app/config_reference.hpp"
#include "http_client/url.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "providers/source_table.hpp"

namespace toolport::commands {

namespace {

int check(const std::string& file) {
    Config config;
    try {
        config = load_config(file);
    } catch (const ConfigError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 2;
    }
    for (const auto& pack : config.packs) {
        if (!providers::find_source_kind(pack)) {
            fmt::print(stderr, "{}: packs: unknown pack \"{}\" (known: {})\n", file, pack, providers::source_names());
            return 2;
        }
    }
    const auto& p = config.pipeline;
    fmt::print("{}: OK\n", file);
    fmt::print("  transport: {}\n",
               config.transport == Config::Transport::stdio
                   ? std::string("stdio")
                   : fmt::format("http {}:{}{}", config.http.host, config.http.port, config.http.path));
    std::string packs;
    for (const auto& pack : config.packs) packs += (packs.empty() ? "" : ", ") + pack;
    fmt::print("  packs: {}\n", packs.empty() ? "(none)" : packs);
    for (const auto& instance : config.instances) fmt::print("  {}: {}\n", instance.kind, instance.name);
    // The URL may carry a password: show only its scheme and host part.
    std::string store = config.store.url;
    if (auto at = store.rfind('@'); at != std::string::npos) store = "redis://***@" + store.substr(at + 1);
    fmt::print("  store: {}\n", store);
    std::string stages;
    for (const auto& s : p.defaults.stages) stages += (stages.empty() ? "" : ", ") + s;
    fmt::print("  stages: {}\n", stages);
    fmt::print("  timeout: {} ms, max response: {} bytes, budget: {} calls/request ({} per call without _meta)\n",
               p.defaults.timeout.count(), p.defaults.max_response_bytes,
               p.defaults.budget.max_downstream_calls_per_request, p.defaults.budget.default_downstream_per_call);
    // What each gateway upstream's call is counted as when its result reports nothing: its
    // `sources:` entry, else its downstream_calls_estimate, else the pipeline's default.
    for (const auto& instance : config.instances) {
        if (instance.kind != "gateway") continue;
        for (const auto& upstream : gateway::GatewaySettings::from(instance.settings).upstreams) {
            std::int64_t per_call = p.defaults.budget.default_downstream_per_call;
            std::string why = "pipeline default";
            if (upstream.downstream_calls_estimate) {
                per_call = *upstream.downstream_calls_estimate;
                why = "downstream_calls_estimate";
            }
            if (auto own = p.sources.find(upstream.name);
                own != p.sources.end() && own->second.default_downstream_per_call) {
                per_call = *own->second.default_downstream_per_call;
                why = fmt::format("sources.{}", upstream.name);
            }
            fmt::print("  upstream {}: budget {} per call without _meta ({})\n", upstream.name, per_call, why);
        }
    }
    fmt::print("  overrides: {} source(s), {} tool(s), {} service(s)\n", p.sources.size(), p.tools.size(),
               p.services.size());
    if (const auto& access = config.access) {
        std::size_t allow = 0;
        for (const auto& rule : access->rules()) allow += rule.effect == auth::AccessEffect::allow ? 1 : 0;
        fmt::print("  access: {} rule(s) ({} allow, {} deny), first match wins, default {}\n", access->rules().size(),
                   allow, access->rules().size() - allow, auth::effect_name(access->default_effect()));
    }
    const auto& t = config.telemetry;
    if (!t.enabled()) {
        fmt::print("  traces: not exported{}\n", t.disabled ? " (disabled)" : " (no endpoint)");
    } else {
        // Without the query (it may hold a key); the headers are never shown.
        fmt::print("  traces: {} to {}, sampler {}{}\n", t.content_type(),
                   http_client::parse_url(t.traces_endpoint).display(), telemetry::sampler_name(t.sampler),
                   t.sampler == telemetry::SamplerKind::traceidratio ||
                           t.sampler == telemetry::SamplerKind::parentbased_traceidratio
                       ? fmt::format(" {}", t.sampler_ratio)
                       : "");
    }
    // Names the rules give that nothing configured has: said, not refused (a flag or an
    // import may add the source when the server starts).
    for (const auto& warning : access_warnings(config)) fmt::print(stderr, "warning: {}\n", warning);
    return 0;
}

}  // namespace

Command add_config(CLI::App& app) {
    auto file = std::make_shared<std::string>();
    auto* config = app.add_subcommand("config", "Work with configuration files");
    config->require_subcommand(1);
    auto* check_cmd = config->add_subcommand("check", "Validate a configuration file and summarize it");
    check_cmd->add_option("FILE", *file, "YAML configuration file")->required();
    auto* schema_cmd =
        config->add_subcommand("schema", "Print the configuration file's JSON Schema (schema/toolport.schema.json)");
    auto* docs_cmd = config->add_subcommand("docs", "Print the configuration reference (docs/configuration.md)");
    return {config, [=]() {
                if (schema_cmd->parsed()) {
                    fmt::print("{}", configuration_schema());
                    return 0;
                }
                if (docs_cmd->parsed()) {
                    fmt::print("{}", configuration_docs());
                    return 0;
                }
                return check(*file);
            }};
}

}  // namespace toolport::commands
