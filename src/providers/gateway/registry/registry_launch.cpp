#include "providers/gateway/registry/registry_launch.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

namespace toolport::registry {

namespace {

struct Filler {
    const ServerJson& server;
    const LaunchConfig& config;
    std::vector<std::string>& secrets;

    std::string entry() const { return fmt::format("{}@{}", server.name, server.version); }

    std::optional<std::string> configured(const std::map<std::string, std::string>& from,
                                          std::initializer_list<std::string> keys) const {
        for (const auto& key : keys) {
            if (key.empty()) continue;
            if (auto it = from.find(key); it != from.end()) return it->second;
        }
        return std::nullopt;
    }

    [[noreturn]] void missing(const std::string& what, const std::string& where, const ServerInput& in) const {
        throw LaunchError(fmt::format("upstream {}: registry entry {} requires {}{}; give it in upstreams.{}.{}",
                                      config.upstream, entry(), what,
                                      in.description.empty() ? "" : " (" + in.description + ")", config.upstream, where));
    }

    // {name} replaced by the variable's value: configured under arguments:, else its default.
    std::string substitute(std::string text, const std::map<std::string, ServerInput>& variables) const {
        for (const auto& [name, variable] : variables) {
            const std::string token = "{" + name + "}";
            if (text.find(token) == std::string::npos) continue;
            auto value = configured(config.arguments, {name});
            if (!value && !variable.value.empty()) value = variable.value;
            if (!value && !variable.default_value.empty()) value = variable.default_value;
            if (!value) {
                if (variable.required) missing("the variable \"" + name + "\"", "arguments." + name, variable);
                continue;  // an unknown {name} stays as written (the schema says so)
            }
            if (variable.secret) secrets.push_back(*value);
            for (auto at = text.find(token); at != std::string::npos; at = text.find(token, at + value->size()))
                text.replace(at, token.size(), *value);
        }
        return text;
    }

    // One argument's words (none when it is optional and not given).
    std::vector<std::string> argument(const ServerInput& in) const {
        const bool named = in.type == "named";
        std::string bare = in.name;
        while (!bare.empty() && bare.front() == '-') bare.erase(bare.begin());
        std::optional<std::string> value;
        if (!in.value.empty()) value = substitute(in.value, in.variables);
        if (!value)
            value = named ? configured(config.arguments, {in.name, bare})
                          : configured(config.arguments, {in.value_hint, in.name});
        if (!value && !in.default_value.empty()) value = substitute(in.default_value, in.variables);
        if (!value) {
            if (in.required) {
                const std::string key = named ? bare : (in.value_hint.empty() ? in.name : in.value_hint);
                missing(named ? "the argument " + in.name : "the argument <" + key + ">", "arguments." + key, in);
            }
            // A named flag without a value (a switch) is given when configured as "true".
            return {};
        }
        if (in.secret) secrets.push_back(*value);
        if (!named) return {*value};
        if (in.format == "boolean") {
            if (*value == "true") return {in.name};
            return {};
        }
        return {in.name, *value};
    }

    std::vector<std::string> arguments(const std::vector<ServerInput>& inputs) const {
        std::vector<std::string> out;
        for (const auto& in : inputs) {
            auto words = argument(in);
            out.insert(out.end(), words.begin(), words.end());
        }
        return out;
    }

    // A declared environment variable: from env:, else Toolport's environment, else the
    // publisher's value or default.
    std::optional<std::string> variable(const ServerInput& in) const {
        if (auto v = configured(config.env, {in.name})) return v;
        if (config.environment) {
            if (auto v = config.environment(in.name)) return v;
        }
        if (!in.value.empty()) return substitute(in.value, in.variables);
        if (!in.default_value.empty()) return in.default_value;
        return std::nullopt;
    }
};

std::optional<std::string> getenv_value(const std::string& name) {
    const char* value = std::getenv(name.c_str());
    if (!value || !*value) return std::nullopt;  // set but empty is not given
    return std::string(value);
}

const ServerPackage* choose_package(const ServerJson& server, const LaunchConfig& config, std::string& reasons) {
    auto runnable = [&](const ServerPackage& p) -> bool {
        std::string runner;
        if (p.registry_type == "npm") runner = "npx";
        else if (p.registry_type == "pypi") runner = "uvx";
        else if (p.registry_type == "oci") {
            if (config.installed("docker") || config.installed("podman")) return true;
            reasons += fmt::format("; {} {} needs docker or podman", p.registry_type, p.identifier);
            return false;
        } else {
            reasons += fmt::format("; {} packages are not run by Toolport (npm, pypi and oci are)", p.registry_type);
            return false;
        }
        if (!config.installed(runner)) {
            reasons += fmt::format("; {} {} needs {}, not found on PATH", p.registry_type, p.identifier, runner);
            return false;
        }
        return true;
    };
    for (const auto& p : server.packages) {
        if (config.run != "auto" && p.registry_type != config.run) continue;
        if (runnable(p)) return &p;
    }
    return nullptr;
}

}  // namespace

bool on_path(const std::string& program) {
    const char* path = std::getenv("PATH");
    if (!path) return false;
    std::string_view dirs(path);
    while (true) {
        const auto colon = dirs.find(':');
        std::string dir(dirs.substr(0, colon));
        if (!dir.empty()) {
            const auto candidate = std::filesystem::path(dir) / program;
            if (::access(candidate.c_str(), X_OK) == 0 && !std::filesystem::is_directory(candidate)) return true;
        }
        if (colon == std::string_view::npos) break;
        dirs.remove_prefix(colon + 1);
    }
    return false;
}

Launch plan_launch(const ServerJson& server, const LaunchConfig& given) {
    LaunchConfig config = given;
    if (!config.environment) config.environment = getenv_value;
    if (!config.installed) config.installed = on_path;
    Launch launch;
    Filler fill{server, config, launch.secrets};

    const bool want_remote = config.run == "remote" || (config.run == "auto" && !server.remotes.empty());
    if (want_remote) {
        if (server.remotes.empty())
            throw LaunchError(fmt::format("upstream {}: registry entry {} has no remotes (run: remote)",
                                          config.upstream, fill.entry()));
        const ServerRemote* remote = &server.remotes.front();
        for (const auto& r : server.remotes) {
            if (r.type == "streamable-http") {
                remote = &r;
                break;
            }
        }
        launch.transport = remote->type;
        launch.url = fill.substitute(remote->url, remote->variables);
        if (launch.url.rfind("http://", 0) != 0 && launch.url.rfind("https://", 0) != 0)
            throw LaunchError(fmt::format("upstream {}: registry entry {}: its remote URL \"{}\" is not http(s)",
                                          config.upstream, fill.entry(), launch.url));
        for (const auto& header : remote->headers) {
            std::optional<std::string> value = fill.configured(config.headers, {header.name});
            if (!value && !header.value.empty()) value = fill.substitute(header.value, header.variables);
            if (!value && !header.default_value.empty()) value = header.default_value;
            if (!value) {
                if (header.required) fill.missing("the header " + header.name, "headers." + header.name, header);
                continue;
            }
            launch.secrets.push_back(*value);  // headers carry credentials
            launch.headers.emplace_back(header.name, *value);
        }
        for (const auto& [name, value] : config.headers) {
            bool declared = false;
            for (const auto& h : launch.headers) declared = declared || h.first == name;
            if (!declared) launch.headers.emplace_back(name, value);
        }
        launch.what = fmt::format("remote {}", launch.url.substr(0, launch.url.find('?')));
        return launch;
    }

    std::string reasons;
    const ServerPackage* package = choose_package(server, config, reasons);
    if (!package) {
        if (server.packages.empty() && server.remotes.empty())
            throw LaunchError(fmt::format("upstream {}: registry entry {} has neither packages nor remotes",
                                          config.upstream, fill.entry()));
        throw LaunchError(fmt::format("upstream {}: registry entry {} has no package Toolport can run{}{}",
                                      config.upstream, fill.entry(),
                                      config.run == "auto" ? "" : " of type " + config.run, reasons));
    }
    if (package->transport != "stdio")
        throw LaunchError(
            fmt::format("upstream {}: registry entry {}: its {} package serves {}; Toolport runs stdio "
                        "packages (use its remote, or run it yourself and give url:)",
                        config.upstream, fill.entry(), package->registry_type, package->transport));
    for (const auto& in : package->environment_variables) {
        auto value = fill.variable(in);
        if (!value) {
            if (in.required)
                fill.missing("the environment variable " + in.name,
                             "env." + in.name + " (as \"${" + in.name + "}\" for a secret) or Toolport's environment",
                             in);
            continue;
        }
        if (in.secret) launch.secrets.push_back(*value);
        launch.env[in.name] = *value;
    }
    for (const auto& [name, value] : config.env) launch.env.emplace(name, value);
    const auto runtime = fill.arguments(package->runtime_arguments);
    const auto arguments = fill.arguments(package->package_arguments);
    const auto& type = package->registry_type;
    if (type == "npm") {
        launch.argv = {"npx"};
        bool yes = false;
        for (const auto& word : runtime) yes = yes || word == "-y" || word == "--yes";
        if (!yes) launch.argv.push_back("-y");
        if (!package->registry_base_url.empty() && package->registry_base_url != "https://registry.npmjs.org") {
            launch.argv.push_back("--registry");
            launch.argv.push_back(package->registry_base_url);
        }
        launch.argv.insert(launch.argv.end(), runtime.begin(), runtime.end());
        launch.argv.push_back(package->version.empty() ? package->identifier
                                                       : package->identifier + "@" + package->version);
    } else if (type == "pypi") {
        launch.argv = {"uvx"};
        if (!package->registry_base_url.empty() && package->registry_base_url != "https://pypi.org") {
            launch.argv.push_back("--index-url");
            launch.argv.push_back(package->registry_base_url);
        }
        launch.argv.insert(launch.argv.end(), runtime.begin(), runtime.end());
        // uvx runs the package's command of the same name from the pinned release.
        launch.argv.push_back(package->version.empty() ? package->identifier
                                                       : package->identifier + "==" + package->version);
    } else {  // oci
        launch.argv = {config.installed("docker") ? "docker" : "podman", "run", "-i", "--rm"};
        launch.argv.insert(launch.argv.end(), runtime.begin(), runtime.end());
        // Each variable by name only: its value goes through the runner's environment,
        // never on a command line (ps shows those).
        for (const auto& [name, value] : launch.env) {
            launch.argv.push_back("-e");
            launch.argv.push_back(name);
        }
        launch.argv.push_back(package->identifier);
    }
    launch.argv.insert(launch.argv.end(), arguments.begin(), arguments.end());
    launch.transport = "stdio";
    launch.what = fmt::format("{} {}{}", type, package->identifier,
                              package->version.empty() ? "" : "@" + package->version);
    return launch;
}

}  // namespace toolport::registry
