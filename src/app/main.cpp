// toolport: the command line. Each subcommand lives in app/commands/; they share the
// configuration loading of app/config.hpp.
#include <sys/prctl.h>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "app/commands/commands.hpp"
#include "toolport_version.hpp"

int main(int argc, char** argv) {
    // Non-dumpable, first of all: no other process of the same user (a skill run without the
    // sandbox, a compromised upstream child) reads Toolport's memory, environment or file
    // descriptors through /proc/<pid>/ or attaches with ptrace, and no core dump holds its
    // secrets. Every command: the servers hold tokens and keys, and so do the clients
    // (--token). Children get their own flag back when they execve.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);

    // Logs always go to stderr: stdout belongs to the stdio transport and to command output.
    auto logger = spdlog::stderr_color_mt("toolport");
    spdlog::set_default_logger(logger);

    CLI::App app{"Toolport: a fast MCP server and gateway"};
    app.set_version_flag("--version", std::string("toolport ") + toolport::kToolportVersion);
    app.require_subcommand(1);

    using namespace toolport::commands;
    const std::vector<Command> commands = {
        add_serve(app), add_config(app), add_list(app),     add_call(app),   add_skills(app),
        add_login(app), add_logout(app), add_test(app),     add_reload(app), add_patterns(app),
        add_audit(app), add_pins(app),   add_registry(app),
    };

    CLI11_PARSE(app, argc, argv);
    for (const auto& command : commands) {
        if (command.subcommand->parsed()) return command.run();
    }
    return 0;
}
