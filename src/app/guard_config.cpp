#include "app/guard_config.hpp"

#include <fmt/format.h>

#include "app/config_table.hpp"
#include "http_client/url.hpp"

namespace toolport {

namespace {

using namespace std::chrono;
namespace kg = config_table::guard;
using config::Settings;

std::vector<std::pair<std::string, std::string>> header_list(const Settings& s) {
    std::vector<std::pair<std::string, std::string>> out;
    if (auto headers = s.string_map(kg::headers)) {
        for (auto& [name, value] : *headers) out.emplace_back(name, value);
    }
    return out;
}

void check_url(const Settings& s, const config::Key& key, const std::string& url) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0)
        s.fail(key, "must be an http:// or https:// URL");
}

pipeline::GuardSettings read_guard(const std::string& name, const Settings& n) {
    n.check_keys(kg::section);
    pipeline::GuardSettings g;
    g.name = name;
    const bool webhook = n.has(kg::webhook_key);
    const bool mcp = n.has(kg::mcp_key);
    if (webhook == mcp) n.fail_here("a guard needs exactly one of webhook: (an HTTP endpoint) or mcp: (an MCP server)");
    if (webhook) {
        auto w = n.section(kg::webhook_key);
        w.check_keys(kg::webhook_section);
        pipeline::GuardSettings::Webhook hook;
        auto url = w.string(kg::url);
        if (!url) w.fail(kg::url, "is required: where the checks are sent");
        check_url(w, kg::url, *url);
        hook.url = *url;
        hook.headers = header_list(w);
        if (auto token = w.secret(kg::bearer_token)) hook.bearer_token = *token;
        if (auto v = w.integer(kg::max_response_bytes)) hook.max_response_bytes = static_cast<std::size_t>(*v);
        g.webhook = std::move(hook);
    } else {
        auto m = n.section(kg::mcp_key);
        m.check_keys(kg::mcp_section);
        pipeline::GuardSettings::Interceptors server;
        auto command = m.string(kg::command);
        auto url = m.string(kg::mcp_url);
        if (command.has_value() == url.has_value())
            m.fail_here("an MCP guard needs exactly one of command: (stdio) or url: (Streamable HTTP)");
        if (command) {
            server.argv.push_back(*command);
            if (auto args = m.list(kg::args)) server.argv.insert(server.argv.end(), args->begin(), args->end());
            if (auto env = m.string_map(kg::env)) server.env = *env;
        } else {
            check_url(m, kg::mcp_url, *url);
            server.url = *url;
            server.headers = header_list(m);
            if (auto token = m.secret(kg::bearer_token)) server.bearer_token = *token;
        }
        if (auto names = m.list(kg::interceptors)) server.names = *names;
        if (auto config = m.value(kg::invoke_config.name)) {
            if (!config->is_object()) m.fail(kg::invoke_config, "must be a mapping");
            server.config = *config;
        }
        g.interceptors = std::move(server);
    }
    if (auto v = n.duration<milliseconds>(kg::timeout_ms)) g.timeout = *v;
    if (auto v = n.one_of(kg::failure_mode))
        g.failure_mode = *v == "open" ? pipeline::FailureMode::open : pipeline::FailureMode::closed;
    if (auto v = n.integer(kg::max_concurrency)) g.max_concurrency = static_cast<std::size_t>(*v);
    if (auto v = n.duration<seconds>(kg::cache_verdicts_s)) g.cache_verdicts = *v;
    if (auto phases = n.list(kg::phases)) {
        g.before = g.after = false;
        for (std::size_t i = 0; i < phases->size(); ++i) {
            const auto& p = (*phases)[i];
            if (p == "before") g.before = true;
            else if (p == "after") g.after = true;
            else n.fail_item(kg::phases.name, i, fmt::format("unknown phase \"{}\" (known: before, after)", p));
        }
        if (!g.before && !g.after) n.fail(kg::phases, "must name before, after or both");
    }
    return g;
}

}  // namespace

std::map<std::string, pipeline::GuardSettings> read_guards(const Settings& root) {
    std::map<std::string, pipeline::GuardSettings> out;
    if (!root.has(config_table::guards_key)) return out;
    auto s = root.section(config_table::guards_key);
    if (!s.is_mapping()) root.fail(config_table::guards_key, "must be a mapping of guard names");
    for (const auto& name : s.names()) out[name] = read_guard(name, s.entry(name));
    return out;
}

}  // namespace toolport
