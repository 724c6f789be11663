// toolport reload: asks a running server to fetch its sources' definitions again (REST
// catalogs, OpenAPI documents) through POST /admin/reload, as SIGHUP does for a local
// process. Clients hear notifications/tools/list_changed only for real changes. The server
// starts one reload at a time, at most one per reload.min_interval_s; asked sooner, it
// reports the running (or last) one, and this command says so on stderr.
//
// --url is required, as for list and call. The server's JSON answer goes to stdout; what
// the reload changed (tools added, removed, changed: tools/list before and after, from the
// MCP endpoint at --url's path, /mcp when it has none) goes to stderr.
//
//   toolport reload --url http://127.0.0.1:8080/mcp
//   toolport reload --url https://tools.example:8443/mcp --token "$TOOLPORT_TOKEN"
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "app/commands/command_support.hpp"
#include "app/commands/commands.hpp"
#include "async/task.hpp"
#include "app/commands/command_support.hpp"
#include "client/blocking_loop.hpp"
#include "client/sync_client.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct ReloadFlags {
    std::string url;
    std::string token;
    std::string ca_file;
    long long wait_ms = 30000;
};

// The tools of the server's MCP endpoint, by name; nullopt when they cannot be listed
// (then the reload is still asked, and its effect is not reported).
std::optional<std::map<std::string, nlohmann::json>> list_tools(const ReloadFlags& flags, const http_client::Url& url) {
    try {
        client::ClientOptions options;
        options.client_name = "toolport-reload";
        options.request_timeout = std::chrono::seconds(30);
        client::SyncClient sync(options);
        const std::string endpoint = url.origin() + (url.target.empty() || url.target == "/" ? "/mcp" : url.target);
        sync.connect(
            client::make_http_transport(sync.executor(), http_options(endpoint, flags.token, {}, flags.ca_file)));
        std::map<std::string, nlohmann::json> tools;
        for (auto& tool : sync.list_tools()) {
            if (tool.is_object() && tool.value("name", nlohmann::json()).is_string()) {
                const auto name = tool["name"].get<std::string>();
                tools[name] = std::move(tool);
            }
        }
        sync.close();
        return tools;
    } catch (const std::exception& e) {
        fmt::print(stderr, "toolport reload: cannot list the tools, so what changed is not reported: {}\n",
                   util::sanitize_for_message(e.what(), 300));
        return std::nullopt;
    }
}

// "2 added (a, b), 1 removed (c), none changed", or "no tool changed".
std::string tool_changes(const std::map<std::string, nlohmann::json>& before,
                         const std::map<std::string, nlohmann::json>& after) {
    std::vector<std::string> added, removed, changed;
    for (const auto& [name, tool] : after) {
        auto it = before.find(name);
        if (it == before.end()) added.push_back(name);
        else if (it->second != tool) changed.push_back(name);
    }
    for (const auto& [name, tool] : before) {
        if (!after.count(name)) removed.push_back(name);
    }
    if (added.empty() && removed.empty() && changed.empty())
        return fmt::format("no tool changed ({} tools)", after.size());
    auto part = [](const std::vector<std::string>& names, const char* what) {
        if (names.empty()) return fmt::format("none {}", what);
        std::string list;
        for (std::size_t i = 0; i < names.size() && i < 20; ++i) {
            list += (i ? ", " : "") + util::sanitize_for_message(names[i], 80);
        }
        if (names.size() > 20) list += fmt::format(", … {} more", names.size() - 20);
        return fmt::format("{} {} ({})", names.size(), what, list);
    };
    return fmt::format("tools: {}, {}, {}; {} tools now", part(added, "added"), part(removed, "removed"),
                       part(changed, "changed"), after.size());
}

// One POST /admin/reload: the response, or nullopt after printing why there is none.
std::optional<http_client::Response> post_reload(const ReloadFlags& flags, const http_client::Url& url,
                                                 const std::string& token) {
    client::BlockingLoop loop;
    http_client::ClientOptions options;
    options.ca_file = flags.ca_file;
    http_client::HttpClient http(loop.asio_executor(), options);
    http_client::Request request;
    request.method = "POST";
    // Whatever path the user gave (often the MCP endpoint), the admin endpoint is at the root.
    request.url = url.origin() + "/admin/reload";
    if (!token.empty()) request.headers.emplace_back("Authorization", "Bearer " + token);
    http_client::CallOptions call;
    call.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    call.max_attempts = 1;

    try {
        return loop.run(http.fetch(std::move(request), std::move(call)));
    } catch (const std::exception& e) {
        fmt::print(stderr, "toolport reload: {}\n", util::sanitize_for_message(e.what()));
        return std::nullopt;
    }
}

// Waits for the reload to end: asked again, the server answers 200 with "running": false
// once it has (a 202 means it had, and this ask started the next one). At most wait_ms.
void wait_for_reload(const ReloadFlags& flags, const http_client::Url& url, const std::string& token) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(flags.wait_ms);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto response = post_reload(flags, url, token);
        if (!response || response->status != 200) return;
        auto body = nlohmann::json::parse(response->body, nullptr, false);
        if (!body.is_object() || !body.value("running", false)) return;
    }
}

int reload(const ReloadFlags& flags) {
    http_client::Url url;
    try {
        url = http_client::parse_url(flags.url);
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "toolport reload: --url: {}\n", e.what());
        return 2;
    }
    std::string token = flags.token;
    if (token.empty()) {
        if (const char* env = std::getenv("TOOLPORT_TOKEN")) token = env;
    }
    const auto before = list_tools(flags, url);
    auto response = post_reload(flags, url, token);
    if (!response) return 1;
    // 200: the server started no new reload (one runs, or one started less than
    // reload.min_interval_s ago) and reports that one instead: said on stderr, so a script
    // reading stdout gets the same JSON shape either way.
    if (response->status == 200) {
        auto body = nlohmann::json::parse(response->body, nullptr, false);
        std::string message = body.is_object() && body.value("message", nlohmann::json()).is_string()
                                  ? body["message"].get<std::string>()
                                  : "no new reload was started";
        fmt::print(stderr, "toolport reload: {}\n", util::sanitize_for_message(message, 300));
        fmt::print("{}\n", response->body);
        return 0;
    }
    if (response->status != 202) {
        fmt::print(stderr, "toolport reload: {} answered HTTP {}: {}\n", url.origin(), response->status,
                   util::sanitize_for_message(response->body, 300));
        return 1;
    }
    fmt::print("{}\n", response->body);
    std::fflush(stdout);
    if (before) {
        // The sources the server read again, then what that changed of its tools.
        std::string sources;
        auto body = nlohmann::json::parse(response->body, nullptr, false);
        if (body.is_object() && body.value("reloading", nlohmann::json()).is_array()) {
            for (const auto& name : body["reloading"]) {
                if (name.is_string())
                    sources += (sources.empty() ? "" : ", ") + util::sanitize_for_message(name.get<std::string>(), 80);
            }
        }
        wait_for_reload(flags, url, token);
        if (auto after = list_tools(flags, url)) {
            fmt::print(stderr, "toolport reload: done: {}; {}\n",
                       sources.empty() ? std::string("no source reloads its definitions") : "read again: " + sources,
                       tool_changes(*before, *after));
        }
    }
    return 0;
}

}  // namespace

Command add_reload(CLI::App& app) {
    auto flags = std::make_shared<ReloadFlags>();
    auto* command = app.add_subcommand(
        "reload", "Ask a running server to fetch its REST catalogs and OpenAPI documents again (POST /admin/reload)");
    command
        ->add_option("--url", flags->url,
                     "The server's MCP endpoint, e.g. http://127.0.0.1:8080/mcp (/mcp when no path is given); "
                     "POST /admin/reload is asked at its root")
        ->required();
    command
        ->add_option("--wait-ms", flags->wait_ms,
                     "How long to wait for the reload to end before reporting what changed (milliseconds)")
        ->check(CLI::Range(0LL, 600000LL));
    command->add_option("--token", flags->token, "Bearer token (default: $TOOLPORT_TOKEN)");
    command->add_option("--ca-file", flags->ca_file, "CA certificate for an https server with a private CA");
    return {command, [flags] { return reload(*flags); }};
}

}  // namespace toolport::commands
