// `toolport list` and `toolport call`: the MCP client on the command line. Exactly one
// target: a server at --url (Streamable HTTP, or with --legacy-sse the HTTP+SSE transport
// of 2024-11-05), a program started with --stdio, or the
// server a --config file describes, built in this very process (no sockets).
//
// Exit status: 0 success; 1 the server could not be reached, failed, answered with a
// JSON-RPC error, or the tool reported an error (isError); 2 a usage error (flags, JSON
// arguments, configuration).
#include <cstdio>
#include <cstdlib>
#include <deque>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/commands/commands.hpp"
#include "app/commands/command_support.hpp"
#include "app/commands/oauth_flags.hpp"
#include "app/config.hpp"
#include "app/runtime.hpp"
#include "async/asio_executor.hpp"
#include "async/completion.hpp"
#include "async/executor.hpp"
#include "client/elicitation_answers.hpp"
#include "client/legacy_sse_transport.hpp"
#include "client/shell_words.hpp"
#include "client/skills.hpp"
#include "client/sync_client.hpp"
#include "client/tool_output.hpp"
#include "http_client/url.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "server/request_context.hpp"
#include "util/ascii.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

struct ClientFlags {
    std::string url, stdio_command, config_file, token, ca_file;
    std::vector<std::string> imports;  // --import: MCP client server lists, served in-process
    bool verbose = false;              // --verbose: the --stdio server's log as it comes
    std::string protocol_version;      // empty: auto
    std::string elicitation;           // empty: elicitation is not declared
    std::vector<std::string> headers;
    bool json = false;
    bool legacy_sse = false;
    long long timeout_ms = 60000;
    // toolport call (tool: also the skill of toolport skills)
    std::string tool, arguments = "{}";
    bool skill_files = false;  // toolport skills NAME --files
    OAuthFlags oauth;
};

void add_target_flags(CLI::App* command, ClientFlags& flags) {
    command->add_option("--url", flags.url, "Streamable HTTP endpoint, e.g. http://127.0.0.1:8080/mcp or https://…");
    command->add_option("--stdio", flags.stdio_command,
                        "Start this command and speak MCP on its stdin/stdout (split into words like a shell "
                        "would, but never run by one)");
    command->add_option("--config", flags.config_file, "Build the server this YAML file describes, in this process");
    command->add_option("--import", flags.imports,
                        "Build a gateway in this process over every server of a Claude Desktop/Cursor (mcpServers) or "
                        "VS Code (servers) JSON file, as serve --import does; repeatable, and with --config");
    command->add_flag("--verbose,-v", flags.verbose,
                      "Show the --stdio server's log (stderr) as it comes; without it, only when the command fails");
    command->add_flag("--json", flags.json, "Print JSON instead of readable text");
    command->add_option("--token", flags.token, "Bearer token for --url (default: $TOOLPORT_TOKEN)");
    command->add_option("--header", flags.headers, "Extra HTTP header for --url, 'Name: value' (repeatable)");
    command->add_option("--ca-file", flags.ca_file, "PEM file of CAs to trust for an https --url, besides the system's");
    command->add_flag("--legacy-sse", flags.legacy_sse,
                      "--url is a legacy HTTP+SSE stream (MCP 2024-11-05, e.g. http://127.0.0.1:8080/sse)");
    command->add_option("--protocol-version", flags.protocol_version,
                        "The MCP revision to speak, e.g. 2025-11-25 or 2026-07-28 (stateless); default: the latest "
                        "with the initialize handshake, and 2026-07-28 when the server refuses it");
    command
        ->add_option("--elicitation", flags.elicitation,
                     "Answer the server's elicitation requests: defaults (accept with the requested schema's "
                     "defaults; decline when a required field has none), decline or cancel. Without it no "
                     "elicitation capability is declared")
        ->check(CLI::IsMember({"defaults", "decline", "cancel"}));
    command->add_option("--timeout-ms", flags.timeout_ms, "How long to wait for each answer (milliseconds)")
        ->check(CLI::Range(1LL, 24LL * 3600 * 1000));
    add_oauth_flags(command, flags.oauth);
}

// Whether a --header sets Authorization itself (then OAuth stays out of the way).
bool sets_authorization(const client::HttpClientOptions& options) {
    for (const auto& [name, value] : options.headers) {
        if (util::to_lower_ascii(name) == "authorization") return true;
    }
    return false;
}

// Lets the in-process server's sources finish their first background load (a REST
// catalog's fetch), at most `limit`, so the command sees what a server would serve.
Task<void> wait_for_sources(Runtime& runtime, Executor& executor, std::chrono::milliseconds limit) {
    const auto deadline = executor.now() + limit;
    while (!runtime.sources_settled() && executor.now() < deadline) {
        co_await executor.sleep(std::chrono::milliseconds(10));
    }
}

// The log of a --stdio server, kept back unless the user asked for it (--verbose) or the
// command fails: it is the server's, not the answer.
struct ServerLog {
    bool verbose = false;
    std::deque<std::string> lines;  // the last kMaxLines
    static constexpr std::size_t kMaxLines = 200;

    void add(std::string_view line) {
        if (verbose) {
            fmt::print(stderr, "{}\n", line);
            return;
        }
        lines.emplace_back(line);
        if (lines.size() > kMaxLines) lines.pop_front();
    }
    void show() {
        for (const auto& line : lines) fmt::print(stderr, "{}\n", line);
        lines.clear();
    }
};

// What the client talks to; `runtime` holds the in-process server of --config/--import.
struct Target {
    std::unique_ptr<Runtime> runtime;
    std::unique_ptr<client::ClientTransport> transport;
};

Target make_target(const ClientFlags& flags, client::SyncClient& sync, ServerLog& log) {
    const bool in_process = !flags.config_file.empty() || !flags.imports.empty();
    const int chosen = !flags.url.empty() + !flags.stdio_command.empty() + in_process;
    if (chosen != 1) throw UsageError("give exactly one of --url, --stdio or --config/--import");
    if (flags.url.empty() &&
        (!flags.token.empty() || !flags.headers.empty() || !flags.ca_file.empty() || flags.legacy_sse)) {
        throw UsageError("--token, --header, --ca-file and --legacy-sse apply to --url only");
    }
    Target target;
    if (!flags.url.empty()) {
        auto options = http_options(flags.url, flags.token, flags.headers, flags.ca_file);
        // A client that answers elicitation hears the server's requests that belong to no
        // request of its own too (a server may ask on its GET stream while a call runs).
        options.listen = !flags.elicitation.empty();
        // A server that answers 401 is authorized with OAuth (tokens kept per server), unless
        // the user gave a credential of their own. The legacy HTTP+SSE transport predates it.
        if (options.bearer_token.empty() && !sets_authorization(options) && !flags.legacy_sse) {
            try {
                http_client::parse_url(flags.url);  // its errors are about --url, not about OAuth
            } catch (const std::invalid_argument& e) {
                throw UsageError(fmt::format("--url: {}", e.what()));
            }
            options.authorizer = make_authorizer(flags.oauth, flags.url, flags.ca_file, sync.executor());
        }
        try {
            target.transport = flags.legacy_sse ? client::make_legacy_sse_transport(sync.executor(), std::move(options))
                                                : client::make_http_transport(sync.executor(), std::move(options));
        } catch (const std::invalid_argument& e) {
            throw UsageError(fmt::format("--url: {}", e.what()));
        }
    } else if (!flags.stdio_command.empty()) {
        client::StdioClientOptions options;
        options.argv = stdio_argv(flags.stdio_command);
        // The user's own command, typed in their own shell: it gets their environment, as
        // it would run there (the gateway's upstreams get only an allow-list).
        options.inherit_env = true;
        options.on_stderr_line = [&log](std::string_view line) { log.add(line); };
        target.transport = client::make_stdio_transport(sync.executor(), std::move(options));
    } else {
        try {
            Config config = load_config(flags.config_file);
            for (const auto& file : flags.imports) {
                for (const auto& warning : import_mcp_servers(config, file)) {
                    fmt::print(stderr, "toolport: warning: {}\n", warning);
                }
            }
            target.runtime = std::make_unique<Runtime>(config, sync.event_loop());
        } catch (const ConfigError& e) {
            throw UsageError(fmt::format("configuration: {}", e.what()));
        }
        sync.run(wait_for_sources(*target.runtime, sync.event_loop(), std::chrono::milliseconds(flags.timeout_ms)));
        target.transport = client::make_in_process_transport(target.runtime->server(),
                                                             CallerIdentity{.session_id = "in-process"});
    }
    return target;
}

void print_error(const char* command, const std::string& message) {
    fmt::print(stderr, "toolport {}: {}\n", command, message);
}

// Connects to the target, runs `body`, closes; turns every failure into one line on
// stderr and an exit status.
int run_client(const char* command, const ClientFlags& flags, const std::function<int(client::SyncClient&)>& body) {
    // The in-process server's start-up chatter is not what the user asked to see.
    spdlog::set_level(spdlog::level::warn);
    client::ClientOptions options;
    options.client_name = "toolport-cli";
    options.request_timeout = std::chrono::milliseconds(flags.timeout_ms);
    if (!flags.protocol_version.empty() && !protocol::parse_revision(flags.protocol_version)) {
        print_error(command, fmt::format("--protocol-version {} is not one Toolport speaks ({})",
                                         util::sanitize_for_message(flags.protocol_version, 40),
                                         protocol::supported_revisions_list()));
        return 2;
    }
    options.protocol_version = flags.protocol_version;
    const auto elicitation = client::parse_elicitation_policy(flags.elicitation);
    if (elicitation) options.capabilities = client::elicitation_capabilities();
    ServerLog log{.verbose = flags.verbose};
    client::SyncClient sync(options);
    if (elicitation) sync.on_request(client::elicitation_request_handler(*elicitation));
    Target target;
    int status = 1;
    bool failed = true;
    try {
        target = make_target(flags, sync, log);
        sync.connect(std::move(target.transport));
        status = body(sync);
        failed = false;  // a tool's own error (isError) is an answer, not the server failing
    } catch (const UsageError& e) {
        print_error(command, e.what());
        status = 2;
    } catch (const protocol::RpcError& e) {
        print_error(command, fmt::format("the server answered with error {}: {}", e.code,
                                         util::sanitize_for_message(e.message, 500)));
    } catch (const OperationCancelled& e) {
        print_error(command, e.what());
    } catch (const std::exception& e) {
        // TransportError, RequestTimeout, ClientError: their messages are one readable line.
        print_error(command, util::sanitize_for_message(e.what(), 500));
    }
    // Before the in-process server (if any) goes away.
    sync.close();
    // The server's log explains its failure; otherwise it is noise.
    if (failed) log.show();
    return status;
}

Json parse_arguments(const std::string& text) {
    if (auto depth = protocol::max_nesting_depth(text); depth > 64) {
        throw UsageError(fmt::format("the arguments nest {} levels deep; the limit is 64", depth));
    }
    Json arguments;
    try {
        arguments = Json::parse(text);
    } catch (const Json::exception& e) {
        std::string detail = e.what();
        if (auto pos = detail.find("] "); pos != std::string::npos) detail = detail.substr(pos + 2);
        throw UsageError("the arguments are not valid JSON: " + detail);
    }
    if (!arguments.is_object()) {
        throw UsageError("the arguments must be a JSON object, e.g. '{\"name\": \"value\"}'");
    }
    return arguments;
}

// Per request: the stateless revision's questions (input_required) answered as --elicitation
// says; with `progress`, the server's progress notifications shown on stderr as they come.
client::RequestOptions request_options(const ClientFlags& flags, bool progress = false) {
    client::RequestOptions options;
    if (progress) {
        options.on_progress = [](const Json& params) {
            if (!params.is_object()) return;
            const Json value = params.value("progress", Json());
            const Json total = params.value("total", Json());
            if (!value.is_number()) return;
            std::string line = "progress " + value.dump();
            if (total.is_number()) line += "/" + total.dump();
            if (auto message = params.value("message", Json()); message.is_string()) {
                line += ": " + util::sanitize_for_message(message.get<std::string>(), 300);
            }
            fmt::print(stderr, "{}\n", line);
        };
    }
    if (auto policy = client::parse_elicitation_policy(flags.elicitation)) {
        options.on_input_required = client::input_request_answerer(*policy);
    }
    return options;
}

void print_json(const Json& value) { fmt::print("{}\n", value.dump(2, ' ', false, Json::error_handler_t::replace)); }

}  // namespace

Command add_list(CLI::App& app) {
    auto flags = std::make_shared<ClientFlags>();
    auto* list = app.add_subcommand("list", "List the tools of an MCP server");
    add_target_flags(list, *flags);
    return {list, [flags]() -> int {
                return run_client("list", *flags, [&](client::SyncClient& sync) {
                    auto tools = sync.list_tools(request_options(*flags));
                    if (flags->json) print_json(Json(tools));
                    else fmt::print("{}", client::render_tool_list(tools));
                    return 0;
                });
            }};
}

Command add_call(CLI::App& app) {
    auto flags = std::make_shared<ClientFlags>();
    auto* call = app.add_subcommand("call", "Call one tool of an MCP server");
    call->add_option("tool", flags->tool, "The tool's name")->required();
    call->add_option("arguments", flags->arguments, "The arguments as a JSON object (default {})");
    add_target_flags(call, *flags);
    return {call, [flags]() -> int {
                // Checked before connecting: a typo should not cost a server start.
                Json arguments;
                try {
                    arguments = parse_arguments(flags->arguments);
                } catch (const UsageError& e) {
                    print_error("call", e.what());
                    return 2;
                }
                return run_client("call", *flags, [&](client::SyncClient& sync) {
                    // Over stateless HTTP a call mirrors the arguments its tool marks "x-mcp-header"
                    // in Mcp-Param-* headers, which only a listing tells; and a tool whose markings
                    // are invalid is not called (McpClient::list_tools).
                    if (sync.client().is_stateless() && !flags->url.empty()) sync.list_tools(request_options(*flags));
                    Json result = sync.call_tool(flags->tool, std::move(arguments), request_options(*flags, true));
                    auto rendered = client::render_call_result(flags->tool, result);
                    if (flags->json) print_json(result);
                    else if (rendered.is_error) fmt::print(stderr, "{}", rendered.text);
                    else fmt::print("{}", rendered.text);
                    return rendered.is_error ? 1 : 0;
                });
            }};
}

Command add_skills(CLI::App& app) {
    auto flags = std::make_shared<ClientFlags>();
    auto* skills = app.add_subcommand(
        "skills", "List the skills of an MCP server (Skills extension), or load one, verified against its listing");
    skills->add_option(
        "skill", flags->tool,
        "The skill to load: its id (category/name), its bare name where no other skill has it, or the URI "
        "of its SKILL.md");
    skills->add_flag("--files", flags->skill_files, "With a skill: also read its other files, each verified");
    add_target_flags(skills, *flags);
    return {skills, [flags]() -> int {
                return run_client("skills", *flags, [&](client::SyncClient& sync) {
                    // Listing reads no skill file: a skill's files are read when it is loaded.
                    auto entries = sync.run(client::list_skills(sync.client(), request_options(*flags)));
                    if (flags->tool.empty()) {
                        if (flags->json) {
                            print_json(Json(entries));
                        } else {
                            for (const auto& entry : entries) {
                                const Json front = entry.value("frontmatter", Json::object());
                                fmt::print("{:<40}  {}\n", util::sanitize_for_message(client::skill_id(entry), 200),
                                           util::sanitize_for_message(front.value("description", ""), 500));
                            }
                        }
                        return 0;
                    }
                    const Json* chosen = nullptr;
                    try {
                        chosen = &client::choose_skill(entries, flags->tool, sync.client().describe_server());
                    } catch (const client::ClientError& e) {
                        print_error("skills", e.what());
                        return 1;
                    }
                    Json loaded = sync.run(
                        client::load_skill(sync.client(), *chosen, flags->skill_files, request_options(*flags)));
                    if (flags->json) {
                        print_json(loaded);
                    } else {
                        fmt::print("{}", loaded["text"].get<std::string>());
                        for (const auto& file : loaded["files"]) {
                            fmt::print("\n--- {}\n{}", file["uri"].get<std::string>(), file["text"].get<std::string>());
                        }
                    }
                    return 0;
                });
            }};
}

}  // namespace toolport::commands
