// toolport reload: asks a running server to fetch its sources' definitions again (REST
// catalogs, OpenAPI documents) through POST /admin/reload, as SIGHUP does for a local
// process. Clients hear notifications/tools/list_changed only for real changes. The server
// starts one reload at a time, at most one per reload.min_interval_s; asked sooner, it
// reports the running (or last) one, and this command says so on stderr.
//
//   toolport reload                                  # the server on 127.0.0.1:8080
//   toolport reload --url https://tools.example:8443 --token "$TOOLPORT_TOKEN"
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "app/commands/command_support.hpp"
#include "app/commands/commands.hpp"
#include "async/task.hpp"
#include "client/blocking_loop.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct ReloadFlags {
    std::string url = "http://127.0.0.1:8080";
    std::string token;
    std::string ca_file;
};

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

    bool done = false;
    std::optional<http_client::Response> response;
    std::exception_ptr error;
    spawn(http.fetch(std::move(request), std::move(call)),
          [&](std::optional<http_client::Response> r, std::exception_ptr e) {
              response = std::move(r);
              error = e;
              done = true;
          });
    loop.run_until(done);
    if (error) {
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            fmt::print(stderr, "toolport reload: {}\n", util::sanitize_for_message(e.what()));
        }
        return 1;
    }
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
    return 0;
}

}  // namespace

Command add_reload(CLI::App& app) {
    auto flags = std::make_shared<ReloadFlags>();
    auto* command = app.add_subcommand(
        "reload", "Ask a running server to fetch its REST catalogs and OpenAPI documents again (POST /admin/reload)");
    command->add_option("--url", flags->url, "The server (default http://127.0.0.1:8080; any path is ignored)");
    command->add_option("--token", flags->token, "Bearer token (default: $TOOLPORT_TOKEN)");
    command->add_option("--ca-file", flags->ca_file, "CA certificate for an https server with a private CA");
    return {command, [flags] { return reload(*flags); }};
}

}  // namespace toolport::commands
