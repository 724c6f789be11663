// `toolport test SPEC_OR_DIR...`: runs YAML integration specs (mcp-server-kit's format,
// src/spec/spec.hpp) against an MCP server reached with the MCP client: --url (Streamable
// HTTP), --stdio (a program started here), or --config (the server that file describes,
// built in this process). Folders are searched for *.yaml / *.yml files.
//
// A suite's `setup.serverUrl` is used for its specs when the command line names no server;
// a server named on the command line is used for every spec.
//
// Prints each spec's result as it finishes, then "N passed, N failed" (or, with --json, one
// JSON document). Exit status: 0 all ran specs passed; 1 a spec failed or none were found;
// 2 a usage error (flags, configuration).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/commands/commands.hpp"
#include "app/commands/command_support.hpp"
#include "app/config.hpp"
#include "app/runtime.hpp"
#include "client/shell_words.hpp"
#include "client/sync_client.hpp"
#include "server/request_context.hpp"
#include "spec/spec.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct TestFlags {
    std::vector<std::string> paths;
    std::string url, stdio_command, config_file, token, ca_file;
    std::vector<std::string> headers;
    long long timeout_ms = 30000;
    bool update_snapshots = false;
    bool json = false;
};

// MCP prompt arguments are strings; a spec that writes `count: 5` means "5".
Json prompt_arguments(const Json& arguments) {
    Json out = Json::object();
    for (const auto& [key, value] : arguments.items()) {
        if (value.is_number() || value.is_boolean()) out[key] = value.dump();
        else out[key] = value;
    }
    return out;
}

// One MCP server, connected on first use, as the spec runner's Target.
class ClientTarget : public spec::Target {
public:
    // How to reach the server; called once, on the client's event loop, on first use.
    using TransportFactory = std::function<std::unique_ptr<client::ClientTransport>(ClientTarget&)>;

    ClientTarget(std::chrono::milliseconds default_timeout, TransportFactory make_transport)
        : make_transport_(std::move(make_transport)) {
        client::ClientOptions options;
        options.client_name = "toolport-test";
        options.request_timeout = default_timeout;
        sync_ = std::make_unique<client::SyncClient>(options);
    }
    ~ClientTarget() override {
        // The client goes before the in-process server it talks to, and that server before
        // the event loop it runs on.
        sync_->close();
        runtime_.reset();
        sync_.reset();
    }

    client::SyncClient& sync() { return *sync_; }
    void own(std::unique_ptr<Runtime> runtime) { runtime_ = std::move(runtime); }

    // Builds the transport (without connecting): what is wrong with a URL, a command or a
    // configuration shows here. Throws std::invalid_argument or ConfigError.
    void prepare() {
        if (!transport_ && !connected_) transport_ = make_transport_(*this);
    }

    // Connects unless already connected; a failure is remembered so that later specs fail
    // at once with the same reason instead of trying again.
    void ensure_connected() {
        if (connected_) return;
        if (!connect_error_.empty()) throw std::runtime_error(connect_error_);
        try {
            prepare();
            sync_->connect(std::move(transport_));
            connected_ = true;
        } catch (const std::exception& e) {
            connect_error_ = util::sanitize_for_message(e.what(), 500);
            throw std::runtime_error(connect_error_);
        }
    }

    Json list_tools() override {
        return translated([&] { return Json(sync_->list_tools()); });
    }

    Json call_tool(const std::string& name, const Json& arguments, std::chrono::milliseconds timeout) override {
        return translated([&] { return sync_->call_tool(name, arguments, with_timeout(timeout)); });
    }

    Json get_prompt(const std::string& name, const Json& arguments, std::chrono::milliseconds timeout) override {
        Json params = {{"name", name}};
        if (!arguments.empty()) params["arguments"] = prompt_arguments(arguments);
        return translated([&] { return sync_->request("prompts/get", params, with_timeout(timeout)); });
    }

    Json read_resource(const std::string& uri, std::chrono::milliseconds timeout) override {
        return translated([&] { return sync_->request("resources/read", {{"uri", uri}}, with_timeout(timeout)); });
    }

private:
    static client::RequestOptions with_timeout(std::chrono::milliseconds timeout) {
        client::RequestOptions options;
        options.timeout = timeout;
        return options;
    }

    // JSON-RPC errors become spec::TargetError (the runner reports their code); the
    // client's other errors (transport, timeout) pass through with their messages.
    template <typename Call>
    Json translated(Call&& call) {
        ensure_connected();
        try {
            return call();
        } catch (const protocol::RpcError& e) {
            throw spec::TargetError(e.code, util::sanitize_for_message(e.message, 2000), e.data);
        }
    }

    TransportFactory make_transport_;
    std::unique_ptr<client::SyncClient> sync_;
    std::unique_ptr<client::ClientTransport> transport_;  // built, not yet connected
    std::unique_ptr<Runtime> runtime_;
    bool connected_ = false;
    std::string connect_error_;
};

ClientTarget::TransportFactory http_factory(const TestFlags& flags, const std::string& url) {
    auto options = http_options(url, flags.token, flags.headers, flags.ca_file);
    return [options](ClientTarget& target) { return client::make_http_transport(target.sync().executor(), options); };
}

// The server the command line names (not yet built), or nullptr when it names none.
std::unique_ptr<ClientTarget> make_command_line_target(const TestFlags& flags) {
    std::chrono::milliseconds timeout(flags.timeout_ms);
    if (!flags.url.empty()) {
        return std::make_unique<ClientTarget>(timeout, http_factory(flags, flags.url));
    }
    if (!flags.stdio_command.empty()) {
        client::StdioClientOptions options;
        options.argv = stdio_argv(flags.stdio_command);
        // The user's own command, typed in their own shell: it gets their environment, as
        // it would run there (the gateway's upstreams get only an allow-list).
        options.inherit_env = true;
        return std::make_unique<ClientTarget>(timeout, [options](ClientTarget& target) {
            return client::make_stdio_transport(target.sync().executor(), options);
        });
    }
    if (!flags.config_file.empty()) {
        // Loaded now, so that a bad file is a usage error before any spec runs.
        Config config;
        try {
            config = load_config(flags.config_file);
        } catch (const ConfigError& e) {
            throw UsageError(fmt::format("configuration: {}", e.what()));
        }
        return std::make_unique<ClientTarget>(timeout, [config](ClientTarget& target) {
            auto runtime = std::make_unique<Runtime>(config, target.sync().event_loop());
            auto transport = client::make_in_process_transport(runtime->server(),
                                                               CallerIdentity{.session_id = "in-process"});
            target.own(std::move(runtime));
            return transport;
        });
    }
    return nullptr;
}

// The server named on the command line, ready to connect, or nullptr when none is.
std::unique_ptr<ClientTarget> command_line_target(const TestFlags& flags) {
    const int chosen = !flags.url.empty() + !flags.stdio_command.empty() + !flags.config_file.empty();
    if (chosen > 1) throw UsageError("give only one of --url, --stdio or --config");
    bool http_options = !flags.token.empty() || !flags.headers.empty() || !flags.ca_file.empty();
    if ((!flags.stdio_command.empty() || !flags.config_file.empty()) && http_options) {
        throw UsageError("--token, --header and --ca-file apply to HTTP servers only");
    }
    for (const auto& header : flags.headers) parse_header(header);
    std::unique_ptr<ClientTarget> target = make_command_line_target(flags);
    if (!target) return nullptr;
    try {
        target->prepare();
    } catch (const ConfigError& e) {
        throw UsageError(fmt::format("configuration: {}", e.what()));
    } catch (const std::exception& e) {
        const char* flag = !flags.url.empty() ? "--url" : !flags.stdio_command.empty() ? "--stdio" : "--config";
        throw UsageError(fmt::format("{}: {}", flag, util::sanitize_for_message(e.what(), 500)));
    }
    return target;
}

int run_tests(const TestFlags& flags) {
    // The in-process server's start-up chatter is not what the user asked to see.
    spdlog::set_level(spdlog::level::warn);
    std::unique_ptr<ClientTarget> default_target;
    try {
        default_target = command_line_target(flags);
    } catch (const UsageError& e) {
        fmt::print(stderr, "toolport test: {}\n", e.what());
        return 2;
    }

    std::vector<std::filesystem::path> paths(flags.paths.begin(), flags.paths.end());
    spec::LoadedSpecs loaded = spec::load_spec_files(spec::collect_spec_files(paths));
    bool any_suite_url = std::any_of(loaded.entries.begin(), loaded.entries.end(), [](const auto& entry) {
        const auto* s = std::get_if<spec::Spec>(&entry);
        return s && !s->server_url.empty();
    });
    if (!default_target && !any_suite_url && loaded.spec_count() > 0) {
        fmt::print(stderr, "toolport test: give one of --url, --stdio or --config (or setup.serverUrl in a suite)\n");
        return 2;
    }

    std::map<std::string, std::unique_ptr<ClientTarget>> by_url;
    auto resolve = [&](const std::string& url) -> spec::Target& {
        ClientTarget* target = default_target.get();
        if (!target && !url.empty()) {
            auto& slot = by_url[url];
            if (!slot) {
                slot = std::make_unique<ClientTarget>(std::chrono::milliseconds(flags.timeout_ms),
                                                      http_factory(flags, url));
            }
            target = slot.get();
        }
        if (!target) throw std::runtime_error("no server for this spec: give --url, --stdio or --config");
        target->ensure_connected();
        return *target;
    };

    spec::RunOptions options;
    options.default_timeout = std::chrono::milliseconds(flags.timeout_ms);
    options.update_snapshots = flags.update_snapshots;
    if (!flags.json) {
        options.on_result = [](const spec::SpecResult& result) {
            spec::print_result(result, std::cout);
            std::cout.flush();
        };
    }
    spec::RunSummary summary = spec::run_specs(loaded, resolve, options);
    if (flags.json) {
        std::cout << spec::report_json(summary).dump(2, ' ', false, Json::error_handler_t::replace) << '\n';
    } else {
        if (summary.results.empty()) fmt::print(stderr, "toolport test: no specs found\n");
        spec::print_totals(summary, std::cout);
    }
    std::cout.flush();
    // Connections close (and child servers exit) before the process does.
    by_url.clear();
    default_target.reset();
    return spec::exit_status(summary);
}

}  // namespace

Command add_test(CLI::App& app) {
    auto flags = std::make_shared<TestFlags>();
    auto* test = app.add_subcommand("test", "Run YAML integration specs (mcp-server-kit format) against an MCP server");
    test->add_option("specs", flags->paths, "Spec files (.yaml, .yml, .json) or folders to search for *.yaml / *.yml")
        ->required();
    test->add_option("--url", flags->url, "Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp or https://…");
    test->add_option("--stdio", flags->stdio_command,
                     "Start this command and speak MCP on its stdin/stdout (split into words like a shell would, "
                     "but never run by one)");
    test->add_option("--config", flags->config_file, "Build the server this YAML file describes, in this process");
    test->add_option("--token", flags->token, "Bearer token for HTTP servers (default: $TOOLPORT_TOKEN)");
    test->add_option("--header", flags->headers, "Extra HTTP header, 'Name: value' (repeatable)")
        ->allow_extra_args(false);  // one value per --header: the spec paths that follow are not headers
    test->add_option("--ca-file", flags->ca_file, "PEM file of CAs to trust for https servers, besides the system's");
    test->add_option("--timeout-ms", flags->timeout_ms, "Timeout of each call without a spec timeout (milliseconds)")
        ->check(CLI::Range(1LL, 24LL * 3600 * 1000));
    test->add_flag("--update-snapshots", flags->update_snapshots, "Rewrite snapshot files instead of comparing");
    test->add_flag("--json", flags->json, "Print the results as one JSON document");
    return {test, [flags]() -> int { return run_tests(*flags); }};
}

}  // namespace toolport::commands
