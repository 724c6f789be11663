// `toolport config check FILE`: loads the file exactly as `serve` would (every key, type
// and ${ENV} reference checked) and says what it configures, or names the file, line and
// key of the first problem (exit status 2).
// `toolport config show FILE [--json]`: every key as it takes effect (from the file, an
// environment variable, or its default), secrets as ***.
// `toolport config schema` and `toolport config docs`: the file's JSON Schema and its
// reference page, generated from the declarations (config_table.hpp).
#include <algorithm>

#include <fmt/format.h>

#include "app/commands/commands.hpp"
#include "app/access_config.hpp"
#include "app/config.hpp"
#include "app/config_reference.hpp"
#include "document/document.hpp"
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
    // Each guard: how it is reached (a URL without its query, which may hold a key; never a
    // header), how it is used, and where it is attached.
    for (const auto& entry : p.guards) {
        const std::string& name = entry.first;
        const pipeline::GuardSettings& g = entry.second;
        auto bare = [](const std::string& url) {
            try {
                return http_client::parse_url(url).display();
            } catch (const std::exception&) {
                return std::string("(an invalid URL)");
            }
        };
        std::string reached = g.webhook                      ? "webhook " + bare(g.webhook->url)
                              : !g.interceptors->url.empty() ? "mcp " + bare(g.interceptors->url)
                                                             : "mcp stdio " + g.interceptors->argv.front();
        std::string where;
        auto attached = [&](const std::string& label, const std::vector<std::string>& guards) {
            if (std::find(guards.begin(), guards.end(), name) != guards.end())
                where += (where.empty() ? "" : ", ") + label;
        };
        attached("pipeline", p.defaults.guards);
        for (const auto& [source, o] : p.sources) attached("sources." + source, o.guards);
        for (const auto& [tool, o] : p.tools) attached("tools." + tool, o.guards);
        const char* failure = !g.failure_mode ? (g.webhook ? "closed" : "per interceptor")
                              : *g.failure_mode == pipeline::FailureMode::open ? "open"
                                                                               : "closed";
        fmt::print("  guard {}: {} ({}{}{}, timeout {} ms, failure {}); on: {}\n", name, reached,
                   g.before ? "before" : "", g.before && g.after ? "+" : "", g.after ? "after" : "", g.timeout.count(),
                   failure, where.empty() ? "nothing (not attached)" : where);
    }
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

int show(const std::string& file, bool as_json) {
    try {
        load_config(file);  // refused as `serve` would refuse it
    } catch (const ConfigError& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 2;
    }
    nlohmann::json written;
    try {
        written = document::parse_document(document::read_text_file(file), file).value;
    } catch (const std::exception& e) {
        fmt::print(stderr, "{}\n", e.what());
        return 2;
    }
    const auto rows = effective_configuration(written);
    if (as_json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& row : rows) out.push_back({{"path", row.path}, {"value", row.value}, {"from", row.from}});
        fmt::print("{}\n", out.dump(2));
        return 0;
    }
    std::size_t width = 0;
    for (const auto& row : rows) width = std::max(width, row.path.size());
    for (const auto& row : rows) {
        const std::string value = row.value.is_string() ? row.value.get<std::string>() : row.value.dump();
        fmt::print("{:<{}}  {}  ({})\n", row.path, width, value, row.from);
    }
    return 0;
}

}  // namespace

Command add_config(CLI::App& app) {
    auto file = std::make_shared<std::string>();
    auto* config = app.add_subcommand("config", "Work with configuration files");
    config->require_subcommand(1);
    auto* check_cmd = config->add_subcommand("check", "Validate a configuration file and summarize it");
    check_cmd->add_option("FILE", *file, "YAML configuration file")->required();
    auto as_json = std::make_shared<bool>(false);
    auto* show_cmd = config->add_subcommand(
        "show", "Print every key as it takes effect (from the file, the environment or its default), secrets as ***");
    show_cmd->add_option("FILE", *file, "YAML configuration file")->required();
    show_cmd->add_flag("--json", *as_json, "One JSON array of {path, value, from}");
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
                if (show_cmd->parsed()) return show(*file, *as_json);
                return check(*file);
            }};
}

}  // namespace toolport::commands
