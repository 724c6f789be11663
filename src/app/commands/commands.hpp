// The subcommands of `toolport`. Each add_* function declares its subcommand, options
// and flags on `app` and returns what runs it once parsed (the process's exit status).
// Adding a command is one file here plus one line in main.cpp.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace toolport::commands {

struct Command {
    CLI::App* subcommand;
    std::function<int()> run;
};

Command add_serve(CLI::App& app);     // toolport serve
Command add_config(CLI::App& app);    // toolport config check FILE | schema | docs
Command add_list(CLI::App& app);      // toolport list (client_commands.cpp)
Command add_call(CLI::App& app);      // toolport call (client_commands.cpp)
Command add_skills(CLI::App& app);    // toolport skills (client_commands.cpp)
Command add_login(CLI::App& app);     // toolport login URL (login_command.cpp)
Command add_logout(CLI::App& app);    // toolport logout URL (login_command.cpp)
Command add_test(CLI::App& app);      // toolport test (test_command.cpp)
Command add_reload(CLI::App& app);    // toolport reload (reload_command.cpp)
Command add_patterns(CLI::App& app);  // toolport patterns list|approve (patterns_command.cpp)
Command add_audit(CLI::App& app);     // toolport audit [summary] (audit_command.cpp)
Command add_pins(CLI::App& app);      // toolport pins list|diff|approve|reset (pins_command.cpp)
Command add_registry(CLI::App& app);  // toolport registry search|show|add|update (registry_command.cpp)

}  // namespace toolport::commands
